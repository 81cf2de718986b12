import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { client, send } from './helpers/http';
import { assertError, runScenarios, type Scenario, type ScenarioEnv } from './helpers/scenario';
import { startService, type TestService } from './helpers/service';
import { assertItem, createItem, newAsset, UNKNOWN_ID, type Client } from './helpers/gallery';

/**
 * Gallery, black box (docs/api.md "Gallery"): tokens and
 * capabilities, who sees what, create, update and delete against the real
 * service. Queries: gallery-query.test.ts; `q`: gallery-search.test.ts;
 * lineage and reclaim: gallery-lineage.test.ts.
 */

const BODY_LIMIT = 100_000;
const MERGE = 'application/merge-patch+json';

let svc: TestService;
let env: ScenarioEnv & { ids: Record<string, string> };
let alpha: Client;
let alphaAll: Client;
let beta: Client;
const pause = (ms = 5) => new Promise((r) => setTimeout(r, ms));

before(async () => {
  svc = await startService({ args: ['--body-limit', String(BODY_LIMIT)] });
  const tokens: Record<string, string> = {
    alpha: svc.studio('alpha', ['gallery', 'assets', 'kv']),
    beta: svc.studio('beta', ['gallery', 'assets', 'kv']),
  };
  tokens.alphaAll = svc.token('alpha', ['gallery', 'gallery.read_all', 'assets', 'kv']);
  tokens.alphaGallery = svc.token('alpha', ['gallery']);
  tokens.noGallery = svc.token('alpha', ['assets', 'kv', 'records', 'jobs', 'timeline', 'gallery.read_all']);
  tokens.revoked = svc.token('alpha', ['gallery', 'assets']);
  assert.equal(svc.cli(['token', 'revoke', tokens.revoked]).code, 0);
  alpha = client(svc.port, tokens.alpha);
  alphaAll = client(svc.port, tokens.alphaAll);
  beta = client(svc.port, tokens.beta);

  const ids: Record<string, string> = {};
  const image = await newAsset(svc.port, tokens.alpha!, 'image');
  ids.asset = image.id;
  ids.video = (await newAsset(svc.port, tokens.alpha!, 'video')).id;
  ids.audio = (await newAsset(svc.port, tokens.alpha!, 'audio')).id;
  ids.other = (await newAsset(svc.port, tokens.alpha!, 'other')).id;
  ids.betaAsset = (await newAsset(svc.port, tokens.beta!, 'other')).id;
  ids.item = (await createItem(alpha, { asset_id: ids.asset, title: 'cap target', tags: ['keep'] })).id;
  ids.deleted = (await createItem(alpha, { asset_id: ids.asset, title: 'deleted' })).id;
  assert.equal((await alpha.delete(`/gallery/items/${ids.deleted}`)).status, 204);
  ids.betaItem = (await createItem(beta, { asset_id: ids.betaAsset, title: 'beta only' })).id;
  ids.session = (await alpha.post('/sessions', { name: 'live' })).json.id;
  ids.deadSession = (await alpha.post('/sessions', { name: 'dead' })).json.id;
  assert.equal((await alpha.delete(`/sessions/${ids.deadSession}`)).status, 204);
  ids.betaSession = (await beta.post('/sessions', { name: 'beta' })).json.id;
  env = { port: svc.port, tokens, ids };
});

after(async () => {
  await svc?.stop();
});

// ---------------------------------------------------------------------------
describe('token and capability (capability gallery)', () => {
  const endpoints: Pick<Scenario, 'method' | 'path' | 'body' | 'contentType'>[] = [
    { method: 'GET', path: '/gallery/items' },
    { method: 'POST', path: '/gallery/items', body: { asset_id: UNKNOWN_ID, title: 'refused' } },
    { method: 'GET', path: (e) => `/gallery/items/${e.ids!.item}` },
    { method: 'PATCH', path: (e) => `/gallery/items/${e.ids!.item}`, body: { title: 'refused' }, contentType: MERGE },
    { method: 'DELETE', path: (e) => `/gallery/items/${e.ids!.item}` },
    { method: 'GET', path: (e) => `/gallery/items/${e.ids!.item}/lineage` },
    { method: 'GET', path: (e) => `/assets/${e.ids!.asset}/lineage` },
  ];
  const label = (e: (typeof endpoints)[number]) =>
    `${e.method} ${typeof e.path === 'string' ? e.path : e.path({ port: 0, tokens: {}, ids: { item: '{id}', asset: '{asset}' } })}`;
  const rows: Scenario[] = endpoints.flatMap((e) => [
    { ...e, name: `${label(e)} without a token: 401`, expectStatus: 401, expectCode: 'unauthenticated' },
    { ...e, name: `${label(e)} with an unknown token: 401`, token: 'not-a-token', expectStatus: 401, expectCode: 'unauthenticated' },
    { ...e, name: `${label(e)} with a revoked token: 401`, as: 'revoked', expectStatus: 401, expectCode: 'unauthenticated' },
    {
      ...e,
      name: `${label(e)} without gallery (even with gallery.read_all and assets): 403 capability_required`,
      as: 'noGallery',
      expectStatus: 403,
      expectCode: 'capability_required',
      expectDetails: { capability: 'gallery' },
    },
  ]);
  rows.push(
    { name: 'scope=all without gallery.read_all: 403 naming gallery.read_all', path: '/gallery/items?scope=all', as: 'alpha', expectStatus: 403, expectCode: 'capability_required', expectDetails: { capability: 'gallery.read_all' } },
    { name: 'scope=all&studio=beta without gallery.read_all: 403', path: '/gallery/items?scope=all&studio=beta', as: 'alpha', expectStatus: 403, expectCode: 'capability_required', expectDetails: { capability: 'gallery.read_all' } },
    { name: 'scope=self needs no gallery.read_all', path: '/gallery/items?scope=self', as: 'alpha', expectStatus: 200 },
    { name: 'the capability is checked before the body', method: 'POST', path: '/gallery/items', as: 'noGallery', raw: '{', expectStatus: 403, expectCode: 'capability_required' },
    { name: 'the capability is checked before existence', path: `/gallery/items/${UNKNOWN_ID}`, as: 'noGallery', expectStatus: 403, expectCode: 'capability_required' },
    { name: 'the capability is checked before the query', path: '/gallery/items?limit=0', as: 'noGallery', expectStatus: 403, expectCode: 'capability_required' },
    { name: 'the token is checked before the capability', path: '/gallery/items', token: 'nope', expectStatus: 401, expectCode: 'unauthenticated' },
  );
  runScenarios(() => env, rows);

  test('refused requests changed nothing', async () => {
    const it = assertItem(await alpha.get(`/gallery/items/${env.ids.item}`), 200);
    assert.equal(it.title, 'cap target');
    assert.equal(it.created_at, it.updated_at);
    const titles = (await alpha.get('/gallery/items?limit=500')).json.items.map((i: any) => i.title);
    assert.ok(!titles.includes('refused'));
  });
});

// ---------------------------------------------------------------------------
describe('who sees what: another studio\'s item, deleted items', () => {
  const item = (e: ScenarioEnv, key: string) => `/gallery/items/${e.ids![key]}`;
  runScenarios(() => env, [
    { name: 'GET another studio\'s item: 404', path: (e) => item(e, 'betaItem'), as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'GET another studio\'s item with gallery.read_all: 200', path: (e) => item(e, 'betaItem'), as: 'alphaAll', expectStatus: 200, expectJson: { studio_id: 'beta', title: 'beta only' } },
    { name: 'PATCH another studio\'s item with gallery.read_all: 404', method: 'PATCH', path: (e) => item(e, 'betaItem'), as: 'alphaAll', body: { title: 'stolen' }, contentType: MERGE, expectStatus: 404, expectCode: 'not_found' },
    { name: 'PATCH another studio\'s item with a bad body: 404 before 400', method: 'PATCH', path: (e) => item(e, 'betaItem'), as: 'alphaAll', body: { params: {} }, contentType: MERGE, expectStatus: 404, expectCode: 'not_found' },
    { name: 'PATCH another studio\'s item without read_all: 404', method: 'PATCH', path: (e) => item(e, 'betaItem'), as: 'alpha', body: { starred: true }, contentType: MERGE, expectStatus: 404, expectCode: 'not_found' },
    { name: 'DELETE another studio\'s item with gallery.read_all: 404', method: 'DELETE', path: (e) => item(e, 'betaItem'), as: 'alphaAll', expectStatus: 404, expectCode: 'not_found' },
    { name: 'DELETE another studio\'s item without read_all: 404', method: 'DELETE', path: (e) => item(e, 'betaItem'), as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'lineage of another studio\'s item: 404', path: (e) => `${item(e, 'betaItem')}/lineage`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'lineage of another studio\'s item with gallery.read_all: 200', path: (e) => `${item(e, 'betaItem')}/lineage`, as: 'alphaAll', expectStatus: 200, expectJson: { items: [], next_cursor: null } },
    { name: 'GET an unknown item: 404', path: `/gallery/items/${UNKNOWN_ID}`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'GET an id of no ULID form: 404', path: '/gallery/items/nope', as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    // An id that cannot exist is absent like any unknown one (GET and DELETE answer only 404).
    { name: 'GET an id of 65 characters: 404', path: `/gallery/items/${'A'.repeat(65)}`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'GET an id of 2,000 characters: 404', path: `/gallery/items/${'A'.repeat(2000)}`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'DELETE an id of 65 characters: 404', method: 'DELETE', path: `/gallery/items/${'A'.repeat(65)}`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'PATCH an id of 65 characters: 404', method: 'PATCH', path: `/gallery/items/${'A'.repeat(65)}`, as: 'alpha', body: { title: 'x' }, contentType: MERGE, expectStatus: 404, expectCode: 'not_found' },
    { name: 'lineage of an id of 65 characters: 404', path: `/gallery/items/${'A'.repeat(65)}/lineage`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'asset lineage of an id of 65 characters: 404', path: `/assets/${'A'.repeat(65)}/lineage`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'PATCH an unknown item: 404', method: 'PATCH', path: `/gallery/items/${UNKNOWN_ID}`, as: 'alpha', body: { title: 'x' }, contentType: MERGE, expectStatus: 404, expectCode: 'not_found' },
    { name: 'DELETE an unknown item: 404', method: 'DELETE', path: `/gallery/items/${UNKNOWN_ID}`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'lineage of an unknown item: 404', path: `/gallery/items/${UNKNOWN_ID}/lineage`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'GET a deleted item: 404', path: (e) => item(e, 'deleted'), as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'GET a deleted item with gallery.read_all: 404', path: (e) => item(e, 'deleted'), as: 'alphaAll', expectStatus: 404, expectCode: 'not_found' },
    { name: 'PATCH a deleted item: 404', method: 'PATCH', path: (e) => item(e, 'deleted'), as: 'alpha', body: { title: 'back' }, contentType: MERGE, expectStatus: 404, expectCode: 'not_found' },
    { name: 'DELETE a deleted item: 404', method: 'DELETE', path: (e) => item(e, 'deleted'), as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'lineage of a deleted item: 404', path: (e) => `${item(e, 'deleted')}/lineage`, as: 'alphaAll', expectStatus: 404, expectCode: 'not_found' },
    { name: 'asset lineage of an asset the caller cannot read: 404', path: (e) => `/assets/${e.ids!.betaAsset}/lineage`, as: 'alphaAll', expectStatus: 404, expectCode: 'not_found' },
    { name: 'asset lineage of an unknown asset: 404', path: `/assets/${UNKNOWN_ID}/lineage`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'asset lineage needs gallery only (a token without assets)', path: (e) => `/assets/${e.ids!.asset}/lineage`, as: 'alphaGallery', expectStatus: 200, expectJson: { items: [], next_cursor: null } },
    { name: 'the other endpoints need no assets capability either', path: (e) => item(e, 'item'), as: 'alphaGallery', expectStatus: 200 },
  ]);

  test('the refused writes left another studio\'s item as it was', async () => {
    const it = assertItem(await beta.get(`/gallery/items/${env.ids.betaItem}`), 200);
    assert.equal(it.title, 'beta only');
    assert.equal(it.starred, false);
    assert.equal(it.created_at, it.updated_at);
  });
});

// ---------------------------------------------------------------------------
describe('POST /gallery/items', () => {
  test('201 Item with exactly the members of an Item, as sent; GET reads the same', async () => {
    const before = new Date().toISOString();
    const params = { prompt: 'a cat on a mat', seed: 42, nested: { list: [1, 'two', null], flag: false }, 'é 🎬': 'ok' };
    const inputs = [
      { asset_id: env.ids.video, role: 'init_video' },
      { asset_id: env.ids.audio, role: 'soundtrack' },
    ];
    const it = await createItem(alpha, {
      asset_id: env.ids.asset,
      title: 'Full item ✓',
      tags: ['one', 'two words', 'ünï'],
      starred: true,
      session_id: env.ids.session,
      params,
      inputs,
    });
    assert.equal(it.studio_id, 'alpha');
    assert.equal(it.asset_id, env.ids.asset);
    assert.equal(it.kind, 'image');
    assert.equal(it.title, 'Full item ✓');
    assert.deepEqual(it.tags, ['one', 'two words', 'ünï']);
    assert.equal(it.starred, true);
    assert.equal(it.session_id, env.ids.session);
    assert.deepEqual(it.params, params);
    assert.deepEqual(it.inputs, inputs);
    assert.equal(it.timeline_id, null);
    assert.equal(it.updated_at, it.created_at);
    assert.ok(it.created_at >= before && it.created_at <= new Date().toISOString(), it.created_at);
    assert.deepEqual(assertItem(await alpha.get(`/gallery/items/${it.id}`), 200), it);
  });

  test('params are stored as sent, every member included (even one named __proto__)', async () => {
    const raw = `{"asset_id":"${env.ids.asset}","params":{"__proto__":{"x":1},"prompt":"proto","constructor":"c","a":{"__proto__":[1]}}}`;
    const res = await send(svc.port, { method: 'POST', path: '/api/v1/gallery/items', token: env.tokens.alpha, raw });
    const it = assertItem(res, 201);
    const expected = JSON.parse('{"__proto__":{"x":1},"prompt":"proto","constructor":"c","a":{"__proto__":[1]}}');
    assert.deepEqual(Object.keys(it.params), ['__proto__', 'prompt', 'constructor', 'a']);
    assert.deepEqual(it.params, expected);
    assert.deepEqual(JSON.parse((await alpha.get(`/gallery/items/${it.id}`)).text).params, expected);
  });

  test('only asset_id is required; the defaults', async () => {
    const it = await createItem(alpha, { asset_id: env.ids.other });
    assert.deepEqual(
      { ...it, id: 0, created_at: 0, updated_at: 0 },
      { id: 0, studio_id: 'alpha', asset_id: env.ids.other, kind: 'other', title: null, tags: [], starred: false, session_id: null, params: {}, inputs: [], timeline_id: null, created_at: 0, updated_at: 0 },
    );
    const explicit = await createItem(alpha, { asset_id: env.ids.other, title: null, session_id: null, starred: false, tags: [], inputs: [], params: {} });
    assert.equal(explicit.title, null);
    assert.equal(explicit.session_id, null);
  });

  test('kind is the asset\'s kind', async () => {
    for (const [key, kind] of [['asset', 'image'], ['video', 'video'], ['audio', 'audio'], ['other', 'other']] as const) {
      assert.equal((await createItem(alpha, { asset_id: env.ids[key] })).kind, kind);
    }
  });

  test('duplicate (asset_id, role) inputs and duplicate tags collapse, first kept, order kept', async () => {
    const { asset, video, audio } = env.ids;
    const it = await createItem(alpha, {
      asset_id: asset,
      tags: ['b', 'a', 'b', 'c', 'a'],
      inputs: [
        { asset_id: video, role: 'init' },
        { asset_id: audio, role: 'init' },
        { asset_id: video, role: 'init' },
        { asset_id: video, role: 'mask' },
        { asset_id: audio, role: 'init' },
      ],
    });
    assert.deepEqual(it.tags, ['b', 'a', 'c']);
    assert.deepEqual(it.inputs, [
      { asset_id: video, role: 'init' },
      { asset_id: audio, role: 'init' },
      { asset_id: video, role: 'mask' },
    ]);
    assert.deepEqual((await alpha.get(`/gallery/items/${it.id}`)).json.tags, ['b', 'a', 'c']);
    const tagged = (await alpha.get('/gallery/items?tag=b&tag=c&limit=500')).json.items;
    assert.deepEqual(tagged.map((i: any) => i.id), [it.id]);
  });

  test('an asset of another studio becomes usable once the caller uploads the same bytes', async () => {
    const { randomBytes } = await import('node:crypto');
    const { upload } = await import('./helpers/assets');
    const bytes = randomBytes(300);
    const mine = (await upload(svc.port, env.tokens.beta!, bytes, 'kind=other')).json;
    assertError(await alpha.post('/gallery/items', { asset_id: mine.id }), 404, 'not_found');
    assert.equal((await upload(svc.port, env.tokens.alpha!, bytes, 'kind=other')).status, 200);
    await createItem(alpha, { asset_id: mine.id });
  });

  const post = (name: string, body: (e: ScenarioEnv) => unknown, expectStatus: number, expectCode: string): Scenario => ({
    name,
    method: 'POST',
    path: '/gallery/items',
    as: 'alpha',
    get body() {
      return body(env);
    },
    expectStatus,
    expectCode,
  });
  describe('unreadable assets and sessions', () => {
    runScenarios(() => env, [
      post('an unknown asset_id: 404', () => ({ asset_id: UNKNOWN_ID }), 404, 'not_found'),
      post('an asset_id of no ULID form: 404', () => ({ asset_id: 'nope' }), 404, 'not_found'),
      post('another studio\'s asset: 404', (e) => ({ asset_id: e.ids!.betaAsset }), 404, 'not_found'),
      post('an unknown input asset: 404', (e) => ({ asset_id: e.ids!.asset, inputs: [{ asset_id: UNKNOWN_ID, role: 'init' }] }), 404, 'not_found'),
      post('another studio\'s input asset: 404', (e) => ({ asset_id: e.ids!.asset, inputs: [{ asset_id: e.ids!.betaAsset, role: 'init' }] }), 404, 'not_found'),
      post('an unknown session: 422 unknown_session', (e) => ({ asset_id: e.ids!.asset, session_id: UNKNOWN_ID }), 422, 'unknown_session'),
      post('a deleted session: 422 unknown_session', (e) => ({ asset_id: e.ids!.asset, session_id: e.ids!.deadSession }), 422, 'unknown_session'),
      post('another studio\'s session: 422 unknown_session', (e) => ({ asset_id: e.ids!.asset, session_id: e.ids!.betaSession }), 422, 'unknown_session'),
      post('an unreadable asset is 404 before an unknown session', (e) => ({ asset_id: e.ids!.betaAsset, session_id: UNKNOWN_ID }), 404, 'not_found'),
    ]);
  });

  describe('bad bodies: 400', () => {
    const a = (e: ScenarioEnv) => e.ids!.asset;
    const deep = (n: number) => {
      let v: unknown = 1;
      for (let i = 0; i < n; i++) v = { v };
      return v as Record<string, unknown>;
    };
    runScenarios(() => env, [
      post('an unknown member', (e) => ({ asset_id: a(e), colour: 'red' }), 400, 'bad_request'),
      post('kind is not accepted (it comes from the asset)', (e) => ({ asset_id: a(e), kind: 'image' }), 400, 'bad_request'),
      post('timeline_id is not accepted', (e) => ({ asset_id: a(e), timeline_id: UNKNOWN_ID }), 400, 'bad_request'),
      post('id is not accepted', (e) => ({ asset_id: a(e), id: UNKNOWN_ID }), 400, 'bad_request'),
      post('asset_id missing', () => ({ title: 'x' }), 400, 'bad_request'),
      post('asset_id a number', () => ({ asset_id: 5 }), 400, 'bad_request'),
      post('asset_id null', () => ({ asset_id: null }), 400, 'bad_request'),
      post('asset_id empty', () => ({ asset_id: '' }), 400, 'bad_request'),
      post('title a number', (e) => ({ asset_id: a(e), title: 5 }), 400, 'bad_request'),
      post('title of 1001 characters', (e) => ({ asset_id: a(e), title: 't'.repeat(1001) }), 400, 'bad_request'),
      post('tags not an array', (e) => ({ asset_id: a(e), tags: 'x' }), 400, 'bad_request'),
      post('tags null', (e) => ({ asset_id: a(e), tags: null }), 400, 'bad_request'),
      post('a tag not a string', (e) => ({ asset_id: a(e), tags: [1] }), 400, 'bad_request'),
      post('an empty tag', (e) => ({ asset_id: a(e), tags: ['ok', ''] }), 400, 'bad_request'),
      post('a tag of 101 characters', (e) => ({ asset_id: a(e), tags: ['g'.repeat(101)] }), 400, 'bad_request'),
      post('101 tags', (e) => ({ asset_id: a(e), tags: Array.from({ length: 101 }, (_, i) => `t${i}`) }), 400, 'bad_request'),
      post('starred a string', (e) => ({ asset_id: a(e), starred: 'true' }), 400, 'bad_request'),
      post('starred null', (e) => ({ asset_id: a(e), starred: null }), 400, 'bad_request'),
      post('session_id a number', (e) => ({ asset_id: a(e), session_id: 5 }), 400, 'bad_request'),
      post('params an array', (e) => ({ asset_id: a(e), params: [1] }), 400, 'bad_request'),
      post('params a string', (e) => ({ asset_id: a(e), params: 'x' }), 400, 'bad_request'),
      post('params null', (e) => ({ asset_id: a(e), params: null }), 400, 'bad_request'),
      post('params nested too deep: invalid_document', (e) => ({ asset_id: a(e), params: deep(150) }), 400, 'invalid_document'),
      post('inputs not an array', (e) => ({ asset_id: a(e), inputs: { asset_id: a(e), role: 'x' } }), 400, 'bad_request'),
      post('an input not an object', (e) => ({ asset_id: a(e), inputs: [a(e)] }), 400, 'bad_request'),
      post('an input without role', (e) => ({ asset_id: a(e), inputs: [{ asset_id: a(e) }] }), 400, 'bad_request'),
      post('an input without asset_id', (e) => ({ asset_id: a(e), inputs: [{ role: 'init' }] }), 400, 'bad_request'),
      post('an input with an empty role', (e) => ({ asset_id: a(e), inputs: [{ asset_id: a(e), role: '' }] }), 400, 'bad_request'),
      post('an input with a role of 101 characters', (e) => ({ asset_id: a(e), inputs: [{ asset_id: a(e), role: 'r'.repeat(101) }] }), 400, 'bad_request'),
      post('an input with an unknown member', (e) => ({ asset_id: a(e), inputs: [{ asset_id: a(e), role: 'init', weight: 1 }] }), 400, 'bad_request'),
      post('a JSON array body', (e) => [{ asset_id: a(e) }], 400, 'bad_request'),
      post('a JSON string body', () => 'x', 400, 'bad_request'),
      { name: 'malformed JSON', method: 'POST', path: '/gallery/items', as: 'alpha', raw: '{"asset_id":', expectStatus: 400, expectCode: 'bad_request' },
      { name: 'no body', method: 'POST', path: '/gallery/items', as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
      { name: 'a non-JSON content type', method: 'POST', path: '/gallery/items', as: 'alpha', raw: '{}', contentType: 'text/plain', expectStatus: 400, expectCode: 'bad_request' },
      {
        name: 'a body over the body limit: 413 too_large with details.limit',
        method: 'POST',
        path: '/gallery/items',
        as: 'alpha',
        get body() {
          return { asset_id: env.ids.asset, params: { prompt: 'p'.repeat(BODY_LIMIT) } };
        },
        expectStatus: 413,
        expectCode: 'too_large',
        expectDetails: { limit: BODY_LIMIT },
      },
    ]);

    test('the limits themselves are accepted: title of 1000, 100 tags of 100, role of 100', async () => {
      const tags = Array.from({ length: 100 }, (_, i) => `${i}`.padStart(100, 'x'));
      const it = await createItem(alpha, {
        asset_id: env.ids.asset,
        title: 'é'.repeat(1000),
        tags,
        inputs: [{ asset_id: env.ids.video, role: 'r'.repeat(100) }],
        params: { prompt: 'limits' },
      });
      assert.equal([...it.title].length, 1000);
      assert.deepEqual(it.tags, tags);
    });
  });

  test('a create that fails leaves nothing: no item, no search hit, no tag, no asset filter hit, no reference', async () => {
    const out = await newAsset(svc.port, env.tokens.alpha!, 'other');
    const firstInput = await newAsset(svc.port, env.tokens.alpha!, 'other');
    const body = {
      asset_id: out.id,
      title: 'atomicityword',
      tags: ['atomic-tag'],
      params: { prompt: 'atomicityprompt' },
    };
    const before = (await alphaAll.get('/gallery/items?scope=all&limit=500')).json.items;
    assertError(
      await alpha.post('/gallery/items', { ...body, inputs: [{ asset_id: firstInput.id, role: 'a' }, { asset_id: env.ids.betaAsset, role: 'b' }] }),
      404,
      'not_found',
    );
    assertError(await alpha.post('/gallery/items', { ...body, inputs: [{ asset_id: firstInput.id, role: 'a' }], session_id: env.ids.deadSession }), 422, 'unknown_session');
    assert.deepEqual((await alphaAll.get('/gallery/items?scope=all&limit=500')).json.items, before);
    for (const query of ['tag=atomic-tag', 'q=atomicityword', 'q=atomicityprompt', `asset_id=${out.id}`, `asset_id=${firstInput.id}`]) {
      const res = await alpha.get(`/gallery/items?${query}`);
      assert.deepEqual(res.json, { items: [], next_cursor: null }, query);
    }
    assert.deepEqual((await alpha.get(`/assets/${firstInput.id}/lineage`)).json, { items: [], next_cursor: null });
    // Never referenced, so never reclaimable (docs/api.md "Reclaim `POST /assets:reclaim`"): the failed create did not count.
    assertError(await alpha.post('/assets:reclaim', { asset_ids: [out.id, firstInput.id] }), 409, 'not_reclaimable');
  });
});

// ---------------------------------------------------------------------------
describe('PATCH /gallery/items/{id}: closed merge patch', () => {
  const patch = (c: Client, id: string, body: unknown) => c.patch(`/gallery/items/${id}`, body);

  test('title, tags and starred change; updated_at moves, created_at and everything else stay', async () => {
    const it = await createItem(alpha, {
      asset_id: env.ids.asset,
      title: 'before',
      tags: ['p-a', 'p-b'],
      session_id: env.ids.session,
      params: { prompt: 'kept' },
      inputs: [{ asset_id: env.ids.video, role: 'init' }],
    });
    await pause();
    const changed = assertItem(await patch(alpha, it.id, { title: 'after', tags: ['p-c', 'p-c', 'p-d'], starred: true }), 200);
    assert.equal(changed.title, 'after');
    assert.deepEqual(changed.tags, ['p-c', 'p-d']);
    assert.equal(changed.starred, true);
    assert.equal(changed.created_at, it.created_at);
    assert.ok(changed.updated_at > it.updated_at, `${changed.updated_at} > ${it.updated_at}`);
    for (const k of ['id', 'studio_id', 'asset_id', 'kind', 'session_id', 'params', 'inputs', 'timeline_id'] as const) {
      assert.deepEqual(changed[k], it[k], k);
    }
    assert.deepEqual(assertItem(await alpha.get(`/gallery/items/${it.id}`), 200), changed);
    // The tag filter follows the new set.
    const tagged = async (tag: string) => (await alpha.get(`/gallery/items?tag=${tag}&limit=500`)).json.items.map((i: any) => i.id);
    assert.deepEqual(await tagged('p-a'), []);
    assert.deepEqual(await tagged('p-c'), [it.id]);
    assert.ok((await alpha.get('/gallery/items?starred=true&limit=500')).json.items.some((i: any) => i.id === it.id));

    // A member left out stays; title null clears; tags null clears; starred false.
    const title = assertItem(await patch(alpha, it.id, { starred: false }), 200);
    assert.equal(title.title, 'after');
    assert.deepEqual(title.tags, ['p-c', 'p-d']);
    const cleared = assertItem(await patch(alpha, it.id, { title: null, tags: null }), 200);
    assert.equal(cleared.title, null);
    assert.deepEqual(cleared.tags, []);
    assert.equal(cleared.starred, false);
    assert.deepEqual(await tagged('p-c'), []);
    assert.ok(!(await alpha.get('/gallery/items?starred=true&limit=500')).json.items.some((i: any) => i.id === it.id));
    const empty = assertItem(await patch(alpha, it.id, { tags: [] }), 200);
    assert.deepEqual(empty.tags, []);
    assert.equal(assertItem(await patch(alpha, it.id, {}), 200).created_at, it.created_at);
  });

  const bad = (name: string, body: unknown, extra: Partial<Scenario> = {}): Scenario => ({
    name,
    method: 'PATCH',
    path: (e) => `/gallery/items/${e.ids!.item}`,
    as: 'alpha',
    body,
    contentType: MERGE,
    expectStatus: 400,
    expectCode: 'bad_request',
    ...extra,
  });
  runScenarios(() => env, [
    bad('params cannot change', { params: { prompt: 'x' } }),
    bad('inputs cannot change', { inputs: [] }),
    bad('asset_id cannot change', { asset_id: UNKNOWN_ID }),
    bad('session_id cannot change', { session_id: null }),
    bad('timeline_id cannot change', { timeline_id: null }),
    bad('kind cannot change', { kind: 'video' }),
    bad('created_at cannot change', { created_at: '2020-01-01T00:00:00.000Z' }),
    bad('id cannot change', { id: UNKNOWN_ID }),
    bad('studio_id cannot change', { studio_id: 'beta' }),
    bad('an unknown member', { colour: 'red' }),
    bad('an allowed member beside a forbidden one', { title: 'sneaky', params: {} }),
    bad('title a number', { title: 5 }),
    bad('title of 1001 characters', { title: 't'.repeat(1001) }),
    bad('tags a string', { tags: 'x' }),
    bad('an empty tag', { tags: [''] }),
    bad('a tag of 101 characters', { tags: ['g'.repeat(101)] }),
    bad('101 tags', { tags: Array.from({ length: 101 }, (_, i) => `t${i}`) }),
    bad('starred a string', { starred: 'yes' }),
    bad('a JSON array body', [{ title: 'x' }]),
    bad('malformed JSON', undefined, { raw: '{"title":' }),
  ]);

  test('rejected patches changed nothing', async () => {
    const it = assertItem(await alpha.get(`/gallery/items/${env.ids.item}`), 200);
    assert.equal(it.title, 'cap target');
    assert.deepEqual(it.tags, ['keep']);
    assert.deepEqual(it.params, {});
    assert.equal(it.created_at, it.updated_at);
  });
});

// ---------------------------------------------------------------------------
describe('DELETE /gallery/items/{id}: soft', () => {
  test('204; then 404 for GET, PATCH, DELETE and lineage; gone from every list and search', async () => {
    const out = await newAsset(svc.port, env.tokens.alpha!, 'image');
    const it = await createItem(alpha, {
      asset_id: out.id,
      title: 'doomedword',
      tags: ['doomed-tag'],
      starred: true,
      session_id: env.ids.session,
      params: { prompt: 'doomedprompt' },
      inputs: [{ asset_id: env.ids.video, role: 'init' }],
    });
    const queries = [
      'limit=500',
      'tag=doomed-tag',
      'q=doomedword',
      'q=doomedprompt',
      `asset_id=${out.id}`,
      `session_id=${env.ids.session}&limit=500`,
      'starred=true&limit=500',
      'kind=image&limit=500',
      `since=${encodeURIComponent(it.created_at)}`,
    ];
    const listed = async (c: Client, q: string) => (await c.get(`/gallery/items?${q}`)).json.items.some((i: any) => i.id === it.id);
    for (const q of queries) assert.ok(await listed(alpha, q), `listed before: ${q}`);
    assert.ok(await listed(alphaAll, 'scope=all&limit=500'));
    assert.ok((await alpha.get(`/assets/${env.ids.video}/lineage?limit=500`)).json.items.some((i: any) => i.id === it.id));

    const res = await alpha.delete(`/gallery/items/${it.id}`);
    assert.equal(res.status, 204);
    assert.equal(res.text, '');

    for (const q of queries) assert.ok(!(await listed(alpha, q)), `listed after: ${q}`);
    assert.ok(!(await listed(alphaAll, 'scope=all&limit=500')));
    assert.ok(!(await listed(alphaAll, 'scope=all&studio=alpha&limit=500')));
    assert.ok(!(await alpha.get(`/assets/${env.ids.video}/lineage?limit=500`)).json.items.some((i: any) => i.id === it.id));
    assertError(await alpha.get(`/gallery/items/${it.id}`), 404, 'not_found');
    assertError(await alphaAll.get(`/gallery/items/${it.id}`), 404, 'not_found');
    assertError(await alpha.patch(`/gallery/items/${it.id}`, { title: 'back' }), 404, 'not_found');
    assertError(await alpha.get(`/gallery/items/${it.id}/lineage`), 404, 'not_found');
    assertError(await alpha.delete(`/gallery/items/${it.id}`), 404, 'not_found');
  });
});
