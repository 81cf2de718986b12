import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { randomBytes } from 'node:crypto';
import { chmodSync, linkSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { startService, tempDir, type TestService } from './helpers/service';
import { client, send, type HttpResponse } from './helpers/http';
import { openSse, type SseConnection } from './helpers/sse';
import { assertError } from './helpers/scenario';
import { upload } from './helpers/assets';
import { fixture, startLauncher, studioGet, type LauncherClient } from './helpers/launcher';

/**
 * Hostile studios: bounds (docs/security.md "Hostile studios: bounds"). One studio must not stall or break another's pages with
 * big documents, grow a job's data without bound, keep a revoked token's
 * streams, or make a file outside its folders read-only through a hardlink.
 */

// A fresh connection per request: the CLI calls block this process for seconds
// on a loaded machine, and a kept-alive socket the service closed meanwhile
// would fail the next request ("socket hang up"; the keep-alive limits of
// docs/api.md "Connections and limits", not this file's subject).
http.globalAgent = new http.Agent({ keepAlive: false });

const PAGE_BYTES = 8 * 1024 * 1024;
const DATA_LIMIT = 256 * 1024;
/** Room for a page's envelope (ids, times, the cursor) beyond its items' bytes. */
const ENVELOPE = 64 * 1024;

let svc: TestService;
const T: Record<string, string> = {};
const dirsOf = (id: string) => ({ stage: join(svc.dataDir, 'studios', id, 'stage'), data: join(svc.dataDir, 'studios', id, 'data') });

before(async () => {
  // A body limit above the page bound, so one document alone can be larger than a page.
  svc = await startService({ args: ['--body-limit', String(12 * 1024 * 1024)] });
  T.jobs = svc.studio('jobs', ['jobs']);
  T.gallery = svc.studio('gallery', ['gallery', 'assets']);
  T.reader = svc.studio('reader', ['gallery', 'gallery.read_all']);
  T.sessions = svc.studio('sessions', ['kv']);
  T.docs = svc.studio('docs', ['jobs', 'gallery', 'assets', 'kv']);
  T.tight = svc.studio('tight', ['jobs', 'kv'], ['--quota-kv-bytes', '1000']);
  T.adopter = svc.studio('adopter', ['assets']);
});
after(async () => {
  await svc.stop();
});

/**
 * Follows a list's cursors to the end: every page holds at least one item and
 * at most PAGE_BYTES of items (plus its envelope) unless it holds one item
 * alone; every item comes once. Returns the pages' sizes.
 */
async function walk(get: (cursor: string | undefined) => Promise<HttpResponse>, expected: number): Promise<number[]> {
  const seen = new Set<string>();
  const sizes: number[] = [];
  let cursor: string | undefined;
  do {
    const r = await get(cursor);
    assert.equal(r.status, 200, r.text.slice(0, 300));
    const items = r.json.items as { id?: string; key?: string }[];
    assert.ok(items.length >= 1, 'a page is never empty while rows remain');
    if (items.length > 1) assert.ok(Buffer.byteLength(r.text) <= PAGE_BYTES + ENVELOPE, `a page of ${items.length} items is ${r.text.length} bytes`);
    for (const item of items) {
      const id = item.id ?? item.key!;
      assert.ok(!seen.has(id), `${id} shown twice`);
      seen.add(id);
    }
    sizes.push(items.length);
    cursor = r.json.next_cursor ?? undefined;
    assert.ok(sizes.length <= expected, 'the pages end');
  } while (cursor !== undefined);
  assert.equal(seen.size, expected, 'every item once');
  return sizes;
}
const q = (cursor: string | undefined) => (cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`);

describe('every list page is cut by bytes (8 MiB), and still shows at least one item', () => {
  const N = 40;
  const pad = (i: number) => `${i}`.padEnd(240_000, 'x'); // 40 x 240 kB = 9.6 MB of items

  test('GET /jobs?limit=500 over 40 jobs of 240 kB data: more than one page, each within 8 MiB', async () => {
    const c = client(svc.port, T.jobs);
    for (let i = 0; i < N; i++) assert.equal((await c.post('/jobs', { title: `big ${i}`, data: { pad: pad(i) } })).status, 201);
    const sizes = await walk((cursor) => c.get(`/jobs?limit=500${q(cursor)}`), N);
    assert.ok(sizes.length >= 2 && sizes[0]! < N, `pages ${sizes.join(',')}`);
  });

  test('GET /launcher/jobs?limit=500 (every studio\'s jobs) is cut the same way', async () => {
    const cred = svc.cli(['launcher-token']).stdout.trim();
    const sizes = await walk((cursor) => client(svc.port, cred).get(`/launcher/jobs?limit=500${q(cursor)}`), N);
    assert.ok(sizes.length >= 2, `pages ${sizes.join(',')}`);
  });

  test('GET /gallery/items (own, scope=all, q search) and GET /assets/{id}/lineage over 40 items of 240 kB params', async () => {
    const c = client(svc.port, T.gallery);
    const made = await upload(svc.port, T.gallery, randomBytes(300), 'kind=other');
    const source = await upload(svc.port, T.gallery, randomBytes(301), 'kind=other');
    assert.equal(made.status, 201);
    for (let i = 0; i < N; i++) {
      const r = await c.post('/gallery/items', {
        asset_id: made.json.id,
        params: { prompt: 'bounded harbour', pad: pad(i) },
        inputs: [{ asset_id: source.json.id, role: 'init' }],
      });
      assert.equal(r.status, 201, r.text);
    }
    const reader = client(svc.port, T.reader);
    for (const [name, get] of [
      ['own', (cursor?: string) => c.get(`/gallery/items?limit=500${q(cursor)}`)],
      ['scope=all from another studio', (cursor?: string) => reader.get(`/gallery/items?scope=all&limit=500${q(cursor)}`)],
      ['q search', (cursor?: string) => c.get(`/gallery/items?q=harbour&limit=500${q(cursor)}`)],
      ['downstream lineage', (cursor?: string) => c.get(`/assets/${source.json.id}/lineage?limit=500${q(cursor)}`)],
    ] as const) {
      const sizes = await walk(get, N);
      assert.ok(sizes.length >= 2, `${name}: pages ${sizes.join(',')}`);
    }
  });

  test('GET /sessions: two states of 9 MB, each larger than a page: one item a page, and a cursor to the next', async () => {
    const c = client(svc.port, T.sessions);
    for (const name of ['one', 'two']) {
      const r = await c.post('/sessions', { name, state: { pad: name.padEnd(9_000_000, 'z') } });
      assert.equal(r.status, 201, r.text.slice(0, 200));
    }
    assert.deepEqual(await walk((cursor) => c.get(`/sessions?limit=500${q(cursor)}`), 2), [1, 1]);
  });
});

describe('job data is a document: validated, bounded (also after a merge) and counted toward kv_bytes', () => {
  const deep = (n: number): unknown => {
    let v: unknown = {};
    for (let i = 0; i < n; i++) v = { a: v };
    return v;
  };
  const post = (data: unknown) => client(svc.port, T.docs).post('/jobs', { title: 'doc', data });

  for (const [name, body, status, code] of [
    ['1e400 is 400 invalid_document (never stored as null)', '{"title":"t","data":{"n":1e400}}', 400, 'invalid_document'],
    ['nested 150 levels: 400 invalid_document', JSON.stringify({ title: 't', data: deep(150) }), 400, 'invalid_document'],
  ] as const) {
    test(`POST /jobs data ${name}`, async () => {
      assertError(await fetchRaw('/jobs', body), status, code);
    });
  }

  test('POST /jobs data nested 5,000 levels: a 400, never a 500', async () => {
    // Built as text: JSON.stringify itself would run out of stack.
    const raw = await fetchRaw('/jobs', `{"title":"t","data":${'{"a":'.repeat(5000)}{}${'}'.repeat(5000)}}`);
    assert.equal(raw.status, 400, raw.text.slice(0, 200));
  });

  test('a __proto__ member of data is kept, as in KV and records', async () => {
    const raw = await fetchRaw('/jobs', '{"title":"t","data":{"__proto__":{"x":1},"y":2}}');
    assert.equal(raw.status, 201, raw.text);
    assert.match(raw.text, /"data":\{"__proto__":\{"x":1\},"y":2\}/);
  });

  test('data over 256 KiB: 413 too_large with details.limit; a merge past it: 413 and nothing changes', async () => {
    assertError(await post({ s: 'x'.repeat(DATA_LIMIT) }), 413, 'too_large', { limit: DATA_LIMIT });
    const job = await post({ a: 'a'.repeat(200_000) });
    assert.equal(job.status, 201);
    const c = client(svc.port, T.docs);
    assertError(await c.patch(`/jobs/${job.json.id}`, { data: { b: 'b'.repeat(100_000) } }), 413, 'too_large', { limit: DATA_LIMIT });
    assert.deepEqual(Object.keys((await c.get(`/jobs/${job.json.id}`)).json.data), ['a']);
    assertError(await fetchRaw(`/jobs/${job.json.id}`, JSON.stringify({ data: deep(150) }), 'PATCH'), 400, 'invalid_document');
  });

  test("a task job's data counts toward kv_bytes: 429 past the quota, shared with KV; emptying it frees the bytes", async () => {
    const c = client(svc.port, T.tight);
    const first = await c.post('/jobs', { title: 'a', data: { s: 'x'.repeat(600) } }); // 608 bytes
    assert.equal(first.status, 201, first.text);
    const over = { quota: 'kv_bytes', limit: 1000, used: 608 };
    assertError(await c.post('/jobs', { title: 'b', data: { s: 'y'.repeat(600) } }), 429, 'quota_exceeded', over);
    assertError(await c.put('/kv/n/k', { s: 'z'.repeat(500) }), 429, 'quota_exceeded', over); // KV shares the quota
    assertError(await c.patch(`/jobs/${first.json.id}`, { data: { t: 'w'.repeat(500) } }), 429, 'quota_exceeded', over);
    assert.equal((await c.patch(`/jobs/${first.json.id}`, { data: null })).status, 200);
    assert.equal((await c.post('/jobs', { title: 'b', data: { s: 'y'.repeat(600) } })).status, 201, 'the bytes were freed');
  });

  test('gallery params over 256 KiB: 413 too_large with details.limit', async () => {
    const asset = await upload(svc.port, T.docs, randomBytes(200), 'kind=other');
    const r = await client(svc.port, T.docs).post('/gallery/items', { asset_id: asset.json.id, params: { prompt: 'p'.repeat(DATA_LIMIT) } });
    assertError(r, 413, 'too_large', { limit: DATA_LIMIT });
  });
});

/** A raw JSON body (numbers such as 1e400 and `__proto__` members survive only as text). */
async function fetchRaw(path: string, body: string, method = 'POST'): Promise<HttpResponse> {
  return send(svc.port, {
    method,
    path: `/api/v1${path}`,
    token: T.docs,
    raw: body,
    contentType: method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
  });
}

/** Resolves true when the stream ends within `ms` (far below the 15 s heartbeat: the end is not the heartbeat's). */
function endsWithin(s: SseConnection, ms: number): Promise<boolean> {
  return Promise.race([s.closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);
}

describe('revoking a studio token ends its open streams', () => {
  test('CLI `token revoke` (another process): its /events and log streams end; another token of the studio keeps its own', async () => {
    const doomed = svc.token('docs', ['jobs']);
    const kept = svc.token('docs', ['jobs']);
    const job = await client(svc.port, kept).post('/jobs', { title: 'watched' });
    const events = await openSse(svc.port, '/events', doomed);
    const logs = await openSse(svc.port, `/jobs/${job.json.id}/logs`, doomed);
    const keptEvents = await openSse(svc.port, '/events', kept);
    try {
      assert.equal(events.status, 200);
      assert.equal(logs.status, 200);
      assert.equal(svc.cli(['token', 'revoke', doomed]).code, 0);
      assert.equal(await endsWithin(events, 10_000), true, '/events ended');
      assert.equal(await endsWithin(logs, 10_000), true, 'the log stream ended');
      const later = await client(svc.port, kept).post('/jobs', { title: 'after revocation' });
      await keptEvents.waitFor((m) => m.event === 'job' && m.data.includes(later.json.id));
      assert.equal(events.events.some((m) => m.data.includes(later.json.id)), false, 'nothing after the revocation');
    } finally {
      for (const s of [events, logs, keptEvents]) s.close();
    }
  });
});

describe('adopt refuses a file with another hardlink (its other name may lie outside the roots)', () => {
  test('a data or stage file hardlinked to a file outside: 422 outside_roots, the outside file stays writable', async () => {
    const c = client(svc.port, T.adopter);
    for (const root of ['data', 'stage'] as const) {
      const outside = join(tempDir(), 'precious.txt');
      writeFileSync(outside, `the user's own file ${root}`, { mode: 0o644 });
      const inside = join(dirsOf('adopter')[root], 'innocent.txt');
      linkSync(outside, inside);
      assertError(await c.post('/assets:adopt', { path: inside, kind: 'other' }), 422, 'outside_roots');
      assert.equal(statSync(outside).mode & 0o777, 0o644, 'not made read-only');
      assert.equal(statSync(outside).nlink, 2, 'no link left in the blob store');
    }
  });

  test('a data file adopted before (a link of its blob and library file) adopts again: 200, the same asset', async () => {
    const c = client(svc.port, T.adopter);
    const file = join(dirsOf('adopter').data, 'mine.bin');
    writeFileSync(file, randomBytes(4000));
    const first = await c.post('/assets:adopt', { path: file, kind: 'other' });
    assert.equal(first.status, 201, first.text);
    assert.ok(statSync(file).nlink > 1);
    const again = await c.post('/assets:adopt', { path: file, kind: 'other' });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.json.id, first.json.id);
    chmodSync(file, 0o444);
  });
});

describe('the launcher\'s stop revokes the runtime token and ends its streams at once', () => {
  let l: LauncherClient;
  let stop: () => Promise<unknown>;
  before(async () => {
    const started = await startLauncher();
    l = started.l;
    stop = () => started.svc.stop();
  });
  after(async () => {
    await stop();
  });

  test('a running studio\'s /events opened with its runtime token ends when the launcher stops the studio', async () => {
    await l.installOk(fixture({ id: 'streamer', capabilities: ['jobs'] }));
    assert.equal((await l.post('/launcher/studios/streamer:start')).status, 200);
    const running = await l.waitState('streamer', 'running');
    const token = (await studioGet(running.port, '/env')).json.BACKLOT_TOKEN as string;
    const events = await openSse(l.port, '/events', token);
    try {
      assert.equal(events.status, 200);
      await l.stopOk('streamer');
      assert.equal(await endsWithin(events, 10_000), true, '/events ended with the stop');
    } finally {
      events.close();
    }
  });
});
