import assert from 'node:assert/strict';
import { cpSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createService } from '../service/app';
import { readsOneIndexRange } from '../service/records/compile';
import { parseOrder, parseWhere } from '../service/records/filter';
import { client, type HttpResponse } from './helpers/http';
import { createItem, newAsset } from './helpers/gallery';
import { until } from './helpers/processes';
import { runCli, startService, tempDir, type TestService } from './helpers/service';

/**
 * The read workers (service/db/read-pool.ts, docs/api.md §Where
 * reads run), against the real service: fairness between studios, the same
 * answers as inline reads, WAL snapshots, a crashed worker, and close().
 *
 * Slow and crashing reads come from test-only hooks (never set outside
 * tests): BACKLOT_TEST_SLOW_READ=MARK:MS holds a read whose arguments contain
 * MARK for MS ms after it took its snapshot (and writes "read paused");
 * BACKLOT_TEST_CRASH_READ=MARK ends the worker that gets such a read.
 * Assertions are about order and overlap, never wall-clock thresholds.
 */

const paused = (svc: TestService) => svc.stderr().split('read paused').length - 1;

describe('fairness: one studio holds at most half of the pool', () => {
  let svc: TestService;
  let hog: ReturnType<typeof client>;
  let other: ReturnType<typeof client>;
  before(async () => {
    svc = await startService({ args: ['--read-workers', '2'], env: { BACKLOT_TEST_SLOW_READ: 'slowmark:1000' } });
    hog = client(svc.port, svc.studio('hog', ['records']));
    other = client(svc.port, svc.studio('other', ['records', 'gallery']));
    assert.equal((await hog.post('/records/c', { n: 1 })).status, 201);
    assert.equal((await other.post('/records/c', { n: 2 })).status, 201);
  });
  after(async () => svc.stop());

  test("another studio's query runs while one studio floods the pool with slow reads", async () => {
    const done: string[] = [];
    const slow = Array.from({ length: 3 }, (_, i) =>
      hog.get(`/records/c?where=${encodeURIComponent('tag:ne:slowmark')}`).then((res) => {
        assert.equal(res.status, 200, res.text);
        done.push(`hog ${i}`);
      }),
    );
    await until(() => paused(svc) >= 1, 'the first slow read to hold its worker');
    const res = await other.get('/records/c');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.items.length, 1);
    done.push('other');
    // The other studio was answered while the first slow read still held its worker,
    // and the flooding studio never held both workers.
    assert.deepEqual(done, ['other']);
    assert.equal(paused(svc), 1);
    // A gallery list (another kind of read) of the same studio is not queued behind them either.
    assert.equal((await other.get('/gallery/items')).status, 200);
    assert.deepEqual(done, ['other']);
    await Promise.all(slow);
    // One at a time: each slow read paused only once the previous one was done. The
    // worker's stderr line travels on another pipe than the answer: wait for the third.
    await until(() => paused(svc) >= 3, 'the third slow read to be logged');
    assert.equal(paused(svc), 3);
    assert.deepEqual(done.slice(1), ['hog 0', 'hog 1', 'hog 2']);
  });
});

describe('snapshots: a read sees the data as of its start; a write answers with itself', () => {
  let svc: TestService;
  let api: ReturnType<typeof client>;
  before(async () => {
    svc = await startService({ args: ['--read-workers', '2'], env: { BACKLOT_TEST_SLOW_READ: 'snapmark:1200' } });
    api = client(svc.port, svc.studio('alpha', ['records']));
    for (let i = 0; i < 3; i++) assert.equal((await api.post('/records/c', { n: i })).status, 201);
  });
  after(async () => svc.stop());

  test('a write committed while a read runs is not in that read, and is in the next', async () => {
    const reading = api.get(`/records/c?where=${encodeURIComponent('tag:ne:snapmark')}&order=n:asc`);
    await until(() => paused(svc) >= 1, 'the read to take its snapshot');
    // The main thread is free while the read runs: the write is answered, with itself.
    const created = await api.post('/records/c', { n: 3 });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.n, 3);
    const patched = await api.patch(`/records/c/${created.json.id}`, { n: 4 });
    assert.equal(patched.json.n, 4);
    const old = await reading;
    assert.equal(old.status, 200, old.text);
    assert.deepEqual(old.json.items.map((r: { n: number }) => r.n), [0, 1, 2]);
    // A read that starts after the write sees it at once.
    const now = await api.get('/records/c?order=n:asc');
    assert.deepEqual(now.json.items.map((r: { n: number }) => r.n), [0, 1, 2, 4]);
  });
});

describe('a worker that crashes', () => {
  let svc: TestService;
  let api: ReturnType<typeof client>;
  before(async () => {
    svc = await startService({ args: ['--read-workers', '2'], env: { BACKLOT_TEST_CRASH_READ: 'crashmark' } });
    api = client(svc.port, svc.studio('alpha', ['records', 'gallery']));
    assert.equal((await api.post('/records/c', { secret: 'do-not-leak' })).status, 201);
  });
  after(async () => svc.stop());

  test('its read fails with 500 internal naming no data; it is replaced and reads go on', async () => {
    for (let round = 0; round < 3; round++) {
      const res = await api.get(`/records/c?where=${encodeURIComponent('secret:eq:crashmark')}`);
      assert.equal(res.status, 500, res.text);
      assert.equal(res.json.code, 'internal');
      assert.deepEqual(res.json.details, {});
      assert.doesNotMatch(res.text, /crashmark|do-not-leak|secret/);
      // More reads than workers: every worker of the pool answers again.
      for (let i = 0; i < 4; i++) {
        const ok = await api.get('/records/c');
        assert.equal(ok.status, 200, ok.text);
        assert.equal(ok.json.items[0].secret, 'do-not-leak');
      }
    }
    assert.match(svc.stderr(), /read worker exited .*starting a new one/);
  });
});

describe('a read worker that cannot start: reads fall back to the serving thread', () => {
  // BACKLOT_TEST_READ_WORKER_ENTRY (tests only) points the pool at another worker entry.
  const broken = tempDir();
  writeFileSync(join(broken, 'throws.js'), "throw new Error('broken on purpose');\n");
  writeFileSync(join(broken, 'exits.js'), 'process.exit(3);\n');
  after(() => rmSync(broken, { recursive: true, force: true }));
  const cases = [
    { name: 'its entry is missing', entry: join(broken, 'missing.js'), reason: /Cannot find module/ },
    { name: 'its entry throws while it loads', entry: join(broken, 'throws.js'), reason: /broken on purpose/ },
    { name: 'its thread exits at start', entry: join(broken, 'exits.js'), reason: /exited with code 3 before it was ready/ },
  ];
  for (const c of cases) {
    test(`${c.name}: records and gallery reads answer as ever, with one warning`, async () => {
      const svc = await startService({ args: ['--read-workers', '2'], env: { BACKLOT_TEST_READ_WORKER_ENTRY: c.entry } });
      try {
        const token = svc.studio('alpha', ['records', 'gallery', 'assets']);
        const api = client(svc.port, token);
        for (const n of [3, 1, 2]) assert.equal((await api.post('/records/c', { n, s: n === 2 ? 'y' : 'x' })).status, 201);
        // Several reads at once: the ones queued while the workers failed are answered too.
        const [query, page, all] = await Promise.all([
          api.get(`/records/c?where=${encodeURIComponent('s:eq:"x"')}&order=n:asc`),
          api.get('/records/c?order=n:desc&limit=2'),
          api.get('/records/c'),
        ]);
        assert.equal(query.status, 200, query.text);
        assert.deepEqual(query.json.items.map((r: { n: number }) => r.n), [1, 3]);
        assert.deepEqual(page.json.items.map((r: { n: number }) => r.n), [3, 2]);
        assert.ok(page.json.next_cursor);
        const next = await api.get(`/records/c?order=n:desc&limit=2&cursor=${encodeURIComponent(page.json.next_cursor)}`);
        assert.deepEqual(next.json.items.map((r: { n: number }) => r.n), [1]);
        assert.equal(all.json.items.length, 3);

        const item = await createItem(api, { asset_id: (await newAsset(svc.port, token)).id, tags: ['kept'], params: { prompt: 'sunset fallback' } });
        const list = await api.get('/gallery/items?tag=kept');
        assert.equal(list.status, 200, list.text);
        assert.deepEqual(list.json.items.map((i: { id: string }) => i.id), [item.id]);
        const found = await api.get('/gallery/items?q=sunset');
        assert.deepEqual(found.json.items.map((i: { id: string }) => i.id), [item.id]);
        const lineage = await api.get(`/gallery/items/${item.id}/lineage`);
        assert.equal(lineage.status, 200, lineage.text);

        const warnings = svc.stderr().split('\n').filter((line) => /read worker/.test(line));
        assert.equal(warnings.length, 1, svc.stderr());
        assert.match(warnings[0]!, /^read workers could not start \(.+\); reads run on the serving thread instead/);
        assert.match(warnings[0]!, c.reason);
      } finally {
        await svc.stop();
      }
    });
  }
});

describe('the same answers on workers and inline (--read-workers 0)', () => {
  let workers: TestService;
  let inline: TestService;
  let tokens: { alpha: string; beta: string; all: string };
  const dataDir = tempDir();
  const copyDir = tempDir();
  const requests: { name: string; method?: 'GET' | 'POST'; path: string; body?: unknown; who: keyof typeof tokens }[] = [];

  before(async () => {
    // The same data on two servers, one with workers, one inline: one data dir is filled, then copied
    // after a clean stop (one server per data dir), so both have the same rows, tokens and cursor secret.
    workers = await startService({ dataDir, keepDataDir: true, args: ['--read-workers', '2'] });
    tokens = {
      alpha: workers.studio('alpha', ['records', 'gallery', 'assets']),
      beta: workers.studio('beta', ['records', 'gallery', 'assets']),
      all: '',
    };
    tokens.all = workers.token('alpha', ['gallery', 'gallery.read_all', 'assets']);
    const a = client(workers.port, tokens.alpha);
    const b = client(workers.port, tokens.beta);
    const docs = [
      { n: 3, s: 'x', b: true, t: ['red'] },
      { n: 1, s: 'y', b: false, t: { k: 1 } },
      { n: 2, s: 'x', o: null },
      { s: 'z', b: true, t: ['blue', 'red'] },
      { n: 2.5, s: 'y', t: [1, 2] },
      { n: 'text', b: null },
    ];
    for (let round = 0; round < 3; round++) {
      for (const doc of docs) assert.equal((await a.post('/records/c', { ...doc, round })).status, 201);
    }
    assert.equal((await b.post('/records/c', { n: 1 })).status, 201);
    const deleted = await a.post('/records/c', { n: 99 });
    assert.equal((await a.delete(`/records/c/${deleted.json.id}`)).status, 204);

    // Gallery: a lineage chain and a fan-out, tags, prompts, another studio's item, a deleted one.
    const root = await newAsset(workers.port, tokens.alpha);
    let parent = root.id;
    const chain: string[] = [];
    for (let i = 0; i < 4; i++) {
      const asset = await newAsset(workers.port, tokens.alpha);
      const item = await createItem(a, {
        asset_id: asset.id,
        tags: i % 2 ? ['odd', 'all'] : ['all'],
        params: { prompt: `sunset over mountain number ${i}` },
        inputs: [{ asset_id: parent, role: 'init' }],
      });
      chain.push(item.id);
      parent = asset.id;
    }
    for (let i = 0; i < 3; i++) {
      const asset = await newAsset(workers.port, tokens.alpha);
      await createItem(a, { asset_id: asset.id, tags: ['fan'], params: { prompt: `city night ${i}` }, inputs: [{ asset_id: root.id, role: 'ref' }] });
    }
    const theirs = await newAsset(workers.port, tokens.beta);
    await createItem(b, { asset_id: theirs.id, params: { prompt: 'sunset of beta' } });
    const gone = await createItem(a, { asset_id: (await newAsset(workers.port, tokens.alpha)).id, params: { prompt: 'sunset gone' } });
    assert.equal((await a.delete(`/gallery/items/${gone.id}`)).status, 204);
    // An unreferenced-now asset for the reclaim preview: referenced once by an item since deleted.
    const spare = await newAsset(workers.port, tokens.alpha);

    // A declared index: one `eq` on it in id order is read on the main thread (readsOneIndexRange), the rest on workers.
    assert.equal(workers.cli(['index', 'add', '--studio', 'alpha', '--collection', 'c', '--field', 's']).code, 0);
    const rec = (q: string) => `/records/c?${q}`;
    requests.push(
      { name: 'records default order', path: rec('limit=4'), who: 'alpha' },
      { name: 'records where + order asc', path: rec('where=s:eq:x&order=n:asc&limit=2'), who: 'alpha' },
      { name: 'records blob keys (arrays, objects, booleans)', path: rec('order=t:desc&limit=3'), who: 'alpha' },
      { name: 'records booleans', path: rec('order=b:asc&limit=4'), who: 'alpha' },
      { name: 'records contains', path: rec('where=t:contains:"red"&limit=2'), who: 'alpha' },
      { name: 'records updated_at order', path: rec('order=updated_at:asc&limit=5'), who: 'alpha' },
      { name: 'records another studio', path: rec('limit=5'), who: 'beta' },
      { name: 'records indexed eq (main thread), paged', path: rec('where=s:eq:"x"&limit=2'), who: 'alpha' },
      { name: 'records indexed eq, ascending', path: rec('where=s:eq:"y"&order=created_at:asc&limit=2'), who: 'alpha' },
      { name: 'records indexed eq + another clause (worker)', path: rec('where=s:eq:"x"&where=b:eq:true&limit=1'), who: 'alpha' },
      { name: 'records indexed range (worker)', path: rec('where=s:gte:"y"&order=s:desc&limit=2'), who: 'alpha' },
      { name: 'records bad filter', path: rec('where=n:zz:1'), who: 'alpha' },
      { name: 'records bad order', path: rec('order=n:up'), who: 'alpha' },
      { name: 'records bad cursor', path: rec('cursor=nope'), who: 'alpha' },
      { name: 'gallery newest', path: '/gallery/items?limit=3', who: 'alpha' },
      { name: 'gallery q', path: '/gallery/items?q=sunset&limit=2', who: 'alpha' },
      { name: 'gallery q prefix', path: '/gallery/items?q=moun', who: 'alpha' },
      { name: 'gallery q nothing', path: '/gallery/items?q=%2A%2A', who: 'alpha' },
      { name: 'gallery tags', path: '/gallery/items?tag=all&tag=odd', who: 'alpha' },
      { name: 'gallery scope all', path: '/gallery/items?scope=all&q=sunset', who: 'all' },
      { name: 'gallery studio without scope', path: '/gallery/items?studio=beta', who: 'alpha' },
      { name: 'lineage up', path: `/gallery/items/${chain[3]}/lineage?limit=2`, who: 'alpha' },
      { name: 'lineage up, not visible', path: `/gallery/items/${chain[3]}/lineage`, who: 'beta' },
      { name: 'lineage down', path: `/assets/${root.id}/lineage?limit=3`, who: 'alpha' },
      { name: 'lineage down, read_all', path: `/assets/${root.id}/lineage`, who: 'all' },
      { name: 'lineage down, bad cursor', path: `/assets/${root.id}/lineage?cursor=x.y`, who: 'alpha' },
      { name: 'reclaim preview', method: 'POST', path: '/assets:reclaim', body: {}, who: 'alpha' },
      { name: 'reclaim preview of given assets', method: 'POST', path: '/assets:reclaim', body: { asset_ids: [spare.id, root.id] }, who: 'alpha' },
    );
    assert.equal(await workers.stop(), 0);
    cpSync(dataDir, copyDir, { recursive: true });
    workers = await startService({ dataDir, keepDataDir: true, args: ['--read-workers', '2'] });
    inline = await startService({ dataDir: copyDir, keepDataDir: true, args: ['--read-workers', '0'] });
  });
  after(async () => {
    await workers?.stop();
    await inline?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(copyDir, { recursive: true, force: true });
  });

  /** Every page of a request on one server, following next_cursor; each answer's status and bytes. */
  async function answers(svc: TestService, r: (typeof requests)[number]): Promise<string[]> {
    const api = client(svc.port, tokens[r.who]);
    const out: string[] = [];
    let path: string | null = r.path;
    while (path !== null && out.length < 50) {
      const res: HttpResponse = r.method === 'POST' ? await api.post(path, r.body) : await api.get(path);
      out.push(`${res.status} ${res.text}`);
      const next: string | null | undefined = res.status === 200 ? res.json?.next_cursor : null;
      path = next ? `${r.path}${r.path.includes('?') ? '&' : '?'}cursor=${encodeURIComponent(next)}` : null;
    }
    return out;
  }

  test('status and body bytes, page by page through the cursors', async () => {
    assert.ok(requests.length > 20);
    const statuses = new Set<number>();
    for (const r of requests) {
      const [w, i] = [await answers(workers, r), await answers(inline, r)];
      assert.deepEqual(w, i, r.name);
      for (const a of w) statuses.add(Number(a.slice(0, 3)));
    }
    // The table reaches errors as well as pages (400 bad_filter / bad_cursor / bad_request, 404, 409 not_reclaimable).
    assert.deepEqual([...statuses].sort(), [200, 400, 404, 409]);
  });
});

test('readsOneIndexRange: only one eq on a declared field, in id order, stays on the main thread', () => {
  const indexed = new Set(['qty']);
  const rows: [string[], string | undefined, boolean][] = [
    [['qty:eq:1'], undefined, true],
    [['qty:eq:1'], 'created_at:asc', true],
    [['qty:eq:1'], 'id:desc', true],
    [['qty:eq:"text"'], undefined, true],
    [['qty:eq:1'], 'qty:asc', false], // past the eq, records missing the field are a second step
    [['qty:eq:1'], 'updated_at:desc', false],
    [['qty:gte:1'], undefined, false],
    [['qty:in:[1,2]'], undefined, false],
    [['qty:eq:1', 'qty:ne:2'], undefined, false],
    [['other:eq:1'], undefined, false],
    [['id:eq:01ARZ3NDEKTSV4RRFFQ69G5FAV'], undefined, false],
    [[], undefined, false],
  ];
  for (const [where, order, expected] of rows) {
    assert.equal(readsOneIndexRange(parseWhere(where), parseOrder(order), indexed), expected, `${where} ${order}`);
  }
});

describe('lifecycle', () => {
  test('the workers start with the first read and close() ends every one of them', async () => {
    const dataDir = tempDir();
    const service = createService({ dataDir, readWorkers: 3 });
    try {
      const { port } = await service.listen(0);
      assert.equal(runCli(['studio', 'add', 'alpha', '--data-dir', dataDir]).code, 0);
      const api = client(port, runCli(['token', 'create', '--studio', 'alpha', '--caps', 'records', '--data-dir', dataDir]).stdout.trim());
      assert.equal(service.readPool.size, 3);
      // Nothing read yet: no thread (a service that only stores files carries none).
      assert.deepEqual(service.readPool.threads(), []);
      assert.equal((await api.get('/records/c')).status, 200);
      await until(() => service.readPool.threads().length === 3, 'three read workers to be ready');
      const threads = service.readPool.threads();
      if (existsSync('/proc/self/task')) {
        for (const tid of threads) assert.ok(existsSync(`/proc/self/task/${tid}`), `thread ${tid} runs`);
      }
      await service.close();
      if (existsSync('/proc/self/task')) {
        for (const tid of threads) assert.ok(!existsSync(`/proc/self/task/${tid}`), `thread ${tid} outlived close()`);
      }
      assert.deepEqual(service.readPool.threads(), []);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('--read-workers: 0 reads inline; anything but a whole number is a usage error', async () => {
    const svc = await startService({ args: ['--read-workers', '0'] });
    try {
      const api = client(svc.port, svc.studio('alpha', ['records']));
      assert.equal((await api.post('/records/c', { n: 1 })).status, 201);
      assert.equal((await api.get('/records/c')).json.items.length, 1);
    } finally {
      await svc.stop();
    }
    for (const bad of ['-1', 'two', '1.5']) {
      const r = runCli(['serve', '--port', '0', '--data-dir', tempDir(), '--read-workers', bad]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /--read-workers/);
    }
    assert.match(runCli(['serve', '--help']).stdout, /--read-workers N/);
  });
});
