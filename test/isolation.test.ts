import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { linkSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { makePng, rawRequest, upload } from './helpers/assets';
import { client, send, type HttpResponse } from './helpers/http';
import { fixture, LauncherClient, startLauncher } from './helpers/launcher';
import { tempDir, type TestService } from './helpers/service';
import { openSse } from './helpers/sse';
import { assertError } from './helpers/scenario';

/**
 * Isolation over HTTP (docs/security.md "Isolation"): table-driven from the route table the
 * running service publishes (GET /api/v1/openapi.json: every route with its
 * `x-capability`), so a route added later is covered without editing this file.
 *
 * Studio alpha (A) owns one of each thing (KV key, record, session, asset,
 * gallery item, job with a log, sequence); studio beta (B) tries every route on
 * them. For each route: B's token is 404 on A's thing, with the very answer a
 * thing that does not exist gets (so ids cannot be probed), and no answer
 * (body or header) holds any of A's names, values or ids that B did not send
 * itself; lists show B's own only; a token lacking the route's capability is
 * 403 `capability_required` naming it; the launcher credential on the studio
 * API and a studio token on /launcher are 401; a foreign Host, a foreign
 * Origin and `Sec-Fetch-Site: cross-site` are 403 `bad_origin`; a token in the
 * URL or the launcher cookie never authenticates a studio; form posts (the
 * three content types a page may send cross-site without a preflight) change
 * nothing. At the end A's things are exactly as they were.
 *
 * The Chromium side is test/browser-isolation.test.ts; adopt's path tricks are
 * in test/assets.test.ts, download and link paths in test/launcher-*.test.ts.
 */

const ALL_CAPS = ['kv', 'kv.shared', 'records', 'timeline', 'gallery', 'gallery.read_all', 'assets', 'jobs'];
const hex = () => randomBytes(4).toString('hex');

interface RouteRow {
  method: string;
  /** Under /api/v1, with `{param}` templates. */
  path: string;
  capability: string;
  /** The answer is an event stream (never read to its end here). */
  stream: boolean;
}

/** Names and values only A wrote: none may ever reach B, in any answer. */
const A = {
  key: `alpha-key-${hex()}`,
  value: `alpha-value-${hex()}`,
  collection: `alphacoll${hex()}`,
  recordField: `alpha-record-${hex()}`,
  sessionName: `alpha-session-${hex()}`,
  sessionState: `alpha-state-${hex()}`,
  filename: `alpha-asset-${hex()}.png`,
  title: `alpha-title-${hex()}`,
  tag: `alpha-tag-${hex()}`,
  jobTitle: `alpha-job-${hex()}`,
  logLine: `alpha-log-${hex()}`,
  sequence: `alpha-sequence-${hex()}`,
};

/** A's ids, filled by the fixture. */
const ids: Record<'record' | 'session' | 'asset' | 'sha256' | 'item' | 'job' | 'sequence' | 'handoff', string> = {
  handoff: '',
  record: '',
  session: '',
  asset: '',
  sha256: '',
  item: '',
  job: '',
  sequence: '',
};

/** Another id of the same shape (a ULID keeps its time part): one no studio has. */
function sameShape(id: string): string {
  const crockford = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  const keep = /^[0-9A-HJKMNP-TV-Z]{26}$/.test(id) ? 10 : 0;
  let out = id.slice(0, keep);
  for (const ch of id.slice(keep)) {
    const set = /[0-9a-f]/.test(ch) && !/[A-Z]/.test(id) ? '0123456789abcdef' : /[a-z]/.test(ch) ? 'abcdefghijklmnopqrstuvwxyz' : crockford;
    out += set[randomBytes(1)[0]! % set.length];
  }
  return out;
}

/** The id a route's `{id}` names, by the path it sits under. */
function idFor(path: string, values: typeof ids): string {
  if (path.startsWith('/records/')) return values.record;
  if (path.startsWith('/sessions/')) return values.session;
  if (path.startsWith('/assets/')) return values.asset;
  if (path.startsWith('/gallery/items/')) return values.item;
  if (path.startsWith('/jobs/')) return values.job;
  if (path.startsWith('/timeline/')) return values.sequence;
  if (path.startsWith('/launcher/studios/')) return 'alpha';
  if (path.startsWith('/launcher/assets/')) return values.asset;
  if (path.startsWith('/launcher/gallery/items/')) return values.item;
  if (path.startsWith('/launcher/timeline/') || path.startsWith('/launcher/timelines/')) return values.sequence;
  if (path.startsWith('/launcher/jobs/')) return '01ARZ3NDEKTSV4RRFFQ69G5FAV';
  if (path.startsWith('/handoffs/') || path.startsWith('/launcher/handoffs/')) return values.handoff;
  throw new Error(`no id for ${path}`);
}

/** The concrete path of a route on A's things (`values` may be A's ids or look-alikes, `key` A's key or another). */
function fill(route: RouteRow, values: typeof ids = ids, key = A.key, ns = 'notes'): string {
  return route.path
    .replace('{ns}', ns)
    .replace('{key}', encodeURIComponent(key))
    .replace('{collection}', A.collection)
    .replace('{job}', values.job)
    // A standing rule names two studios; A's handoff goes to gamma.
    .replace('{from}', 'alpha')
    .replace('{to}', 'gamma')
    .replace('{id}', () => idFor(route.path, values))
    // A media URL's path is its own credential: one of the right shape for A's asset, never minted.
    .replace('{token}', `${values.asset}.f.${Math.floor(Date.now() / 1000 + 300).toString(36)}.000000000000.${'A'.repeat(43)}`);
}

/**
 * A body of the right shape for each route that takes one (so a refusal is about
 * who asks, not about the body), naming A's things where the route takes a reference.
 */
function bodyFor(route: RouteRow): unknown {
  const k = `${route.method} ${route.path}`;
  const bodies: Record<string, unknown> = {
    'PUT /kv/{ns}/{key}': { by: 'beta' },
    'PATCH /kv/{ns}/{key}': { by: 'beta' },
    'POST /records/{collection}': { by: 'beta' },
    'PUT /records/{collection}/{id}': { by: 'beta' },
    'PATCH /records/{collection}/{id}': { by: 'beta' },
    'POST /sessions': { name: `beta-session-${hex()}`, state: {} },
    'PATCH /sessions/{id}': { state: { by: 'beta' } },
    'POST /sessions/{id}:duplicate': { name: `beta-copy-${hex()}` },
    'POST /assets:adopt': { path: '/nonexistent/x.bin', kind: 'other' },
    'POST /assets:reclaim': { asset_ids: [ids.asset] },
    'POST /gallery/items': { asset_id: ids.asset, title: 'beta names alpha asset' },
    'PATCH /gallery/items/{id}': { title: 'beta was here' },
    'POST /jobs': { title: `beta-job-${hex()}` },
    'PATCH /jobs/{id}': { progress_num: 1 },
    'POST /jobs/{id}/logs': { lines: ['beta was here'] },
    'POST /timeline': { name: `beta-seq-${hex()}`, clips: [{ asset_id: ids.asset }] },
    'PATCH /timeline/{id}': { name: 'beta was here' },
    'POST /timeline/{id}:revert': { revision: 1 },
    'POST /timeline/{id}:export': {},
    'POST /timeline:append': { asset_id: ids.asset, timeline_id: ids.sequence },
    'POST /handoffs': { to: 'gamma', asset_ids: [ids.asset], note: 'beta offers alpha asset' },
    'POST /handoffs/{id}:accept': {},
    'POST /launcher/handoffs/{id}:approve': {},
    'POST /launcher/assets:reclaim': {},
    'POST /launcher/studios:install': { source: '/nonexistent' },
    'POST /launcher/studios:link': { source: '/nonexistent' },
    'POST /launcher/studios/{id}:update': {},
    'POST /launcher/studios/{id}:uninstall': { confirm: true },
  };
  return bodies[k];
}

const isLauncher = (r: RouteRow) => r.capability === 'launcher';
/** A short-lived media URL's route: its path is its credential (docs/api.md §Media URLs); no header opens it. */
const isMedia = (r: RouteRow) => r.capability === 'media_url';
/** Routes that name one of A's things in their path (not only a namespace or collection name). */
const onAThing = (r: RouteRow) => /\{(key|id|job)\}/.test(r.path) && !isLauncher(r);

describe('isolation, table-driven from the route table', { timeout: 480_000 }, () => {
  let svc: TestService;
  let launcher: LauncherClient;
  let routes: RouteRow[] = [];
  const tokens: Record<string, string> = {};
  /** alpha's token without one capability, by that capability. */
  const lacking: Record<string, string> = {};
  /** What A's things were before B tried anything: each GET's status and body. */
  const before_: Map<string, string> = new Map();
  const thingReads = () => [
    `/kv/notes/${A.key}`,
    `/records/${A.collection}/${ids.record}`,
    `/sessions/${ids.session}`,
    `/assets/${ids.asset}/lineage`,
    `/gallery/items/${ids.item}`,
    `/jobs/${ids.job}`,
    `/timeline/${ids.sequence}`,
    `/timeline/${ids.sequence}/revisions`,
    `/handoffs/${ids.handoff}`,
  ];

  const send_ = (method: string, path: string, token: string | null, extra: { body?: unknown; headers?: Record<string, string | undefined>; raw?: string; contentType?: string } = {}) =>
    send(svc.port, { method, path: `/api/v1${path}`, token, body: extra.raw === undefined ? extra.body : undefined, raw: extra.raw, contentType: extra.contentType, headers: extra.headers });

  /** A request that must not open an event stream for long: event-stream routes are cut short after their headers. */
  async function call(route: RouteRow, path: string, token: string | null, headers: Record<string, string | undefined> = {}, body = bodyFor(route)): Promise<HttpResponse> {
    if (route.stream) {
      const r = await rawRequest(svc.port, { method: route.method, path: `/api/v1${path}`, token: token ?? undefined, headers: headers as Record<string, string> }).catch(() => null);
      assert.ok(r, `${route.method} ${path}: no answer`);
      return { status: r.status, headers: r.headers as HttpResponse['headers'], text: r.body.toString(), json: r.json };
    }
    return send_(route.method, path, token, { body, headers });
  }

  before(async () => {
    ({ svc, l: launcher } = await startLauncher());
    tokens.alpha = svc.studio('alpha', ALL_CAPS);
    tokens.beta = svc.studio('beta', ALL_CAPS.filter((c) => c !== 'gallery.read_all'));
    tokens.betaAll = svc.token('beta', ALL_CAPS);
    for (const cap of ALL_CAPS) lacking[cap] = svc.token('alpha', ALL_CAPS.filter((c) => c !== cap));

    const openapi = await send(svc.port, { path: '/api/v1/openapi.json' });
    assert.equal(openapi.status, 200);
    for (const [path, methods] of Object.entries(openapi.json.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(methods)) {
        const stream = Object.keys(op.responses?.['200']?.content ?? {}).includes('text/event-stream');
        routes.push({ method: method.toUpperCase(), path, capability: op['x-capability'], stream });
      }
    }
    routes = routes.sort((a, b) => `${a.path} ${a.method}`.localeCompare(`${b.path} ${b.method}`));

    // A's things, one of each.
    const a = client(svc.port, tokens.alpha);
    assert.equal((await a.put(`/kv/notes/${A.key}`, { secret: A.value })).status, 200);
    const record = await a.post(`/records/${A.collection}`, { field: A.recordField });
    assert.equal(record.status, 201, record.text);
    ids.record = record.json.id;
    const session = await a.post('/sessions', { name: A.sessionName, state: { s: A.sessionState } });
    assert.equal(session.status, 201, session.text);
    ids.session = session.json.id;
    const asset = await upload(svc.port, tokens.alpha, await makePng(16, 16, 7), `kind=image&filename=${A.filename}`, 'image/png');
    assert.equal(asset.status, 201, asset.body.toString());
    ids.asset = asset.json.id;
    ids.sha256 = asset.json.sha256;
    const item = await a.post('/gallery/items', { asset_id: ids.asset, title: A.title, tags: [A.tag] });
    assert.equal(item.status, 201, item.text);
    ids.item = item.json.id;
    const job = await a.post('/jobs', { title: A.jobTitle });
    assert.equal(job.status, 201, job.text);
    ids.job = job.json.id;
    assert.equal((await a.post(`/jobs/${ids.job}/logs`, { lines: [A.logLine] })).status, 204);
    const seq = await a.post('/timeline', { name: A.sequence, clips: [{ asset_id: ids.asset, duration: 1 }] });
    assert.equal(seq.status, 201, seq.text);
    ids.sequence = seq.json.id;
    // A handoff from A to an installed studio that accepts images, waiting for the user.
    await launcher.installOk(fixture({ id: 'gamma', capabilities: ['assets'], accepts: { kinds: ['image'] } }));
    const handoff = await a.post('/handoffs', { to: 'gamma', asset_ids: [ids.asset], note: A.title });
    assert.equal(handoff.status, 201, handoff.text);
    ids.handoff = handoff.json.id;

    for (const path of thingReads()) {
      const r = await a.get(path);
      assert.equal(r.status, 200, `${path}: ${r.text}`);
      before_.set(path, r.text);
    }
  }, { timeout: 180_000 });

  after(async () => {
    await svc?.stop();
  }, { timeout: 30_000 });

  /** What of A's must never be in an answer to B: every name and value, and the ids B did not send itself. */
  function assertNothingOfA(r: HttpResponse, sent: string, what: string): void {
    const secrets = [...Object.values(A).filter((s) => s !== A.collection && s !== A.key), ...Object.values(ids).filter((id) => !sent.includes(id))];
    if (!sent.includes(A.key)) secrets.push(A.key);
    const headers = JSON.stringify(r.headers);
    for (const s of secrets) {
      assert.ok(!r.text.includes(s), `${what}: the body holds A's ${s}: ${r.text.slice(0, 300)}`);
      assert.ok(!headers.includes(s), `${what}: a header holds A's ${s}: ${headers}`);
    }
  }

  /** Status, code, message and details with the ids of the request written as ID; headers by name. */
  function shape(r: HttpResponse, idsSent: string[]): string {
    let text = r.text;
    for (const id of idsSent) text = text.split(id).join('ID').split(encodeURIComponent(id)).join('ID');
    const names = Object.keys(r.headers)
      .filter((h) => !['x-request-id', 'date', 'content-length'].includes(h))
      .sort()
      .map((h) => `${h}: ${h === 'etag' ? '' : String(r.headers[h])}`);
    return JSON.stringify({ status: r.status, text, names });
  }

  test('the route table is all here: every route is tried below', () => {
    assert.ok(routes.length >= 60, `only ${routes.length} routes`);
    const caps = new Set(routes.map((r) => r.capability));
    for (const c of ['kv', 'records', 'timeline', 'gallery', 'assets', 'jobs', 'launcher']) assert.ok(caps.has(c), c);
    // Every route with a body named in bodyFor takes one (a renamed route would fall out of this table).
    for (const r of routes.filter(onAThing)) assert.doesNotThrow(() => fill(r), `${r.method} ${r.path}`);
  });

  test("B on A's things: 404, the same answer as for a thing that does not exist, nothing of A's in it", async () => {
    const checked: string[] = [];
    // Creates that make B's own thing under a name A also uses run last (PUT of a key), so that
    // every read before them still finds nothing of B's under A's names.
    const order = routes.filter(onAThing).sort((x, y) => Number(x.method === 'PUT' && x.path.startsWith('/kv/')) - Number(y.method === 'PUT' && y.path.startsWith('/kv/')));
    for (const route of order) {
      const path = fill(route);
      const r = await call(route, path, tokens.beta);
      const what = `beta ${route.method} ${path}`;
      assertNothingOfA(r, path + JSON.stringify(bodyFor(route) ?? ''), what);
      if (route.method === 'PUT' && route.path === '/kv/{ns}/{key}') {
        // Keys are per studio: B writes a key of its own under that name, A's is untouched (checked at the end).
        assert.equal(r.status, 200, `${what}: ${r.text}`);
        assert.deepEqual(r.json.value, { by: 'beta' });
        const mine = await call({ ...route, method: 'DELETE' }, path, tokens.beta);
        assert.equal(mine.status, 204, mine.text);
        const theirs = await client(svc.port, tokens.alpha).get(`/kv/notes/${A.key}`);
        assert.deepEqual(theirs.json.value, { secret: A.value });
        continue;
      }
      assert.equal(r.status, 404, `${what}: ${r.status} ${r.text}`);
      assert.equal(r.json.code, 'not_found', what);
      // The same route on look-alike ids (and another key name): the same answer, ids aside.
      const fake = Object.fromEntries(Object.entries(ids).map(([k, v]) => [k, sameShape(v)])) as typeof ids;
      const fakeKey = `alpha-key-${hex()}`;
      const fakePath = fill(route, fake, fakeKey);
      const f = await call(route, fakePath, tokens.beta);
      assert.equal(
        shape(r, [...Object.values(ids), A.key]),
        shape(f, [...Object.values(fake), fakeKey]),
        `${what}: A's thing is told apart from a missing one`,
      );
      checked.push(`${route.method} ${route.path}`);
    }
    assert.ok(checked.length >= 30, `only ${checked.length}: ${checked.join(', ')}`);
  });

  test("B's lists and creates: 2xx on B's own, never one of A's things; references to A's things are 404 or 422 like missing ones", async () => {
    const rows = routes.filter((r) => !onAThing(r) && !isLauncher(r) && !isMedia(r) && !r.stream);
    assert.ok(rows.length >= 12, rows.map((r) => r.path).join());
    for (const route of rows) {
      const path = fill(route);
      const body = bodyFor(route);
      let r: HttpResponse;
      if (route.path === '/assets') {
        const up = await upload(svc.port, tokens.beta, await makePng(16, 16, 99), 'kind=image&filename=beta.png', 'image/png');
        r = { status: up.status, headers: up.headers as HttpResponse['headers'], text: up.body.toString(), json: up.json };
      } else {
        r = await call(route, path, tokens.beta);
      }
      const what = `beta ${route.method} ${path} ${JSON.stringify(body ?? '')}`;
      assertNothingOfA(r, path + JSON.stringify(body ?? ''), what);
      assert.ok(r.status < 500, `${what}: ${r.status} ${r.text}`);
      if (route.method === 'GET') assert.equal(r.status, 200, `${what}: ${r.text}`);
      // A body naming A's asset or sequence: refused exactly as a missing one is.
      const named = JSON.stringify(body ?? '');
      if (named.includes(ids.asset) || named.includes(ids.sequence)) {
        assert.ok([404, 409, 422].includes(r.status), `${what}: ${r.status} ${r.text}`);
        const fakeBody = JSON.parse(named.split(ids.asset).join(sameShape(ids.asset)).split(ids.sequence).join(sameShape(ids.sequence)));
        const f = await call(route, path, tokens.beta, {}, fakeBody);
        const strip = (x: HttpResponse, body: string) => {
          const j = x.json ?? {};
          // reclaim's preview token is bound to its input: compare the sets it names
          return JSON.stringify({ s: x.status, c: j.code, m: String(j.message ?? '').replace(/[0-9A-HJKMNP-TV-Z]{26}/g, 'ID'), a: j.assets, i: j.items, b: j.bytes, body: body.length > 0 });
        };
        assert.equal(strip(r, named), strip(f, named), `${what}: A's thing told apart from a missing one`);
      }
    }
    // Bodies that name A's things among B's own: each refused exactly as a missing thing is.
    const own = await upload(svc.port, tokens.beta, await makePng(16, 16, 98), 'kind=image&filename=beta2.png', 'image/png');
    assert.equal(own.status, 201);
    const references: [string, string, (x: typeof ids) => unknown][] = [
      ['POST', '/gallery/items', (x) => ({ asset_id: own.json.id, inputs: [{ asset_id: x.asset, role: 'source' }] })],
      ['POST', '/gallery/items', (x) => ({ asset_id: own.json.id, session_id: x.session })],
      ['POST', '/timeline', (x) => ({ name: 'beta', tracks: { V1: [{ asset_id: x.asset, start: 0, duration: 1 }] } })],
      ['POST', '/timeline:append', (x) => ({ asset_id: own.json.id, timeline_id: x.sequence })],
      ['POST', '/assets:reclaim', (x) => ({ asset_ids: [x.asset, own.json.id] })],
    ];
    for (const [method, path, body] of references) {
      const fake = Object.fromEntries(Object.entries(ids).map(([k, v]) => [k, sameShape(v)])) as typeof ids;
      const r = await send_(method, path, tokens.beta, { body: body(ids) });
      const f = await send_(method, path, tokens.beta, { body: body(fake) });
      const what = `beta ${method} ${path} ${JSON.stringify(body(ids))}`;
      assert.ok(r.status >= 400 && r.status < 500, `${what}: ${r.status} ${r.text}`);
      assertNothingOfA(r, JSON.stringify(body(ids)), what);
      assert.equal(shape(r, Object.values(ids)), shape(f, Object.values(fake)), `${what}: A's thing told apart from a missing one`);
    }
    // Reclaim by B never lists A's asset (it is not B's to reclaim), not even named.
    const reclaim = await client(svc.port, tokens.beta).post('/assets:reclaim', {});
    assert.equal(reclaim.status, 200, reclaim.text);
    assertNothingOfA(reclaim, '', 'beta reclaim preview');
  });

  test("B's /events never carries an event about A's things", async () => {
    const b = await openSse(svc.port, '/events', tokens.beta);
    const a = await openSse(svc.port, '/events', tokens.alpha);
    try {
      assert.equal(b.status, 200);
      assert.equal(a.status, 200);
      const mark = `alpha-progress-${hex()}`;
      const r = await client(svc.port, tokens.alpha).patch(`/jobs/${ids.job}`, { title: mark });
      assert.equal(r.status, 200, r.text);
      // A B job after A's: once B sees its own, A's (earlier) has been dispatched to everyone it goes to.
      const own = await client(svc.port, tokens.beta).post('/jobs', { title: `beta-marker-${hex()}` });
      assert.equal(own.status, 201, own.text);
      before_.set(`/jobs/${ids.job}`, r.text);
      await a.waitFor((m) => m.data.includes(mark), 1, 15_000);
      await b.waitFor((m) => m.data.includes(own.json.id), 1, 15_000);
      for (const m of b.events) {
        for (const s of [mark, ids.job, A.jobTitle, ...Object.values(A)]) assert.ok(!m.data.includes(s), `B's stream: ${m.data}`);
      }
    } finally {
      a.close();
      b.close();
    }
  });

  test('with gallery.read_all B reads what the docs list, and every write to A\'s things is still 404', async () => {
    // (KV keys are per studio and not read_all's business: B has a key of its own by A's key's name by now.)
    for (const route of routes.filter((r) => onAThing(r) && r.method !== 'GET' && !r.path.startsWith('/kv/'))) {
      const path = fill(route);
      const r = await call(route, path, tokens.betaAll);
      assert.equal(r.status, 404, `betaAll ${route.method} ${path}: ${r.status} ${r.text}`);
    }
    // The documented reads of another studio's items and sequences (docs/api.md, gallery and timeline).
    const b = client(svc.port, tokens.betaAll);
    assert.equal((await b.get(`/gallery/items/${ids.item}`)).status, 200);
    assert.equal((await b.get(`/timeline/${ids.sequence}`)).status, 200);
    const all = await b.get('/gallery/items?scope=all');
    assert.equal(all.status, 200);
    assert.ok(all.text.includes(ids.item));
    // Never its private documents.
    for (const path of [`/kv/notes/${A.key}`, `/records/${A.collection}/${ids.record}`, `/sessions/${ids.session}`, `/jobs/${ids.job}`]) {
      assert.equal((await b.get(path)).status, 404, path);
    }
  });

  test("a token lacking the route's capability: 403 capability_required naming it, before anything else", async () => {
    let n = 0;
    for (const route of routes.filter((r) => !isLauncher(r) && !isMedia(r))) {
      const path = fill(route);
      const r = await call(route, path, lacking[route.capability]!);
      const what = `${route.method} ${path} without ${route.capability}`;
      assert.equal(r.status, 403, `${what}: ${r.status} ${r.text}`);
      assert.equal(r.json.code, 'capability_required', what);
      assert.deepEqual(r.json.details, { capability: route.capability }, what);
      assert.match(r.json.message, new RegExp(route.capability.replace('.', '\\.')), what);
      n++;
    }
    assert.ok(n >= 45);
    // The request-dependent ones: the shared namespace needs kv.shared, scope=all needs gallery.read_all.
    for (const route of routes.filter((r) => r.path.startsWith('/kv/'))) {
      const r = await call(route, fill(route, ids, 'k', 'shared'), lacking['kv.shared']!);
      assert.equal(r.status, 403, `${route.method} shared: ${r.text}`);
      assert.deepEqual(r.json.details, { capability: 'kv.shared' });
    }
    const all = await send_('GET', '/gallery/items?scope=all', lacking['gallery.read_all']!);
    assert.equal(all.status, 403);
    assert.deepEqual(all.json.details, { capability: 'gallery.read_all' });
  });

  test('the launcher credential on every studio route is 401; a studio token (or none) on every launcher route is 401', async () => {
    for (const route of routes) {
      const path = fill(route);
      const wrong = isLauncher(route) ? [tokens.alpha, null, `bl_launcher_${randomBytes(32).toString('base64url')}`] : [launcher.cred, null, `blt_${randomBytes(32).toString('base64url')}`];
      for (const token of wrong) {
        const r = await call(route, path, token);
        assert.equal(r.status, 401, `${route.method} ${path} with ${token?.slice(0, 12)}: ${r.status} ${r.text}`);
        assert.equal(r.json.code, 'unauthenticated');
        assertNothingOfA(r, path, `${route.method} ${path}`);
      }
    }
  });

  test('a token in the URL or a cookie never authenticates; the launcher cookie never opens the studio API', async () => {
    for (const route of routes) {
      const cred = isLauncher(route) ? launcher.cred : tokens.alpha;
      const path = fill(route);
      const sep = path.includes('?') ? '&' : '?';
      for (const q of ['token', 'access_token', 'auth', 'bearer']) {
        const r = await call(route, `${path}${sep}${q}=${encodeURIComponent(cred)}`, null);
        assert.equal(r.status, 401, `${route.method} ${path} ?${q}=: ${r.status} ${r.text}`);
      }
      // The cookie is the launcher's; on the studio API it is nothing, whatever it holds.
      if (!isLauncher(route)) {
        for (const value of [launcher.cred, tokens.alpha]) {
          const r = await call(route, path, null, { Cookie: `backlot_launcher=${value}` });
          assert.equal(r.status, 401, `${route.method} ${path} with a cookie: ${r.status} ${r.text}`);
        }
      } else {
        const r = await call(route, path, null, { Cookie: `backlot_launcher=${tokens.alpha}` });
        assert.equal(r.status, 401, `${route.method} ${path} with a studio token as the cookie: ${r.text}`);
      }
    }
  });

  test('DNS rebinding, foreign Origin, Sec-Fetch-Site: cross-site: 403 bad_origin on every route, with a valid credential', async () => {
    const variants: [string, Record<string, string>][] = [
      ['rebound Host', { Host: `evil.example:${svc.port}` }],
      ['rebound Host with the service port and a studio-like name', { Host: `alpha.localhost.evil.example:${svc.port}` }],
      ['Host on another port', { Host: `127.0.0.1:${svc.port + 1}` }],
      ['foreign Origin', { Origin: 'http://evil.example' }],
      ['null Origin', { Origin: 'null' }],
      ['Origin = rebound Host', { Host: `evil.example:${svc.port}`, Origin: `http://evil.example:${svc.port}` }],
      ['https Origin of ours', { Origin: `https://127.0.0.1:${svc.port}` }],
      ['Sec-Fetch-Site: cross-site', { 'Sec-Fetch-Site': 'cross-site' }],
      ['cross-site navigation to the API', { 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'navigate' }],
    ];
    for (const route of routes) {
      const path = fill(route);
      const cred = isLauncher(route) ? launcher.cred : tokens.alpha;
      for (const [name, headers] of variants) {
        const r = await call(route, path, cred, headers);
        assert.equal(r.status, 403, `${route.method} ${path} ${name}: ${r.status} ${r.text}`);
        assert.equal(r.json.code, 'bad_origin', `${name}`);
        assert.equal(r.headers['access-control-allow-origin'], undefined);
      }
      if (isLauncher(route) || isMedia(route)) {
        // The user's side: a studio's page (same-site to localhost) is refused too, cookie or header.
        for (const headers of [{ 'Sec-Fetch-Site': 'same-site' }, { Origin: `http://alpha.localhost:${svc.port}` }, { Host: `alpha.localhost:${svc.port}` }]) {
          const r = await call(route, path, cred, headers);
          assert.equal(r.status, 403, `${route.method} ${path} ${JSON.stringify(headers)}: ${r.status}`);
          assert.equal(r.json.code, 'bad_origin');
        }
      }
    }
    // The pages and the editor channel.
    for (const path of ['/', '/login?code=x', '/editor/events', '/api/v1/openapi.json']) {
      for (const [name, headers] of variants) {
        const r = await send(svc.port, { path, token: launcher.cred, headers });
        assert.equal(r.status, 403, `${path} ${name}: ${r.status}`);
      }
    }
  });

  test('form posts (urlencoded, multipart, text/plain) change nothing: the JSON routes refuse them, the launcher refuses the cross-site ones', async () => {
    const forms: [string, string][] = [
      ['application/x-www-form-urlencoded', 'value=1&title=form'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="title"\r\n\r\nform\r\n--x--\r\n'],
      ['text/plain', '{"title":"form","name":"form","value":{"a":1},"lines":["form"],"confirm":true,"source":"/tmp"}'],
    ];
    let n = 0;
    // Only a handoff's recipient may accept it, once the user approved it: gamma, on one approved for it.
    const gamma = svc.token('gamma', ['assets']);
    const offered = await send_('POST', '/handoffs', tokens.alpha, { body: { to: 'gamma', asset_ids: [ids.asset], item_id: ids.item, note: 'to accept' } });
    assert.equal(offered.status, 201, offered.text);
    assert.equal((await launcher.post(`/launcher/handoffs/${offered.json.id}:approve`, {})).status, 200);
    for (const route of routes.filter((r) => r.method !== 'GET' && bodyFor(r) !== undefined)) {
      const accept = route.path === '/handoffs/{id}:accept';
      const own = accept ? { ...ids, handoff: offered.json.id } : { ...ids };
      const path = fill(route, own);
      const cred = isLauncher(route) ? launcher.cred : accept ? gamma : tokens.alpha;
      for (const [type, raw] of forms) {
        const r = await send_(route.method, path, cred, { raw, contentType: type });
        const what = `${route.method} ${path} as ${type}`;
        // 404 for a launcher route on a thing that does not exist; else the body's media type is refused.
        if (r.status === 404 && isLauncher(route)) continue;
        assert.equal(r.status, 400, `${what}: ${r.status} ${r.text}`);
        assert.equal(r.json.code, 'bad_request', what);
        n++;
      }
    }
    assert.ok(n >= 60, `${n}`);
    // What a browser sends for a cross-site form: the cookie (were it sent), Origin and Sec-Fetch-Site.
    for (const route of routes.filter((r) => isLauncher(r) && r.method === 'POST')) {
      const path = fill(route);
      for (const headers of [
        { Origin: 'http://evil.example', 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'navigate' },
        { Origin: 'null' },
        { 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'navigate', 'Sec-Fetch-Dest': 'document' },
      ]) {
        const r = await send_(route.method, path, null, {
          raw: 'confirm=true',
          contentType: 'application/x-www-form-urlencoded',
          headers: { ...headers, Cookie: `backlot_launcher=${launcher.cred}` },
        });
        assert.equal(r.status, 403, `${route.method} ${path} ${JSON.stringify(headers)}: ${r.status} ${r.text}`);
        assert.equal(r.json.code, 'bad_origin');
      }
    }
  });

  test('a media URL route: no header or cookie opens it; minted by the launcher for A\'s asset it reads that asset only, on the service origin only', async () => {
    const media = routes.filter(isMedia);
    assert.ok(media.length >= 1, 'the media URL route is in the table');
    for (const route of media) {
      assert.equal(route.method, 'GET', 'read only');
      for (const token of [tokens.alpha, tokens.beta, launcher.cred, null]) {
        const r = await call(route, fill(route), token, { Cookie: `backlot_launcher=${launcher.cred}` });
        assert.equal(r.status, 401, `${route.path} with ${token?.slice(0, 12)}: ${r.status} ${r.text}`);
        assertNothingOfA(r, fill(route), route.path);
      }
    }
    const minted = await launcher.post('/launcher/media-urls', { assets: [{ id: ids.asset, variant: 'file' }] });
    assert.equal(minted.status, 200, minted.text);
    const url = minted.json.items[0].url as string;
    assert.equal((await send(svc.port, { path: url })).status, 200);
    for (const method of ['PUT', 'PATCH', 'DELETE', 'POST']) {
      const r = await send(svc.port, { method, path: url, body: {} });
      assert.ok(r.status === 404 || r.status === 401, `${method}: ${r.status}`);
    }
    for (const headers of [{ Host: `alpha.localhost:${svc.port}` }, { Origin: `http://beta.localhost:${svc.port}` }]) {
      assertError(await send(svc.port, { path: url, headers }), 403, 'bad_origin');
    }
  });

  test("A's things are exactly as they were, and B's lists never showed them", async () => {
    const a = client(svc.port, tokens.alpha);
    for (const [path, text] of before_) {
      const r = await a.get(path);
      assert.equal(r.status, 200, path);
      assert.equal(r.text, text, `${path} changed`);
    }
    const log = await openSse(svc.port, `/jobs/${ids.job}/logs`, tokens.alpha);
    try {
      await log.waitFor((m) => m.data.includes(A.logLine), 1, 15_000);
      assert.ok(!log.events.some((m) => m.data.includes('beta was here') || m.data.includes('form')), JSON.stringify(log.events));
    } finally {
      log.close();
    }
    const asset = await a.get(`/assets/${ids.asset}`);
    assert.equal(asset.status, 200);
    // B's own lists, once more, after everything.
    const b = client(svc.port, tokens.beta);
    for (const path of ['/kv/notes', `/records/${A.collection}`, '/sessions', '/gallery/items', '/jobs', '/timeline', '/timeline?limit=500']) {
      const r = await b.get(path);
      assert.equal(r.status, 200, `${path}: ${r.text}`);
      assertNothingOfA(r, A.key, `beta list ${path}`);
    }
  });

  test("adopt's gaps: a hard link to a file outside the roots, another studio's library and data folder, a data folder that is a symlink", async () => {
    const folder = (id: string, which: 'stage' | 'data') => join(svc.dataDir, 'studios', id, which);
    const adopt = (body: unknown) => send_('POST', '/assets:adopt', tokens.beta, { body });
    const expect422 = async (body: { path: string }, what: string) => {
      const r = await adopt({ kind: 'other', ...body });
      assert.equal(r.status, 422, `${what}: ${r.status} ${r.text}`);
      assert.equal(r.json.code, 'outside_roots', what);
      assertNothingOfA(r, body.path, what);
    };
    // The user's file, hard-linked into B's stage (a studio's program can do that): adopting it would
    // make the user's file read-only and a blob. Refused, the file as it was (a bug found in review).
    const outside = tempDir('backlot-outside-');
    const userFile = join(outside, 'notes.txt');
    writeFileSync(userFile, `the user's own ${hex()}`, { mode: 0o644 });
    const staged = join(folder('beta', 'stage'), 'linked.txt');
    linkSync(userFile, staged);
    await expect422({ path: staged }, 'a hard link in the stage');
    assert.equal(statSync(userFile).mode & 0o777, 0o644, "the user's file keeps its mode");
    assert.equal(statSync(userFile).nlink, 2, 'no link was added to the blob store');
    const dataLinked = join(folder('beta', 'data'), 'linked.txt');
    linkSync(userFile, dataLinked);
    await expect422({ path: dataLinked }, 'a hard link in the data folder');
    assert.equal(statSync(userFile).mode & 0o777, 0o644);
    // The same with bytes already stored: nothing is installed, the file is left alone (200, as for any stored bytes).
    const stored = join(outside, 'stored.png');
    writeFileSync(stored, await makePng(16, 16, 99), { mode: 0o644 });
    const storedLink = join(folder('beta', 'data'), 'stored.png');
    linkSync(stored, storedLink);
    const again = await adopt({ path: storedLink, kind: 'image' });
    assert.equal(again.status, 200, again.text);
    assert.equal(statSync(stored).mode & 0o777, 0o644);
    rmSync(outside, { recursive: true, force: true });

    // A's library file, A's data folder, absolute and through `..`.
    const library = join(svc.dataDir, 'library', 'alpha');
    const aFile = readdirSync(library)[0]!;
    writeFileSync(join(folder('alpha', 'data'), 'private.bin'), 'alpha data');
    await expect422({ path: join(library, aFile) }, "A's library file");
    await expect422({ path: `${folder('beta', 'data')}/../../../library/alpha/${aFile}` }, "A's library file through ..");
    await expect422({ path: join(folder('alpha', 'data'), 'private.bin') }, "A's data folder");
    await expect422({ path: `${folder('beta', 'stage')}/../../alpha/data/private.bin` }, "A's data folder through ..");
    await expect422({ path: `/proc/self/cwd/${folder('alpha', 'data').slice(1)}/private.bin` }, 'through /proc/self/cwd');
    await expect422({ path: join(svc.dataDir, 'backlot.db') }, 'the database');
    // B's data folder replaced by a symlink to A's: nothing through it.
    rmSync(folder('beta', 'data'), { recursive: true, force: true });
    symlinkSync(folder('alpha', 'data'), folder('beta', 'data'));
    await expect422({ path: join(folder('beta', 'data'), 'private.bin') }, 'a data folder that is a symlink to A\'s');
  });

  test('a download into a folder that an install step made a symlink to outside the app folder: the job fails, nothing is written outside', async () => {
    const outside = tempDir('backlot-outside-');
    const payload = randomBytes(2000);
    const dir = fixture(
      {
        id: 'sneaky',
        install: [{ name: 'sneak', run: 'node mk.js' }],
        download: [{ url: 'file:payload.bin', sha256: createHash('sha256').update(payload).digest('hex'), to: 'models/deep/payload.bin' }],
      },
      { 'mk.js': `require('node:fs').symlinkSync(${JSON.stringify(outside)}, 'models');`, 'payload.bin': payload },
    );
    const { res, studio } = await launcher.install(dir);
    assert.equal(res.status, 202, res.text);
    const jobs = await launcher.jobsOf(studio.id);
    const download = jobs.find((j) => j.kind === 'download');
    assert.ok(download, JSON.stringify(jobs));
    const done = await launcher.waitJob(download.id);
    assert.equal(done.state, 'failed', JSON.stringify(done));
    assert.match(JSON.stringify(done), /symlink|symbolic link/i);
    assert.deepEqual(readdirSync(outside), [], 'nothing written outside');
    rmSync(outside, { recursive: true, force: true });
  });

  test('Range offsets: negative, huge, overflowing, several, suffix past the size; never bytes of another studio', async () => {
    const png = (await send(svc.port, { path: `/api/v1/assets/${ids.asset}`, token: tokens.alpha })).text;
    assert.ok(png.length > 0);
    const size = Number((await rawRequest(svc.port, { method: 'HEAD', path: `/api/v1/assets/${ids.asset}`, token: tokens.alpha })).headers['content-length']);
    const rows: [string, number, string?][] = [
      ['bytes=-5-10', 200],
      ['bytes=5-2', 200],
      ['bytes=--1', 200],
      ['bytes=-', 200],
      ['bytes=0-1,3-4,6-7', 200],
      [`bytes=${'9'.repeat(40)}-`, 416],
      [`bytes=0-${'9'.repeat(40)}`, 206, `bytes 0-${size - 1}/${size}`],
      ['bytes=18446744073709551616-18446744073709551617', 416],
      ['bytes=9007199254740993-', 416],
      [`bytes=-${'9'.repeat(40)}`, 206, `bytes 0-${size - 1}/${size}`],
      [`bytes=-${size + 1000}`, 206, `bytes 0-${size - 1}/${size}`],
      ['bytes=-0', 416],
      ['bytes=0x10-0x20', 200],
      ['bytes=1e3-', 200],
      ['bytes= 1 - 2 ', 200],
      ['items=0-1', 200],
    ];
    for (const [range, status, contentRange] of rows) {
      const r = await rawRequest(svc.port, { path: `/api/v1/assets/${ids.asset}`, token: tokens.alpha, headers: { Range: range } });
      assert.equal(r.status, status, `${range}: ${r.status} ${r.body.toString().slice(0, 200)}`);
      if (status === 416) {
        assert.equal(r.headers['content-range'], `bytes */${size}`, range);
        assert.equal(r.json.code, 'range_not_satisfiable');
      } else if (status === 206) {
        assert.equal(r.headers['content-range'], contentRange, range);
        assert.equal(r.body.length, size, range);
      } else {
        assert.equal(r.body.length, size, range);
      }
      // B with the same Range: 404, the range is never looked at.
      const b = await rawRequest(svc.port, { path: `/api/v1/assets/${ids.asset}`, token: tokens.beta, headers: { Range: range } });
      assert.equal(b.status, 404, range);
      assert.equal(b.headers['content-range'], undefined, range);
    }
  });
});
