import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { client, type HttpResponse } from './helpers/http';
import { assertError, runScenarios, type Scenario, type ScenarioEnv } from './helpers/scenario';
import { startService, type TestService } from './helpers/service';

/**
 * Sessions, black box (docs/api.md "Sessions"): the seven
 * endpoints against the real service. Single-request rules are scenario rows;
 * sequences (list order, merge patch, If-Match, quotas) are small explicit tests.
 */

type Client = ReturnType<typeof client>;

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SESSION_KEYS = ['created_at', 'etag', 'id', 'name', 'opened_at', 'state', 'updated_at'];
const UNKNOWN_ID = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
const MERGE = 'application/merge-patch+json';

let svc: TestService;
let env: ScenarioEnv & { ids: Record<string, string> };
let alpha: Client;
let beta: Client;

/** The stored size of a state: the byte length of its JSON text (docs/api.md "Documents"). */
const bytes = (state: object) => Buffer.byteLength(JSON.stringify(state));
/** A state of exactly n bytes (n >= 8: `{"s":""}`). */
const stateOf = (n: number) => ({ s: 'x'.repeat(n - 8) });
const pause = (ms = 5) => new Promise((r) => setTimeout(r, ms));
let counter = 0;
const uniq = (prefix: string) => `${prefix}-${++counter}`;

/** Asserts a single-session answer: status, exact members, formats, `ETag` = quoted etag. */
function assertSession(res: HttpResponse, status: number): any {
  assert.equal(res.status, status, res.text);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const s = res.json;
  assert.deepEqual(Object.keys(s).sort(), SESSION_KEYS);
  assert.match(s.id, ULID);
  assert.equal(typeof s.name, 'string');
  assert.ok(s.state && typeof s.state === 'object' && !Array.isArray(s.state));
  assert.ok(s.opened_at === null || INSTANT.test(s.opened_at), s.opened_at);
  assert.match(s.created_at, INSTANT);
  assert.match(s.updated_at, INSTANT);
  assert.equal(typeof s.etag, 'string');
  assert.equal(res.headers.etag, `"${s.etag}"`);
  return s;
}

async function create(c: Client, name: string, state?: object): Promise<any> {
  return assertSession(await c.post('/sessions', state === undefined ? { name } : { name, state }), 201);
}

async function listAll(c: Client, limit = 500): Promise<any[]> {
  const res = await c.get(`/sessions?limit=${limit}`);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.next_cursor, null);
  return res.json.items;
}

const names = async (c: Client) => (await listAll(c)).map((s) => s.name);

before(async () => {
  svc = await startService();
  const tokens = {
    alpha: svc.studio('alpha', ['kv']),
    beta: svc.studio('beta', ['kv']),
    revoked: '',
    nokv: '',
  };
  tokens.nokv = svc.token('alpha', ['records', 'jobs', 'gallery']);
  tokens.revoked = svc.token('alpha', ['kv']);
  assert.equal(svc.cli(['token', 'revoke', tokens.revoked]).code, 0);
  alpha = client(svc.port, tokens.alpha);
  beta = client(svc.port, tokens.beta);

  const ids: Record<string, string> = {};
  ids.live = (await create(alpha, 'live', { a: 1 })).id;
  ids.capTarget = (await create(alpha, 'cap-target', { keep: true })).id;
  ids.badPatchTarget = (await create(alpha, 'bad-patch-target', { keep: true })).id;
  ids.deleted = (await create(alpha, 'deleted', { gone: true })).id;
  assert.equal((await alpha.delete(`/sessions/${ids.deleted}`)).status, 204);
  ids.beta = (await create(beta, 'beta-only', { mine: 'beta' })).id;
  ids.betaEtag = (await beta.get(`/sessions/${ids.beta}`)).json.etag;
  ids.capEtag = (await alpha.get(`/sessions/${ids.capTarget}`)).json.etag;
  ids.badPatchEtag = (await alpha.get(`/sessions/${ids.badPatchTarget}`)).json.etag;
  env = { port: svc.port, tokens, ids };
});

after(async () => {
  await svc?.stop();
});

// ---------------------------------------------------------------------------
describe('token and capability (capability kv)', () => {
  const endpoints: Pick<Scenario, 'method' | 'path' | 'body' | 'contentType'>[] = [
    { method: 'GET', path: '/sessions' },
    { method: 'POST', path: '/sessions', body: { name: 'refused' } },
    { method: 'GET', path: (e) => `/sessions/${e.ids!.capTarget}` },
    { method: 'PATCH', path: (e) => `/sessions/${e.ids!.capTarget}`, body: { name: 'refused' }, contentType: MERGE },
    { method: 'DELETE', path: (e) => `/sessions/${e.ids!.capTarget}` },
    { method: 'POST', path: (e) => `/sessions/${e.ids!.capTarget}:activate` },
    { method: 'POST', path: (e) => `/sessions/${e.ids!.capTarget}:duplicate`, body: { name: 'refused' } },
  ];
  const label = (e: (typeof endpoints)[number]) =>
    `${e.method} ${typeof e.path === 'string' ? e.path : e.path({ port: 0, tokens: {}, ids: { capTarget: '{id}' } })}`;
  const rows: Scenario[] = endpoints.flatMap((e) => [
    { ...e, name: `${label(e)} without a token: 401`, expectStatus: 401, expectCode: 'unauthenticated' },
    { ...e, name: `${label(e)} with an unknown token: 401`, token: 'not-a-token', expectStatus: 401, expectCode: 'unauthenticated' },
    { ...e, name: `${label(e)} with a revoked token: 401`, as: 'revoked', expectStatus: 401, expectCode: 'unauthenticated' },
    {
      ...e,
      name: `${label(e)} without kv: 403 capability_required`,
      as: 'nokv',
      expectStatus: 403,
      expectCode: 'capability_required',
      expectDetails: { capability: 'kv' },
    },
  ]);
  rows.push(
    { name: 'the capability is checked before the body', method: 'POST', path: '/sessions', as: 'nokv', body: {}, expectStatus: 403, expectCode: 'capability_required', expectDetails: { capability: 'kv' } },
    { name: 'the capability is checked before existence', path: `/sessions/${UNKNOWN_ID}`, as: 'nokv', expectStatus: 403, expectCode: 'capability_required', expectDetails: { capability: 'kv' } },
    { name: 'the token is checked before the capability', path: '/sessions', token: 'nope', expectStatus: 401, expectCode: 'unauthenticated' },
  );
  runScenarios(() => env, rows);

  test('refused requests changed nothing', async () => {
    const s = assertSession(await alpha.get(`/sessions/${env.ids.capTarget}`), 200);
    assert.equal(s.etag, env.ids.capEtag);
    assert.equal(s.name, 'cap-target');
    assert.equal(s.opened_at, null);
    assert.ok(!(await names(alpha)).includes('refused'));
  });
});

// ---------------------------------------------------------------------------
describe('POST /sessions', () => {
  test('201 Session with exactly its members; ETag is the quoted etag; state defaults to {}', async () => {
    const before = new Date().toISOString();
    const s = await create(alpha, 'fresh');
    assert.equal(s.name, 'fresh');
    assert.deepEqual(s.state, {});
    assert.equal(s.opened_at, null);
    assert.ok(s.created_at >= before && s.created_at <= new Date().toISOString());
    const read = assertSession(await alpha.get(`/sessions/${s.id}`), 200);
    assert.deepEqual(read, s);
  });

  test('the given state is stored as sent', async () => {
    const state = { n: 1.5, t: 'héllo ✓ 🎬', list: [1, { x: null }], nested: { deep: { flag: false } }, nothing: null };
    const s = await create(alpha, 'with-state', state);
    assert.deepEqual(s.state, state);
    assert.deepEqual((await alpha.get(`/sessions/${s.id}`)).json.state, state);
  });

  const name200 = 'n'.repeat(200);
  runScenarios(() => env, [
    { name: 'name of 200 characters: 201', method: 'POST', path: '/sessions', as: 'alpha', body: { name: name200 }, expectStatus: 201, expectJson: { name: name200 } },
    { name: 'name of 200 non-ASCII characters: 201', method: 'POST', path: '/sessions', as: 'alpha', body: { name: 'é🎬'.repeat(100) }, expectStatus: 201 },
    { name: 'name of 1 character: 201', method: 'POST', path: '/sessions', as: 'alpha', body: { name: 'x' }, expectStatus: 201 },
    { name: 'name of 201 characters: 400', method: 'POST', path: '/sessions', as: 'alpha', body: { name: 'n'.repeat(201) }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'empty name: 400', method: 'POST', path: '/sessions', as: 'alpha', body: { name: '' }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'numeric name: 400', method: 'POST', path: '/sessions', as: 'alpha', body: { name: 7 }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'null name: 400', method: 'POST', path: '/sessions', as: 'alpha', body: { name: null }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'missing name: 400', method: 'POST', path: '/sessions', as: 'alpha', body: { state: {} }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'unknown member: 400 bad_request', method: 'POST', path: '/sessions', as: 'alpha', body: { name: 'extra', color: 'red' }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'state null: 400 invalid_document', method: 'POST', path: '/sessions', as: 'alpha', body: { name: 'sn', state: null }, expectStatus: 400, expectCode: 'invalid_document' },
    { name: 'state array: 400 invalid_document', method: 'POST', path: '/sessions', as: 'alpha', body: { name: 'sa', state: [1] }, expectStatus: 400, expectCode: 'invalid_document' },
    { name: 'state string: 400 invalid_document', method: 'POST', path: '/sessions', as: 'alpha', body: { name: 'ss', state: 'x' }, expectStatus: 400, expectCode: 'invalid_document' },
    { name: 'state number: 400 invalid_document', method: 'POST', path: '/sessions', as: 'alpha', body: { name: 'sd', state: 3 }, expectStatus: 400, expectCode: 'invalid_document' },
    { name: 'malformed JSON: 400 bad_request', method: 'POST', path: '/sessions', as: 'alpha', raw: '{"name":', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'a JSON array body: 400 bad_request', method: 'POST', path: '/sessions', as: 'alpha', body: [{ name: 'arr' }], expectStatus: 400, expectCode: 'bad_request' },
    { name: 'no body: 400 bad_request', method: 'POST', path: '/sessions', as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'a non-JSON content type: 400 bad_request', method: 'POST', path: '/sessions', as: 'alpha', raw: '{"name":"plain"}', contentType: 'text/plain', expectStatus: 400, expectCode: 'bad_request' },
  ]);

  test('rejected creates wrote nothing', async () => {
    const listed = await names(alpha);
    for (const n of ['n'.repeat(201), '', 'extra', 'sn', 'sa', 'ss', 'sd', 'arr', 'plain']) assert.ok(!listed.includes(n), n);
  });

  test('a live name clash is 409 name_taken and writes nothing; names are per studio', async () => {
    const first = await create(alpha, 'clash', { v: 1 });
    const before = await listAll(alpha);
    assertError(await alpha.post('/sessions', { name: 'clash', state: { v: 2 } }), 409, 'name_taken');
    assert.deepEqual(await listAll(alpha), before);
    assert.deepEqual((await alpha.get(`/sessions/${first.id}`)).json.state, { v: 1 });
    await create(beta, 'clash');
  });

  test("a deleted session's name is free again", async () => {
    const old = await create(alpha, 'reused', { v: 'old' });
    assert.equal((await alpha.delete(`/sessions/${old.id}`)).status, 204);
    const again = await create(alpha, 'reused', { v: 'new' });
    assert.notEqual(again.id, old.id);
    assertError(await alpha.get(`/sessions/${old.id}`), 404, 'not_found');
  });
});

// ---------------------------------------------------------------------------
describe('GET /sessions/{id}', () => {
  runScenarios(() => env, [
    { name: 'own live session: 200', path: (e) => `/sessions/${e.ids!.live}`, as: 'alpha', expectStatus: 200, expectJson: { name: 'live', state: { a: 1 } } },
    { name: 'unknown ULID: 404', path: `/sessions/${UNKNOWN_ID}`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'garbage id: 404', path: '/sessions/not-an-id', as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'deleted session: 404', path: (e) => `/sessions/${e.ids!.deleted}`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: "another studio's session: 404", path: (e) => `/sessions/${e.ids!.beta}`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'the owner still reads it: 200', path: (e) => `/sessions/${e.ids!.beta}`, as: 'beta', expectStatus: 200, expectJson: { name: 'beta-only' } },
  ]);
});

// ---------------------------------------------------------------------------
describe('writes on a session the caller may not see are 404', () => {
  const targets: [string, (e: ScenarioEnv) => string][] = [
    ['an unknown id', () => UNKNOWN_ID],
    ['a garbage id', () => 'garbage'],
    ['a deleted session', (e) => e.ids!.deleted!],
    ["another studio's session", (e) => e.ids!.beta!],
  ];
  const rows: Scenario[] = targets.flatMap(([what, id]) => [
    { name: `PATCH ${what}: 404`, method: 'PATCH', path: (e) => `/sessions/${id(e)}`, as: 'alpha', body: { state: { hit: 1 } }, contentType: MERGE, expectStatus: 404, expectCode: 'not_found' },
    { name: `PATCH ${what} with If-Match *: 404`, method: 'PATCH', path: (e) => `/sessions/${id(e)}`, as: 'alpha', body: { state: { hit: 1 } }, contentType: MERGE, headers: { 'If-Match': '*' }, expectStatus: 404, expectCode: 'not_found' },
    { name: `DELETE ${what}: 404`, method: 'DELETE', path: (e) => `/sessions/${id(e)}`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: `DELETE ${what} with a stale If-Match: 404`, method: 'DELETE', path: (e) => `/sessions/${id(e)}`, as: 'alpha', headers: { 'If-Match': '"stale"' }, expectStatus: 404, expectCode: 'not_found' },
    { name: `activate ${what}: 404`, method: 'POST', path: (e) => `/sessions/${id(e)}:activate`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: `duplicate ${what}: 404`, method: 'POST', path: (e) => `/sessions/${id(e)}:duplicate`, as: 'alpha', body: { name: uniq('dup-of-unseen') }, expectStatus: 404, expectCode: 'not_found' },
  ]);
  // What the caller may not see is 404 before any other answer (400, 409).
  rows.push(
    { name: "duplicate another studio's session under a taken name: 404 before 409", method: 'POST', path: (e) => `/sessions/${e.ids!.beta}:duplicate`, as: 'alpha', body: { name: 'live' }, expectStatus: 404, expectCode: 'not_found' },
    { name: "PATCH another studio's session to a taken name: 404 before 409", method: 'PATCH', path: (e) => `/sessions/${e.ids!.beta}`, as: 'alpha', body: { name: 'live' }, contentType: MERGE, expectStatus: 404, expectCode: 'not_found' },
    { name: "PATCH another studio's session with name null: 404 before 400", method: 'PATCH', path: (e) => `/sessions/${e.ids!.beta}`, as: 'alpha', body: { name: null }, contentType: MERGE, expectStatus: 404, expectCode: 'not_found' },
    { name: 'PATCH a deleted session with state null: 404 before 400', method: 'PATCH', path: (e) => `/sessions/${e.ids!.deleted}`, as: 'alpha', body: { state: null }, contentType: MERGE, expectStatus: 404, expectCode: 'not_found' },
    { name: "duplicate another studio's session without a name: 404 before 400", method: 'POST', path: (e) => `/sessions/${e.ids!.beta}:duplicate`, as: 'alpha', body: {}, expectStatus: 404, expectCode: 'not_found' },
  );
  runScenarios(() => env, rows);

  test("the other studio's session is untouched", async () => {
    const s = assertSession(await beta.get(`/sessions/${env.ids.beta}`), 200);
    assert.equal(s.etag, env.ids.betaEtag);
    assert.deepEqual(s.state, { mine: 'beta' });
    assert.equal(s.opened_at, null);
    assert.ok(!(await names(alpha)).some((n) => n.startsWith('dup-of-unseen')));
  });
});

// ---------------------------------------------------------------------------
describe('GET /sessions', () => {
  test('ordered by opened_at desc, never opened last, then created_at desc; pages of 2 give each once', async () => {
    const lister = client(svc.port, svc.studio('lister', ['kv']));
    const s: Record<string, any> = {};
    for (const n of ['s1', 's2', 's3', 's4', 's5', 's6', 's7']) {
      s[n] = await create(lister, n);
      await pause();
    }
    assert.equal((await lister.delete(`/sessions/${s.s7.id}`)).status, 204);
    for (const n of ['s2', 's5', 's3']) {
      assert.equal((await lister.post(`/sessions/${s[n].id}:activate`)).status, 204);
      await pause();
    }
    const expected = ['s3', 's5', 's2', 's6', 's4', 's1'];
    const all = await listAll(lister);
    assert.deepEqual(all.map((x) => x.name), expected);
    for (const item of all) assert.deepEqual(Object.keys(item).sort(), SESSION_KEYS);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: HttpResponse = await lister.get(`/sessions?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(Object.keys(res.json).sort(), ['items', 'next_cursor']);
      assert.ok(res.json.items.length <= 2);
      seen.push(...res.json.items.map((x: any) => x.name));
      cursor = res.json.next_cursor;
      pages++;
    } while (cursor !== null && pages < 10);
    assert.deepEqual(seen, expected);
    assert.equal(pages, 3);

    // Activating again moves a session to the front.
    assert.equal((await lister.post(`/sessions/${s.s2.id}:activate`)).status, 204);
    assert.deepEqual(await names(lister), ['s2', 's3', 's5', 's6', 's4', 's1']);
  });

  test('pages stay consistent while sessions are inserted', async () => {
    const c = client(svc.port, svc.studio('inserter', ['kv']));
    for (const n of ['i1', 'i2', 'i3', 'i4', 'i5']) {
      await create(c, n);
      await pause();
    }
    const first = await c.get('/sessions?limit=2');
    assert.deepEqual(first.json.items.map((x: any) => x.name), ['i5', 'i4']);
    await create(c, 'i6');
    const seen = first.json.items.map((x: any) => x.name);
    let cursor = first.json.next_cursor;
    while (cursor) {
      const res = await c.get(`/sessions?limit=2&cursor=${encodeURIComponent(cursor)}`);
      assert.equal(res.status, 200, res.text);
      seen.push(...res.json.items.map((x: any) => x.name));
      cursor = res.json.next_cursor;
    }
    assert.deepEqual(seen, ['i5', 'i4', 'i3', 'i2', 'i1']);
  });

  test("only the caller's live sessions are listed", async () => {
    const listed = await listAll(alpha);
    const ids = listed.map((x) => x.id);
    assert.ok(ids.includes(env.ids.live));
    assert.ok(!ids.includes(env.ids.deleted), 'deleted session listed');
    assert.ok(!ids.includes(env.ids.beta), "another studio's session listed");
    const betaIds = (await listAll(beta)).map((x) => x.id);
    assert.ok(betaIds.includes(env.ids.beta));
    assert.ok(!betaIds.includes(env.ids.live));
  });

  test('a studio with no sessions gets an empty page', async () => {
    const empty = client(svc.port, svc.studio('empty', ['kv']));
    const res = await empty.get('/sessions');
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { items: [], next_cursor: null });
  });

  runScenarios(() => env, [
    { name: 'limit=1: 200 with one item', path: '/sessions?limit=1', as: 'alpha', expectStatus: 200, check: (r) => assert.equal(r.json.items.length, 1) },
    { name: 'limit=500: 200', path: '/sessions?limit=500', as: 'alpha', expectStatus: 200 },
    { name: 'limit=0: 400', path: '/sessions?limit=0', as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'limit=501: 400', path: '/sessions?limit=501', as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'limit=abc: 400', path: '/sessions?limit=abc', as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'limit=-1: 400', path: '/sessions?limit=-1', as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'limit=1.5: 400', path: '/sessions?limit=1.5', as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'garbage cursor: 400 bad_cursor', path: '/sessions?cursor=garbage', as: 'alpha', expectStatus: 400, expectCode: 'bad_cursor' },
    { name: 'empty cursor: 400 bad_cursor, as on every list', path: '/sessions?cursor=', as: 'alpha', expectStatus: 400, expectCode: 'bad_cursor' },
    { name: 'dotted garbage cursor: 400 bad_cursor', path: '/sessions?cursor=abc.def', as: 'alpha', expectStatus: 400, expectCode: 'bad_cursor' },
  ]);

  test('a tampered cursor, a KV cursor, or another studio\'s cursor is 400 bad_cursor', async () => {
    const page = await alpha.get('/sessions?limit=1');
    const cursor: string = page.json.next_cursor;
    assert.ok(cursor, 'alpha has more than one session');
    // Change a character that carries data (not base64 padding bits): one in the payload, one in the signature.
    const flipAt = (i: number) => cursor.slice(0, i) + (cursor[i] === 'A' ? 'B' : 'A') + cursor.slice(i + 1);
    const dot = cursor.indexOf('.');
    const tampered = [flipAt(0), flipAt(dot + 1), cursor.slice(0, dot), `${cursor}x`];
    for (const t of tampered) assertError(await alpha.get(`/sessions?cursor=${encodeURIComponent(t)}`), 400, 'bad_cursor');

    for (const key of ['a', 'b', 'c']) assert.equal((await alpha.put(`/kv/curs/${key}`, { v: key })).status, 200);
    const kvCursor = (await alpha.get('/kv/curs?limit=1')).json.next_cursor;
    assert.ok(kvCursor);
    assertError(await alpha.get(`/sessions?cursor=${encodeURIComponent(kvCursor)}`), 400, 'bad_cursor');

    await create(beta, uniq('beta-extra'));
    const betaCursor = (await beta.get('/sessions?limit=1')).json.next_cursor;
    assert.ok(betaCursor);
    assertError(await alpha.get(`/sessions?cursor=${encodeURIComponent(betaCursor)}`), 400, 'bad_cursor');
    assert.equal((await beta.get(`/sessions?cursor=${encodeURIComponent(betaCursor)}`)).status, 200);
  });
});

// ---------------------------------------------------------------------------
describe('PATCH /sessions/{id}', () => {
  const patchRow = (name: string, body: unknown, code: string, extra: Partial<Scenario> = {}): Scenario => ({
    name,
    method: 'PATCH',
    path: (e) => `/sessions/${e.ids!.badPatchTarget}`,
    as: 'alpha',
    body,
    contentType: MERGE,
    expectStatus: 400,
    expectCode: code,
    ...extra,
  });
  runScenarios(() => env, [
    patchRow('name null: 400 bad_request', { name: null }, 'bad_request'),
    patchRow('empty name: 400 bad_request', { name: '' }, 'bad_request'),
    patchRow('name of 201 characters: 400 bad_request', { name: 'n'.repeat(201) }, 'bad_request'),
    patchRow('numeric name: 400 bad_request', { name: 1 }, 'bad_request'),
    patchRow('state null: 400 invalid_document', { state: null }, 'invalid_document'),
    patchRow('state array: 400 invalid_document', { state: [] }, 'invalid_document'),
    patchRow('state string: 400 invalid_document', { state: 'x' }, 'invalid_document'),
    patchRow('unknown member: 400 bad_request', { name: 'ok', opened_at: null }, 'bad_request'),
    patchRow('a JSON array body: 400 bad_request', [{ name: 'arr' }], 'bad_request'),
    patchRow('malformed JSON: 400 bad_request', undefined, 'bad_request', { raw: '{"state":{' }),
    patchRow('a non-JSON content type: 400 bad_request', undefined, 'bad_request', { raw: '{"name":"plain"}', contentType: 'text/plain' }),
    patchRow('a state nested 150 levels: 400 invalid_document', undefined, 'invalid_document', {
      raw: `{"state":${'{"a":'.repeat(150)}1${'}'.repeat(150)}}`,
    }),
    patchRow('a state nested 500000 levels: 400 invalid_document, never a crash', undefined, 'invalid_document', {
      raw: `{"state":${'{"a":'.repeat(500_000)}1${'}'.repeat(500_000)}}`,
    }),
    patchRow('a number outside the double range: 400 invalid_document', undefined, 'invalid_document', { raw: '{"state":{"n":1e400}}' }),
  ]);

  test('rejected patches changed nothing', async () => {
    const s = assertSession(await alpha.get(`/sessions/${env.ids.badPatchTarget}`), 200);
    assert.equal(s.etag, env.ids.badPatchEtag);
    assert.equal(s.name, 'bad-patch-target');
    assert.deepEqual(s.state, { keep: true });
  });

  test('state members merge (RFC 7396): null removes, objects merge, the rest replaces', async () => {
    const s = await create(alpha, uniq('merge'), { a: 1, b: { c: 1, d: 2 }, e: 3, list: [1, 2], keep: 'me' });
    const res = await alpha.patch(`/sessions/${s.id}`, { state: { b: { c: null, x: { y: 1 } }, e: null, list: [3], f: 'new' } });
    const p = assertSession(res, 200);
    const expected = { a: 1, b: { d: 2, x: { y: 1 } }, list: [3], keep: 'me', f: 'new' };
    assert.deepEqual(p.state, expected);
    assert.equal(p.name, s.name);
    assert.equal(p.id, s.id);
    assert.deepEqual((await alpha.get(`/sessions/${s.id}`)).json.state, expected);
  });

  test('rename; the new name is read back, the old one is free', async () => {
    const s = await create(alpha, uniq('before-rename'), { k: 1 });
    const p = assertSession(await alpha.patch(`/sessions/${s.id}`, { name: uniq('after-rename') }), 200);
    assert.notEqual(p.name, s.name);
    assert.deepEqual(p.state, { k: 1 });
    assert.equal((await alpha.get(`/sessions/${s.id}`)).json.name, p.name);
    await create(alpha, s.name);
  });

  test('rename to a live name is 409 name_taken and changes nothing; own name or a deleted name is fine', async () => {
    const taken = await create(alpha, uniq('taken'));
    const s = await create(alpha, uniq('renamer'), { v: 1 });
    assertError(await alpha.patch(`/sessions/${s.id}`, { name: taken.name, state: { v: 2 } }), 409, 'name_taken');
    const after = (await alpha.get(`/sessions/${s.id}`)).json;
    assert.equal(after.etag, s.etag);
    assert.equal(after.name, s.name);
    assert.deepEqual(after.state, { v: 1 });

    assert.equal(assertSession(await alpha.patch(`/sessions/${s.id}`, { name: s.name }), 200).name, s.name);
    assert.equal((await alpha.delete(`/sessions/${taken.id}`)).status, 204);
    assert.equal(assertSession(await alpha.patch(`/sessions/${s.id}`, { name: taken.name }), 200).name, taken.name);
  });

  test('If-Match: quoted, bare and * apply; stale is 409 etag_mismatch and changes nothing', async () => {
    const s = await create(alpha, uniq('ifmatch'), { n: 0 });
    const q = assertSession(await alpha.patch(`/sessions/${s.id}`, { state: { n: 1 } }, { 'If-Match': `"${s.etag}"` }), 200);
    const b = assertSession(await alpha.patch(`/sessions/${s.id}`, { state: { n: 2 } }, { 'If-Match': q.etag }), 200);
    const star = assertSession(await alpha.patch(`/sessions/${s.id}`, { state: { n: 3 } }, { 'If-Match': '*' }), 200);
    assert.deepEqual(star.state, { n: 3 });

    for (const stale of [`"${s.etag}"`, b.etag, '"never-issued"']) {
      assertError(await alpha.patch(`/sessions/${s.id}`, { name: uniq('nope'), state: { n: 99 } }, { 'If-Match': stale }), 409, 'etag_mismatch');
    }
    const now = (await alpha.get(`/sessions/${s.id}`)).json;
    assert.equal(now.etag, star.etag);
    assert.equal(now.name, s.name);
    assert.deepEqual(now.state, { n: 3 });
  });

  test('every write gives a new etag and updated_at; id and created_at stay', async () => {
    const s = await create(alpha, uniq('etags'));
    const etags = [s.etag];
    let last = s;
    for (const body of [{ state: { a: 1 } }, { name: uniq('etags-renamed') }, { state: { a: 1 } }, { state: {} }]) {
      await pause();
      const p = assertSession(await alpha.patch(`/sessions/${s.id}`, body), 200);
      assert.ok(!etags.includes(p.etag), 'etag reused');
      assert.ok(p.updated_at > last.updated_at, 'updated_at did not move');
      assert.equal(p.created_at, s.created_at);
      assert.equal(p.id, s.id);
      etags.push(p.etag);
      last = p;
    }
    assert.equal((await alpha.get(`/sessions/${s.id}`)).headers.etag, `"${last.etag}"`);
  });
});

// ---------------------------------------------------------------------------
describe('DELETE /sessions/{id}', () => {
  test('204, then 404 on read, on a second delete and in the list', async () => {
    const s = await create(alpha, uniq('del'));
    const res = await alpha.delete(`/sessions/${s.id}`);
    assert.equal(res.status, 204);
    assert.equal(res.text, '');
    assertError(await alpha.get(`/sessions/${s.id}`), 404, 'not_found');
    assertError(await alpha.delete(`/sessions/${s.id}`), 404, 'not_found');
    assert.ok(!(await listAll(alpha)).some((x) => x.id === s.id));
  });

  test('a stale If-Match is 409 etag_mismatch and the session stays; a matching one deletes', async () => {
    const s = await create(alpha, uniq('del-ifmatch'), { v: 1 });
    const p = assertSession(await alpha.patch(`/sessions/${s.id}`, { state: { v: 2 } }), 200);
    assertError(await alpha.delete(`/sessions/${s.id}`, { 'If-Match': `"${s.etag}"` }), 409, 'etag_mismatch');
    assert.equal(assertSession(await alpha.get(`/sessions/${s.id}`), 200).etag, p.etag);
    assert.equal((await alpha.delete(`/sessions/${s.id}`, { 'If-Match': `"${p.etag}"` })).status, 204);
    assertError(await alpha.get(`/sessions/${s.id}`), 404, 'not_found');
  });

  test('If-Match bare and * also delete', async () => {
    const a = await create(alpha, uniq('del-bare'));
    assert.equal((await alpha.delete(`/sessions/${a.id}`, { 'If-Match': a.etag })).status, 204);
    const b = await create(alpha, uniq('del-star'));
    assert.equal((await alpha.delete(`/sessions/${b.id}`, { 'If-Match': '*' })).status, 204);
    assertError(await alpha.get(`/sessions/${b.id}`), 404, 'not_found');
  });
});

// ---------------------------------------------------------------------------
describe('POST /sessions/{id}:activate', () => {
  test('204; opened_at = now; state, name, etag and updated_at unchanged', async () => {
    const s = await create(alpha, uniq('act'), { keep: [1, 2] });
    await pause();
    const t0 = new Date().toISOString();
    const res = await alpha.post(`/sessions/${s.id}:activate`);
    const t1 = new Date().toISOString();
    assert.equal(res.status, 204);
    assert.equal(res.text, '');
    const a = assertSession(await alpha.get(`/sessions/${s.id}`), 200);
    assert.match(a.opened_at, INSTANT);
    assert.ok(a.opened_at >= t0 && a.opened_at <= t1, `${t0} <= ${a.opened_at} <= ${t1}`);
    assert.deepEqual({ ...a, opened_at: null }, s);

    await pause();
    assert.equal((await alpha.post(`/sessions/${s.id}:activate`)).status, 204);
    const again = (await alpha.get(`/sessions/${s.id}`)).json;
    assert.ok(again.opened_at > a.opened_at, 'opened_at did not move on a second activate');
    assert.equal(again.etag, s.etag);
  });
});

// ---------------------------------------------------------------------------
describe('POST /sessions/{id}:duplicate', () => {
  test('201 copy: new id, copied state, never opened even when the source was', async () => {
    const src = await create(alpha, uniq('dup-src'), { deep: { a: [1, { b: 2 }] }, s: 'x' });
    assert.equal((await alpha.post(`/sessions/${src.id}:activate`)).status, 204);
    const name = uniq('dup-copy');
    const copy = assertSession(await alpha.post(`/sessions/${src.id}:duplicate`, { name }), 201);
    assert.notEqual(copy.id, src.id);
    assert.notEqual(copy.etag, src.etag);
    assert.equal(copy.name, name);
    assert.deepEqual(copy.state, src.state);
    assert.equal(copy.opened_at, null);
    assert.deepEqual(assertSession(await alpha.get(`/sessions/${copy.id}`), 200), copy);

    // The copy is independent of its source.
    await alpha.patch(`/sessions/${copy.id}`, { state: { s: null, added: true } });
    const source = (await alpha.get(`/sessions/${src.id}`)).json;
    assert.deepEqual(source.state, { deep: { a: [1, { b: 2 }] }, s: 'x' });
    assert.notEqual(source.opened_at, null);
  });

  test('a taken live name is 409 name_taken (the source\'s own too) and writes nothing', async () => {
    const src = await create(alpha, uniq('dup-clash'));
    const other = await create(alpha, uniq('dup-other'));
    const before = await listAll(alpha);
    assertError(await alpha.post(`/sessions/${src.id}:duplicate`, { name: other.name }), 409, 'name_taken');
    assertError(await alpha.post(`/sessions/${src.id}:duplicate`, { name: src.name }), 409, 'name_taken');
    assert.deepEqual(await listAll(alpha), before);
    assert.equal((await alpha.delete(`/sessions/${other.id}`)).status, 204);
    assertSession(await alpha.post(`/sessions/${src.id}:duplicate`, { name: other.name }), 201);
  });

  runScenarios(() => env, [
    { name: 'missing name: 400', method: 'POST', path: (e) => `/sessions/${e.ids!.live}:duplicate`, as: 'alpha', body: {}, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'empty name: 400', method: 'POST', path: (e) => `/sessions/${e.ids!.live}:duplicate`, as: 'alpha', body: { name: '' }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'null name: 400', method: 'POST', path: (e) => `/sessions/${e.ids!.live}:duplicate`, as: 'alpha', body: { name: null }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'name of 201 characters: 400', method: 'POST', path: (e) => `/sessions/${e.ids!.live}:duplicate`, as: 'alpha', body: { name: 'd'.repeat(201) }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'unknown member: 400', method: 'POST', path: (e) => `/sessions/${e.ids!.live}:duplicate`, as: 'alpha', body: { name: 'dup-extra', state: {} }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'no body: 400', method: 'POST', path: (e) => `/sessions/${e.ids!.live}:duplicate`, as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'malformed JSON: 400', method: 'POST', path: (e) => `/sessions/${e.ids!.live}:duplicate`, as: 'alpha', raw: '{"name"', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'name of 200 characters: 201', method: 'POST', path: (e) => `/sessions/${e.ids!.live}:duplicate`, as: 'alpha', body: { name: 'd'.repeat(200) }, expectStatus: 201, expectJson: { state: { a: 1 }, opened_at: null } },
  ]);
});

// ---------------------------------------------------------------------------
describe('unknown session routes', () => {
  runScenarios(() => env, [
    { name: 'PUT /sessions/{id}: 404', method: 'PUT', path: (e) => `/sessions/${e.ids!.live}`, as: 'alpha', body: { name: 'x' }, expectStatus: 404, expectCode: 'not_found' },
    { name: 'POST /sessions/{id}:nope: 404', method: 'POST', path: (e) => `/sessions/${e.ids!.live}:nope`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'DELETE /sessions: 404', method: 'DELETE', path: '/sessions', as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
  ]);
});

// ---------------------------------------------------------------------------
describe('kv_bytes quota (session state and KV documents together)', () => {
  const quota = (limit: number, used: number) => ({ quota: 'kv_bytes', limit, used });
  const assertQuota = (res: HttpResponse, limit: number, used: number) => {
    assertError(res, 429, 'quota_exceeded');
    assert.deepEqual(res.json.details, quota(limit, used));
  };

  test('create, patch and duplicate past the quota are 429 and write nothing; exactly full is fine', async () => {
    const c = client(svc.port, svc.studio('quota-a', ['kv'], ['--quota-kv-bytes', '100']));
    const a = await create(c, 'a', stateOf(60));

    assertQuota(await c.post('/sessions', { name: 'b', state: stateOf(41) }), 100, 60);
    assert.deepEqual(await names(c), ['a']);

    assertQuota(await c.post(`/sessions/${a.id}:duplicate`, { name: 'copy' }), 100, 60);
    assert.deepEqual(await names(c), ['a']);

    assertQuota(await c.patch(`/sessions/${a.id}`, { state: { s: 'x'.repeat(52 + 41) } }), 100, 60);
    const unchanged = (await c.get(`/sessions/${a.id}`)).json;
    assert.equal(unchanged.etag, a.etag);
    assert.deepEqual(unchanged.state, stateOf(60));

    // Growing by exactly what is left fills the quota; shrinking is always allowed.
    const grown = assertSession(await c.patch(`/sessions/${a.id}`, { state: stateOf(100) }), 200);
    assert.equal(bytes(grown.state), 100);
    assertQuota(await c.post('/sessions', { name: 'b' }), 100, 100);
    assertSession(await c.patch(`/sessions/${a.id}`, { state: stateOf(58) }), 200);
    const b = await create(c, 'b', stateOf(42));
    assert.equal(b.name, 'b');
    assertQuota(await c.post('/sessions', { name: 'c' }), 100, 100);
  });

  test('deleting a session frees its bytes', async () => {
    const c = client(svc.port, svc.studio('quota-b', ['kv'], ['--quota-kv-bytes', '100']));
    const big = await create(c, 'big', stateOf(90));
    assertQuota(await c.post('/sessions', { name: 'next', state: stateOf(20) }), 100, 90);
    assert.equal((await c.delete(`/sessions/${big.id}`)).status, 204);
    await create(c, 'next', stateOf(20));
    await create(c, 'more', stateOf(80));
    assertQuota(await c.post('/sessions', { name: 'last' }), 100, 100);
  });

  test('KV documents and session state count together', async () => {
    const c = client(svc.port, svc.studio('quota-c', ['kv'], ['--quota-kv-bytes', '100']));
    assert.equal((await c.put('/kv/ns/key', stateOf(50))).status, 200);
    const kvSize = (await c.get('/kv/ns')).json.items[0].size;
    assert.equal(kvSize, 50);

    assertQuota(await c.post('/sessions', { name: 'fits-alone', state: stateOf(60) }), 100, 50);
    assert.deepEqual(await names(c), []);
    const s = await create(c, 'half', stateOf(50));

    // And session bytes count against a KV write.
    const kv = await c.put('/kv/ns/other', { v: 1 });
    assertQuota(kv, 100, 100);

    assert.equal((await c.delete('/kv/ns/key')).status, 204);
    assert.equal((await c.delete(`/sessions/${s.id}`)).status, 204);
    await create(c, 'fits-alone', stateOf(60));
  });

  test('`studio set --quota-kv-bytes` while the server runs applies on the next request', async () => {
    const c = client(svc.port, svc.studio('quota-d', ['kv'], ['--quota-kv-bytes', '50']));
    const s = await create(c, 'first', stateOf(40));
    assertQuota(await c.post('/sessions', { name: 'second', state: stateOf(20) }), 50, 40);

    assert.equal(svc.cli(['studio', 'set', 'quota-d', '--quota-kv-bytes', '200']).code, 0);
    await create(c, 'second', stateOf(20));

    assert.equal(svc.cli(['studio', 'set', 'quota-d', '--quota-kv-bytes', '10']).code, 0);
    assertQuota(await c.post('/sessions', { name: 'third' }), 10, 60);
    assertQuota(await c.patch(`/sessions/${s.id}`, { state: { more: 1 } }), 10, 60);
    // Over quota, a shrinking write still goes through.
    assertSession(await c.patch(`/sessions/${s.id}`, { state: { s: null } }), 200);
  });
});

// ---------------------------------------------------------------------------
describe('JSON body limit (--body-limit 1000)', () => {
  let small: TestService;
  let c: Client;
  let id: string;

  /** A SessionCreate body of exactly n bytes. */
  const bodyOf = (name: string, n: number) => {
    const base = JSON.stringify({ name, state: { s: '' } });
    return JSON.stringify({ name, state: { s: 'x'.repeat(n - Buffer.byteLength(base)) } });
  };

  before(async () => {
    small = await startService({ args: ['--body-limit', '1000'] });
    c = client(small.port, small.studio('limited', ['kv']));
    id = (await create(c, 'target', { v: 1 })).id;
  });
  after(async () => {
    await small?.stop();
  });

  test('a body of exactly the limit is accepted', async () => {
    const raw = bodyOf('exact', 1000);
    assert.equal(Buffer.byteLength(raw), 1000);
    const res = await c.post('/sessions', JSON.parse(raw));
    assertSession(res, 201);
  });

  test('create, patch and duplicate over the limit are 413 too_large with details.limit, writing nothing', async () => {
    const raw = bodyOf('too-big', 1001);
    assertError(await c.post('/sessions', JSON.parse(raw)), 413, 'too_large', { limit: 1000 });
    assertError(await c.patch(`/sessions/${id}`, { state: { s: 'x'.repeat(2000) } }), 413, 'too_large', { limit: 1000 });
    assertError(await c.post(`/sessions/${id}:duplicate`, { name: 'n'.repeat(150).repeat(7) }), 413, 'too_large', { limit: 1000 });
    const names = (await c.get('/sessions')).json.items.map((s: any) => s.name);
    assert.ok(!names.includes('too-big'));
    assert.deepEqual((await c.get(`/sessions/${id}`)).json.state, { v: 1 });
  });

  test('a chunked body (no Content-Length) over the limit is 413 too', async () => {
    const raw = bodyOf('chunked-big', 5000);
    assertError(await c.post('/sessions', JSON.parse(raw), { 'Content-Length': undefined }), 413, 'too_large', { limit: 1000 });
  });
});
