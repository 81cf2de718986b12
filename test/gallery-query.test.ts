import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { client } from './helpers/http';
import { assertError, runScenarios, type Scenario, type ScenarioEnv } from './helpers/scenario';
import { startService, type TestService } from './helpers/service';
import { createItem, ids, newAsset, newestFirst, UNKNOWN_ID, walk, type Client } from './helpers/gallery';

/**
 * GET /gallery/items without `q` (docs/api.md "List and search `GET
 * /gallery/items`"): scope, every filter, order and keyset pagination, each checked against
 * a reference model of the items created here (studio gamma's items are the
 * data set; alpha and beta exist to be left out or let in by scope).
 */

type Item = any;

let svc: TestService;
let env: ScenarioEnv & { ids: Record<string, string> };
let gamma: Client;
let alpha: Client;
let alphaAll: Client;
let beta: Client;
/** Every live item of gamma, as created. */
let model: Item[] = [];
let assets: any[] = [];
let sessions: string[] = [];
const pause = (ms = 3) => new Promise((r) => setTimeout(r, ms));

/** Gamma's data set: kinds, assets, tags, stars and sessions spread so that every filter has hits and misses. */
async function seed(): Promise<void> {
  const token = env.tokens.gamma!;
  assets = [];
  for (const kind of ['image', 'image', 'video', 'video', 'audio', 'other'] as const) assets.push(await newAsset(svc.port, token, kind));
  const s1 = (await gamma.post('/sessions', { name: 's1' })).json.id;
  const s2 = (await gamma.post('/sessions', { name: 's2' })).json.id;
  sessions = [s1, s2];
  const body = (i: number) => ({
    asset_id: assets[i % 6].id,
    title: `item ${i}`,
    tags: ['all', ...(i % 2 === 0 ? ['even'] : []), ...(i % 3 === 0 ? ['three'] : []), ...(i % 5 === 0 ? ['five'] : [])],
    starred: i % 4 === 1,
    session_id: i % 3 === 1 ? s1 : i % 3 === 2 ? s2 : null,
  });
  for (let i = 0; i < 30; i++) {
    if (i % 10 === 9) {
      // A burst sent at once: some land in the same millisecond (id breaks the tie).
      model.push(...(await Promise.all([0, 1, 2, 3].map(() => createItem(gamma, body(i))))));
    } else {
      model.push(await createItem(gamma, body(i)));
      if (i % 7 === 0) await pause();
    }
  }
}

before(async () => {
  svc = await startService();
  const tokens: Record<string, string> = {
    gamma: svc.studio('gamma', ['gallery', 'assets', 'kv']),
    alpha: svc.studio('alpha', ['gallery', 'assets']),
    beta: svc.studio('beta', ['gallery', 'assets']),
  };
  tokens.alphaAll = svc.token('alpha', ['gallery', 'gallery.read_all']);
  tokens.gammaAll = svc.token('gamma', ['gallery', 'gallery.read_all']);
  env = { port: svc.port, tokens, ids: {} };
  gamma = client(svc.port, tokens.gamma);
  alpha = client(svc.port, tokens.alpha);
  alphaAll = client(svc.port, tokens.alphaAll);
  beta = client(svc.port, tokens.beta);
  env.ids.alphaItem = (await createItem(alpha, { asset_id: (await newAsset(svc.port, tokens.alpha!)).id, tags: ['all'] })).id;
  env.ids.betaItem = (await createItem(beta, { asset_id: (await newAsset(svc.port, tokens.beta!)).id, tags: ['all'] })).id;
  await seed();
  // A deleted gamma item matching everything: never listed.
  const dead = await createItem(gamma, { asset_id: assets[0].id, tags: ['all', 'even', 'three', 'five'], starred: true, session_id: sessions[0] });
  assert.equal((await gamma.delete(`/gallery/items/${dead.id}`)).status, 204);
  env.ids.dead = dead.id;
});

after(async () => {
  await svc?.stop();
});

/** The filters as a predicate over the model (instants compared as the shown strings). */
function matches(it: Item, f: Record<string, string | string[]>): boolean {
  const tags = f.tag === undefined ? [] : Array.isArray(f.tag) ? f.tag : [f.tag];
  if (f.kind !== undefined && it.kind !== f.kind) return false;
  if (!tags.every((t) => it.tags.includes(t))) return false;
  if (f.session_id !== undefined && it.session_id !== f.session_id) return false;
  if (f.starred !== undefined && it.starred !== (f.starred === 'true')) return false;
  if (f.asset_id !== undefined && it.asset_id !== f.asset_id) return false;
  if (f.since !== undefined && !(it.created_at >= f.since)) return false;
  if (f.until !== undefined && !(it.created_at < f.until)) return false;
  return true;
}

function queryString(f: Record<string, string | string[]>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(f)) for (const one of Array.isArray(v) ? v : [v]) parts.push(`${k}=${encodeURIComponent(one)}`);
  return parts.join('&');
}

describe('filters, order and pagination against the model', () => {
  const x = () => newestFirst(model)[Math.floor(model.length / 2)];
  const y = () => newestFirst(model)[Math.floor(model.length / 4)];
  const combos: [string, () => Record<string, string | string[]>][] = [
    ['no filter', () => ({})],
    ['kind=image', () => ({ kind: 'image' })],
    ['kind=audio', () => ({ kind: 'audio' })],
    ['kind=other', () => ({ kind: 'other' })],
    ['tag=even', () => ({ tag: 'even' })],
    ['tag=even&tag=three (both present)', () => ({ tag: ['even', 'three'] })],
    ['tag=three&tag=even&tag=five', () => ({ tag: ['three', 'even', 'five'] })],
    ['a repeated tag', () => ({ tag: ['five', 'five'] })],
    ['an unknown tag', () => ({ tag: ['even', 'nope'] })],
    ['a tag is matched exactly (no prefix, no case folding)', () => ({ tag: 'Even' })],
    ['session_id', () => ({ session_id: sessions[0]! })],
    ['an unknown session_id: empty', () => ({ session_id: UNKNOWN_ID })],
    ['starred=true', () => ({ starred: 'true' })],
    ['starred=false', () => ({ starred: 'false' })],
    ['asset_id', () => ({ asset_id: assets[2].id })],
    ['since (inclusive)', () => ({ since: x().created_at })],
    ['until (exclusive)', () => ({ until: x().created_at })],
    ['since and until', () => ({ since: x().created_at, until: y().created_at })],
    ['kind=video&starred=false&tag=all', () => ({ kind: 'video', starred: 'false', tag: 'all' })],
    ['tag=even&session_id&since', () => ({ tag: 'even', session_id: sessions[1]!, since: x().created_at })],
    ['tag&asset_id&until&starred', () => ({ tag: 'all', asset_id: assets[1].id, until: y().created_at, starred: 'true' })],
    ['kind&tag&tag&session_id', () => ({ kind: 'image', tag: ['three', 'all'], session_id: sessions[0]! })],
  ];
  for (const [name, filters] of combos) {
    test(`${name}: every page walked, each item once, newest first`, async () => {
      const f = filters();
      const expected = ids(newestFirst(model.filter((it) => matches(it, f))));
      const qs = queryString(f);
      for (const limit of [1, 4, 500]) {
        const got = ids(await walk(gamma, `/gallery/items?${qs}`, limit));
        assert.deepEqual(got, expected, `limit ${limit}`);
      }
      // The same through scope=all&studio=gamma, by another studio holding gallery.read_all.
      assert.deepEqual(ids(await walk(alphaAll, `/gallery/items?scope=all&studio=gamma&${qs}`, 7)), expected);
    });
  }

  test('the data set has what the combinations need', () => {
    assert.ok(model.filter((it) => matches(it, { tag: ['even', 'three'] })).length >= 3);
    assert.ok(model.filter((it) => matches(it, { tag: 'even', session_id: sessions[1]!, since: x().created_at })).length >= 1);
    assert.ok(model.filter((it) => matches(it, { since: x().created_at, until: y().created_at })).length >= 3);
  });

  test('since includes the item created at the instant, until excludes it; other spellings of the instant agree', async () => {
    const it = x();
    const has = async (q: string) => ids((await gamma.get(`/gallery/items?${q}&limit=500`)).json.items).includes(it.id);
    assert.equal(await has(`since=${it.created_at}`), true);
    assert.equal(await has(`until=${it.created_at}`), false);
    assert.equal(await has(`since=${it.created_at}&until=${it.created_at}`), false);
    const ms = Date.parse(it.created_at);
    const next = new Date(ms + 1).toISOString();
    assert.equal(await has(`since=${next}`), false);
    assert.equal(await has(`until=${next}`), true);
    // The same instant written with an offset and with a finer fraction.
    const d = new Date(ms + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    assert.equal(await has(`since=${encodeURIComponent(d)}`), true);
    assert.equal(await has(`until=${encodeURIComponent(d)}`), false);
    assert.equal(await has(`since=${it.created_at.replace('Z', '999Z')}`), true);
    // Far past and far future.
    assert.equal((await gamma.get('/gallery/items?since=2999-01-01T00:00:00Z')).json.items.length, 0);
    assert.equal((await gamma.get('/gallery/items?until=2000-01-01T00:00:00Z')).json.items.length, 0);
    assert.equal((await gamma.get('/gallery/items?since=2000-01-01T00:00:00Z&limit=500')).json.items.length, model.length);
    assert.equal((await gamma.get('/gallery/items?until=2999-01-01T00:00:00Z&limit=500')).json.items.length, model.length);
  });

  test('pages stay stable while new items are inserted between them: each old item once, no new one', async () => {
    const filterSets: Record<string, string>[] = [{}, { tag: 'all' }, { tag: 'even', kind: 'image' }, { starred: 'false' }, { session_id: sessions[1]! }];
    for (const f of filterSets) {
      const expected = ids(newestFirst(model.filter((it) => matches(it, f))));
      const added: Item[] = [];
      const got = ids(
        await walk(gamma, `/gallery/items?${queryString(f)}`, 3, async () => {
          added.push(await createItem(gamma, { asset_id: assets[0].id, tags: ['all', 'even'], session_id: sessions[1]!, title: 'inserted' }));
        }),
      );
      assert.deepEqual(got, expected, JSON.stringify(f));
      assert.ok(added.length > 0);
      for (const it of added) assert.equal((await gamma.delete(`/gallery/items/${it.id}`)).status, 204);
    }
  });

  test('a cursor may be used with another limit', async () => {
    const first = await gamma.get('/gallery/items?tag=even&limit=2');
    const rest = await gamma.get(`/gallery/items?tag=even&limit=500&cursor=${encodeURIComponent(first.json.next_cursor)}`);
    assert.equal(rest.status, 200, rest.text);
    assert.deepEqual([...ids(first.json.items), ...ids(rest.json.items)], ids(newestFirst(model.filter((it) => matches(it, { tag: 'even' })))));
  });
});

// ---------------------------------------------------------------------------
describe('scope and studio', () => {
  test('scope=self (the default) is the caller\'s studio only; scope=all with read_all is every studio', async () => {
    const gammaIds = ids(newestFirst(model));
    assert.deepEqual(ids(await walk(gamma, '/gallery/items', 500)), gammaIds);
    assert.deepEqual(ids(await walk(gamma, '/gallery/items?scope=self', 500)), gammaIds);
    assert.deepEqual(ids(await walk(alpha, '/gallery/items', 500)), [env.ids.alphaItem]);
    assert.deepEqual(ids(await walk(alphaAll, '/gallery/items', 500)), [env.ids.alphaItem], 'read_all alone does not widen the default scope');
    const all = ids(await walk(alphaAll, '/gallery/items?scope=all', 6));
    assert.deepEqual(new Set(all), new Set([env.ids.alphaItem, env.ids.betaItem, ...gammaIds]));
    assert.equal(all.length, gammaIds.length + 2);
    assert.equal(all.at(-1), env.ids.alphaItem, 'newest first across studios');
    assert.deepEqual(ids(await walk(alphaAll, '/gallery/items?scope=all&studio=beta', 500)), [env.ids.betaItem]);
    assert.deepEqual(ids(await walk(alphaAll, '/gallery/items?scope=all&studio=alpha', 500)), [env.ids.alphaItem]);
    assert.deepEqual(ids(await walk(alphaAll, '/gallery/items?scope=all&studio=nobody', 500)), []);
    const filtered = ids(await walk(client(svc.port, env.tokens.gammaAll), '/gallery/items?scope=all&tag=all&starred=false', 5));
    const expected = ids(newestFirst(model.filter((it) => matches(it, { tag: 'all', starred: 'false' }))));
    assert.deepEqual(filtered, [...expected, env.ids.betaItem, env.ids.alphaItem], 'filters apply across studios');
  });

  const get = (name: string, query: string, expectStatus = 400, expectCode: string | undefined = expectStatus === 400 ? 'bad_request' : undefined, as = 'gammaAll'): Scenario => ({
    name,
    path: `/gallery/items?${query}`,
    as,
    expectStatus,
    expectCode,
  });
  runScenarios(() => env, [
    get('studio without scope: 400', 'studio=beta'),
    get('studio with scope=self: 400', 'scope=self&studio=beta'),
    get('studio without scope, without read_all: 400', 'studio=gamma', 400, 'bad_request', 'gamma'),
    get('a studio of bad form: 400', 'scope=all&studio=Bad!'),
    get('an empty studio: 400', 'scope=all&studio='),
    get('an unknown scope: 400', 'scope=everyone'),
    get('an unknown kind: 400', 'kind=photo'),
    get('kind in capitals: 400', 'kind=IMAGE'),
    get('starred=yes: 400', 'starred=yes'),
    get('starred=1: 400', 'starred=1'),
    get('starred=TRUE: 400', 'starred=TRUE'),
    get('starred empty: 400', 'starred='),
    get('since not an instant: 400', 'since=yesterday'),
    get('since a date only: 400', 'since=2026-11-22'),
    get('since without offset: 400', 'since=2026-11-22T10:00:00'),
    get('since in month 13: 400', 'since=2026-13-01T00:00:00Z'),
    get('since on February 30: 400', 'since=2026-02-30T00:00:00Z'),
    get('until not an instant: 400', 'until=soon'),
    get('until a number: 400', 'until=1700000000000'),
    get('an empty tag: 400', 'tag='),
    get('a tag over 100 characters: 400', `tag=${'t'.repeat(101)}`),
    get('21 tags: 400', Array.from({ length: 21 }, (_, n) => `tag=t${n}`).join('&')),
    get('20 tags: 200', Array.from({ length: 20 }, (_, n) => `tag=t${n}`).join('&'), 200),
    get('kind given twice: 400', 'kind=image&kind=video'),
    get('q given twice: 400', 'q=a&q=b'),
    get('an asset_id of any length: 200 (an empty page)', `asset_id=${'A'.repeat(300)}`, 200),
    get('a session_id of any length: 200 (an empty page)', `session_id=${'S'.repeat(300)}`, 200),
    get('limit 0: 400', 'limit=0'),
    get('limit 501: 400', 'limit=501'),
    get('limit not a number: 400', 'limit=ten'),
    get('limit negative: 400', 'limit=-1'),
    get('limit fractional: 400', 'limit=1.5'),
    { name: 'limit 500 is fine', path: '/gallery/items?limit=500', as: 'gamma', expectStatus: 200 },
    { name: 'limit 1 is fine', path: '/gallery/items?limit=1', as: 'gamma', expectStatus: 200 },
    { name: 'scope=all&studio with read_all is fine', path: '/gallery/items?scope=all&studio=beta', as: 'gammaAll', expectStatus: 200 },
  ]);
});

// ---------------------------------------------------------------------------
describe('cursors', () => {
  let cursor = '';
  let searchCursor = '';
  before(async () => {
    cursor = (await gamma.get('/gallery/items?tag=even&limit=2')).json.next_cursor;
    searchCursor = (await gamma.get('/gallery/items?q=item&limit=2')).json.next_cursor;
    assert.equal(typeof cursor, 'string');
    assert.equal(typeof searchCursor, 'string');
  });
  const tamper = (c: string) => {
    const i = Math.floor(c.length / 2);
    return c.slice(0, i) + (c[i] === 'A' ? 'B' : 'A') + c.slice(i + 1);
  };
  const bad = (name: string, query: () => string, as = 'gamma'): Scenario => ({
    name,
    get path() {
      return `/gallery/items?${query()}`;
    },
    as,
    expectStatus: 400,
    expectCode: 'bad_cursor',
  });
  const c = () => encodeURIComponent(cursor);
  runScenarios(() => env, [
    bad('garbage', () => 'cursor=zzz'),
    bad('empty', () => 'tag=even&cursor='),
    bad('tampered', () => `tag=even&cursor=${encodeURIComponent(tamper(cursor))}`),
    bad('truncated', () => `tag=even&cursor=${encodeURIComponent(cursor.slice(0, -3))}`),
    bad('reused without its filter', () => `cursor=${c()}`),
    bad('reused with another tag', () => `tag=three&cursor=${c()}`),
    bad('reused with an extra filter', () => `tag=even&kind=image&cursor=${c()}`),
    bad('reused with a q', () => `tag=even&q=item&cursor=${c()}`),
    bad('reused with scope=all', () => `tag=even&scope=all&cursor=${c()}`, 'gammaAll'),
    bad('reused by another studio', () => `tag=even&cursor=${c()}`, 'alpha'),
    bad('a q cursor reused with another q', () => `q=items&cursor=${encodeURIComponent(searchCursor)}`),
    bad('a q cursor reused without q', () => `cursor=${encodeURIComponent(searchCursor)}`),
    { name: 'the cursor with its own filters works', get path() { return `/gallery/items?tag=even&cursor=${c()}`; }, as: 'gamma', expectStatus: 200 },
  ]);

  test('a cursor is bound to the set of tags, not their order or repeats', async () => {
    const first = await gamma.get('/gallery/items?tag=even&tag=all&limit=2');
    const next = encodeURIComponent(first.json.next_cursor);
    const same = await gamma.get(`/gallery/items?tag=even&tag=all&limit=2&cursor=${next}`);
    for (const query of ['tag=all&tag=even', 'tag=all&tag=even&tag=all']) {
      const other = await gamma.get(`/gallery/items?${query}&limit=2&cursor=${next}`);
      assert.equal(other.status, 200, `${query}: ${other.text}`);
      assert.deepEqual(other.json, same.json, query);
    }
    assertError(await gamma.get(`/gallery/items?tag=even&limit=2&cursor=${next}`), 400, 'bad_cursor');
  });

  test('a cursor from another list (sessions, lineage) is bad_cursor here, and one from here is bad_cursor there', async () => {
    const sessionsCursor = (await gamma.get('/sessions?limit=1')).json.next_cursor;
    assert.equal(typeof sessionsCursor, 'string');
    assertError(await gamma.get(`/gallery/items?cursor=${encodeURIComponent(sessionsCursor)}`), 400, 'bad_cursor');
    const lineageCursor = (await gamma.get(`/assets/${assets[0].id}/lineage?limit=1`)).json.next_cursor;
    if (lineageCursor) assertError(await gamma.get(`/gallery/items?cursor=${encodeURIComponent(lineageCursor)}`), 400, 'bad_cursor');
    const plain = (await gamma.get('/gallery/items?limit=1')).json.next_cursor;
    assertError(await gamma.get(`/sessions?cursor=${encodeURIComponent(plain)}`), 400, 'bad_cursor');
    assertError(await gamma.get(`/assets/${assets[0].id}/lineage?cursor=${encodeURIComponent(plain)}`), 400, 'bad_cursor');
  });
});
