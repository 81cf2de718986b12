import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { TIMELINE_SQL } from '../service/timeline';
import { client, send } from './helpers/http';
import { assertError } from './helpers/scenario';
import { startService, type TestService } from './helpers/service';
import { openSse, type SseConnection } from './helpers/sse';
import { assertTimeline, MERGE, newAsset, UNKNOWN_ID } from './helpers/timeline';

/**
 * The user's side of sequences (docs/api.md §Launcher "Sequences"): every
 * studio's live sequences under GET /launcher/timelines (most recently written
 * first, `studio` and `q` filters, cursor pages bound to the filter), and
 * POST /launcher/timelines/{id}:open, which shows any of them on the editor
 * page (501 with none connected) and from then on lets /launcher/timeline/{id}
 * serve it acting as its studio. Real service, real HTTP.
 */

type Client = ReturnType<typeof client>;
let svc: TestService;
let cred: string;
let l: Client;
let alpha: Client;
let beta: Client;
let alphaToken: string;
const seqs: Record<string, any> = {};

before(async () => {
  svc = await startService();
  const r = svc.cli(['launcher-token']);
  assert.equal(r.code, 0, r.stderr);
  cred = r.stdout.trim();
  l = client(svc.port, cred);
  alphaToken = svc.studio('alpha', ['assets', 'timeline']);
  const betaToken = svc.studio('beta', ['assets', 'timeline']);
  alpha = client(svc.port, alphaToken);
  beta = client(svc.port, betaToken);
  const pic = await newAsset(svc.port, alphaToken, 'image');
  // Written in this order; then the first is written again, so it is the most recent.
  seqs.a1 = assertTimeline(await alpha.post('/timeline', { name: 'Alpha trailer', clips: [{ asset_id: pic.id }] }), 201);
  seqs.b1 = assertTimeline(await beta.post('/timeline', { name: 'Beta teaser' }), 201);
  seqs.a2 = assertTimeline(await alpha.post('/timeline', { name: 'alpha CUT two' }), 201);
  seqs.gone = assertTimeline(await beta.post('/timeline', { name: 'Beta deleted' }), 201);
  assert.equal((await beta.delete(`/timeline/${seqs.gone.id}`)).status, 204);
  seqs.a1 = assertTimeline(await alpha.patch(`/timeline/${seqs.a1.id}`, { name: 'Alpha trailer v2' }, { 'Content-Type': MERGE, 'If-Match': '"1"' }), 200);
});

after(async () => {
  await svc?.stop();
});

const idsOf = (page: { items: { id: string }[] }) => page.items.map((t) => t.id);

describe('GET /launcher/timelines', () => {
  test("every studio's live sequences with studio_id, the most recently written first; deleted ones are not listed", async () => {
    const res = await l.get('/launcher/timelines');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(idsOf(res.json), [seqs.a1.id, seqs.a2.id, seqs.b1.id]);
    assert.deepEqual(res.json.items.map((t: any) => t.studio_id), ['alpha', 'alpha', 'beta']);
    assert.equal(res.json.next_cursor, null);
    // Each item is the Timeline as its studio reads it.
    assert.deepEqual(res.json.items[0], (await alpha.get(`/timeline/${seqs.a1.id}`)).json);
  });

  test('filters: studio, q (a part of the name, any case), both', async () => {
    assert.deepEqual(idsOf((await l.get('/launcher/timelines?studio=beta')).json), [seqs.b1.id]);
    assert.deepEqual(idsOf((await l.get('/launcher/timelines?q=cut')).json), [seqs.a2.id]);
    assert.deepEqual(idsOf((await l.get('/launcher/timelines?q=ALPHA')).json), [seqs.a1.id, seqs.a2.id]);
    assert.deepEqual(idsOf((await l.get('/launcher/timelines?studio=beta&q=alpha')).json), []);
    assert.deepEqual(idsOf((await l.get('/launcher/timelines?studio=nobody')).json), []);
  });

  test('cursor pages walk the list once, in order; a cursor is bound to its filter', async () => {
    const first = await l.get('/launcher/timelines?limit=1');
    assert.equal(first.status, 200, first.text);
    const seen = [...idsOf(first.json)];
    let cursor = first.json.next_cursor as string | null;
    assert.ok(cursor);
    while (cursor) {
      const next = await l.get(`/launcher/timelines?limit=1&cursor=${encodeURIComponent(cursor)}`);
      assert.equal(next.status, 200, next.text);
      seen.push(...idsOf(next.json));
      cursor = next.json.next_cursor;
    }
    assert.deepEqual(seen, [seqs.a1.id, seqs.a2.id, seqs.b1.id]);
    assertError(await l.get(`/launcher/timelines?limit=1&studio=alpha&cursor=${encodeURIComponent(first.json.next_cursor)}`), 400, 'bad_cursor');
  });

  const bad: [string, string][] = [
    ['a studio id that cannot be one', 'studio=Not_A_Studio'],
    ['an empty q', 'q='],
    ['a q past 200 characters', `q=${'x'.repeat(201)}`],
    ['limit 0', 'limit=0'],
    ['limit not a number', 'limit=many'],
    ['an unknown member', 'scope=all'],
  ];
  for (const [name, query] of bad) {
    test(`400 bad_request: ${name}`, async () => {
      assertError(await l.get(`/launcher/timelines?${query}`), 400, 'bad_request');
    });
  }

  test('a garbled cursor is 400 bad_cursor', async () => {
    assertError(await l.get('/launcher/timelines?cursor=nonsense'), 400, 'bad_cursor');
  });

  test('a studio token (or none) is 401; another origin is 403 bad_origin', async () => {
    assertError(await send(svc.port, { path: '/api/v1/launcher/timelines', token: alphaToken }), 401, 'unauthenticated');
    assertError(await send(svc.port, { path: '/api/v1/launcher/timelines' }), 401, 'unauthenticated');
    assertError(await send(svc.port, { path: '/api/v1/launcher/timelines', token: cred, headers: { Origin: 'http://alpha.localhost:1' } }), 403, 'bad_origin');
  });

  test('the list reads by write order through an index (no table scan, no sort)', () => {
    const db = new Database(join(svc.dataDir, 'backlot.db'), { readonly: true });
    try {
      const plan = (sql: string, params: Record<string, unknown>) => (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[]).map((r) => r.detail).join('\n');
      const all = plan(TIMELINE_SQL.launcherAll, { after: 1e9, q: null, limit: 10 });
      assert.match(all, /USING INDEX timelines_by_touched/);
      assert.doesNotMatch(all, /TEMP B-TREE/);
      const one = plan(TIMELINE_SQL.launcherByStudio, { studio: 'alpha', after: 1e9, q: null, limit: 10 });
      assert.match(one, /USING INDEX timelines_touched/);
      assert.doesNotMatch(one, /TEMP B-TREE/);
    } finally {
      db.close();
    }
  });
});

describe('POST /launcher/timelines/{id}:open', () => {
  let page: SseConnection | null = null;
  after(() => page?.close());

  test('501 unsupported while no editor page is connected; the mirror stays 404', async () => {
    assertError(await l.post(`/launcher/timelines/${seqs.b1.id}:open`, undefined), 501, 'unsupported');
    assertError(await l.get(`/launcher/timeline/${seqs.b1.id}`), 404, 'not_found');
  });

  test('404 for an unknown or deleted sequence, 400 for an id past 64 characters', async () => {
    assertError(await l.post(`/launcher/timelines/${UNKNOWN_ID}:open`, undefined), 404, 'not_found');
    assertError(await l.post(`/launcher/timelines/${seqs.gone.id}:open`, undefined), 404, 'not_found');
    assertError(await l.post('/launcher/timelines/not-an-id:open', undefined), 404, 'not_found');
    assertError(await l.post(`/launcher/timelines/${'x'.repeat(65)}:open`, undefined), 400, 'bad_request');
  });

  test('a studio token is 401 (studios open their own with POST /timeline/{id}:open)', async () => {
    assertError(await send(svc.port, { method: 'POST', path: `/api/v1/launcher/timelines/${seqs.b1.id}:open`, token: alphaToken }), 401, 'unauthenticated');
  });

  test("with a page connected: it gets the sequence and its studio; then the mirror serves it acting as that studio", async () => {
    page = await openSse(svc.port, '!/editor/events', cred);
    assert.equal(page.status, 200);
    await page.waitFor((m) => m.event === 'hello');
    const res = await l.post(`/launcher/timelines/${seqs.b1.id}:open`, undefined);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.json).sort(), ['opened', 'surface']);
    assert.equal(res.json.opened, true);
    assert.match(res.json.surface, /^http:\/\/127\.0\.0\.1:\d+\/editor\/$/);
    const [event] = await page.waitFor((m) => m.event === 'open' && m.data !== '');
    const data = JSON.parse(event!.data);
    assert.equal(data.studio_id, 'beta');
    assert.equal(data.timeline.id, seqs.b1.id);
    const got = assertTimeline(await l.get(`/launcher/timeline/${seqs.b1.id}`), 200);
    assert.deepEqual(got, (await beta.get(`/timeline/${seqs.b1.id}`)).json);
    // Written as beta: the studio sees the launcher's change as its own sequence's next revision.
    const renamed = assertTimeline(await l.patch(`/launcher/timeline/${seqs.b1.id}`, { name: 'Beta teaser (cut)' }, { 'Content-Type': MERGE, 'If-Match': `"${got.revision}"` }), 200);
    assert.equal((await beta.get(`/timeline/${seqs.b1.id}`)).json.name, renamed.name);
  });
});

describe('descriptions: each revision says what changed', () => {
  test('a PATCH description is the revision\'s; the next write moves it to the revisions; a revert says what it restored', async () => {
    const t = assertTimeline(await alpha.post('/timeline', { name: 'Described' }), 201);
    assert.equal(t.description, null);
    const one = assertTimeline(await alpha.patch(`/timeline/${t.id}`, { name: 'Described 2', description: 'Renamed to Described 2' }, { 'Content-Type': MERGE, 'If-Match': '"1"' }), 200);
    assert.equal(one.description, 'Renamed to Described 2');
    // Without one, a write has none; the one before keeps its own.
    const two = assertTimeline(await alpha.patch(`/timeline/${t.id}`, { name: 'Described 3' }, { 'Content-Type': MERGE, 'If-Match': '"2"' }), 200);
    assert.equal(two.description, null);
    const revs = (await alpha.get(`/timeline/${t.id}/revisions`)).json.items;
    assert.deepEqual(revs.map((r: any) => [r.revision, r.description]), [[2, 'Renamed to Described 2'], [1, null]]);
    const back = assertTimeline(await alpha.post(`/timeline/${t.id}:revert`, { revision: 2 }, { 'If-Match': '"3"' }), 200);
    assert.equal(back.description, 'Restored revision 2');
    const named = assertTimeline(await alpha.post(`/timeline/${t.id}:revert`, { revision: 1, description: 'Undo: Renamed to Described 2' }, { 'If-Match': '"4"' }), 200);
    assert.equal(named.description, 'Undo: Renamed to Described 2');
  });

  for (const [name, description] of [['empty', ''], ['past 200 characters', 'x'.repeat(201)], ['not a string', 7]] as const) {
    test(`a description ${name} is 400 bad_request, nothing written`, async () => {
      const t = assertTimeline(await alpha.post('/timeline', { name: 'Bad description' }), 201);
      assertError(await alpha.patch(`/timeline/${t.id}`, { description }, { 'Content-Type': MERGE, 'If-Match': '"1"' }), 400, 'bad_request');
      assertError(await alpha.post(`/timeline/${t.id}:revert`, { revision: 1, description }, { 'If-Match': '"1"' }), 400, 'bad_request');
      assert.equal((await alpha.get(`/timeline/${t.id}`)).json.revision, 1);
    });
  }
});
