import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startService, type TestService } from './helpers/service';
import { client, type HttpResponse } from './helpers/http';
import { assertError, runScenarios, type ScenarioEnv } from './helpers/scenario';

/** Records (docs/api.md "Records"). Filter semantics at scale: records-property.test.ts. */

const BODY_LIMIT = 32 * 1024;
let svc: TestService;
const env: ScenarioEnv & { ids: Record<string, string> } = { port: 0, tokens: {}, ids: {} };

before(async () => {
  svc = await startService({ args: ['--body-limit', String(BODY_LIMIT)] });
  env.port = svc.port;
  env.tokens.alpha = svc.studio('alpha', ['records']);
  env.tokens.beta = svc.studio('beta', ['records']);
  env.tokens.noRecords = svc.studio('gamma', ['kv']);
  env.tokens.small = svc.studio('small', ['records'], ['--quota-records', '2']);
  const made = await alpha().post('/records/notes', { title: 'first' });
  env.ids.note = made.json.id;
  env.ids.noteEtag = made.json.etag;
  env.ids.betaNote = (await beta().post('/records/notes', { title: 'theirs' })).json.id;
  const gone = await alpha().post('/records/notes', { title: 'deleted' });
  await alpha().delete(`/records/notes/${gone.json.id}`);
  env.ids.deleted = gone.json.id;
});
after(async () => {
  await svc.stop();
});

const alpha = () => client(env.port, env.tokens.alpha);
const beta = () => client(env.port, env.tokens.beta);
const ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;
const INSTANT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('access, names and bodies', () => {
  runScenarios(() => env, [
    { name: 'no token is 401', path: '/records/notes', expectStatus: 401, expectCode: 'unauthenticated' },
    { name: 'without the records capability 403', path: '/records/notes', as: 'noRecords', expectStatus: 403, expectCode: 'capability_required', expectDetails: { capability: 'records' } },
    { name: 'POST without the capability 403', method: 'POST', path: '/records/notes', as: 'noRecords', body: {}, expectStatus: 403, expectCode: 'capability_required' },
    { name: 'a collection name may not start with a digit', path: '/records/1notes', as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'a collection name may not start with _', method: 'POST', path: '/records/_x', as: 'alpha', body: {}, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'a collection name may not hold -', path: '/records/a-b', as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'a collection name may not hold unicode', path: '/records/caf%C3%A9', as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'a collection name of 65 characters is refused', path: `/records/${'c'.repeat(65)}`, as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'a collection name of 64 characters is fine', path: `/records/${'c'.repeat(64)}`, as: 'alpha', expectStatus: 200, expectJson: { items: [], next_cursor: null } },
    { name: 'any valid name works undeclared', path: '/records/Never_Used_9', as: 'alpha', expectStatus: 200, expectJson: { items: [], next_cursor: null } },
    { name: 'a bad collection on GET one is 400', path: (e) => `/records/a-b/${e.ids!.note}`, as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'POST of an array is invalid_document', method: 'POST', path: '/records/notes', as: 'alpha', body: [1], expectStatus: 400, expectCode: 'invalid_document' },
    { name: 'POST of null is invalid_document', method: 'POST', path: '/records/notes', as: 'alpha', raw: 'null', expectStatus: 400, expectCode: 'invalid_document' },
    { name: 'POST of a string is invalid_document', method: 'POST', path: '/records/notes', as: 'alpha', body: 'x', expectStatus: 400, expectCode: 'invalid_document' },
    { name: 'POST of a number is invalid_document', method: 'POST', path: '/records/notes', as: 'alpha', raw: '3', expectStatus: 400, expectCode: 'invalid_document' },
    { name: 'malformed JSON is bad_request', method: 'POST', path: '/records/notes', as: 'alpha', raw: '{"a":', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'reserved key id is invalid_document', method: 'POST', path: '/records/notes', as: 'alpha', body: { id: 'x' }, expectStatus: 400, expectCode: 'invalid_document', expectDetails: { reserved: ['id'] } },
    { name: 'reserved key created_at is invalid_document', method: 'POST', path: '/records/notes', as: 'alpha', body: { created_at: 1 }, expectStatus: 400, expectCode: 'invalid_document' },
    { name: 'reserved key updated_at is invalid_document', method: 'POST', path: '/records/notes', as: 'alpha', body: { a: 1, updated_at: null }, expectStatus: 400, expectCode: 'invalid_document' },
    { name: 'reserved key etag is invalid_document', method: 'POST', path: '/records/notes', as: 'alpha', body: { etag: 'e' }, expectStatus: 400, expectCode: 'invalid_document' },
    { name: 'a nested reserved name is an ordinary key', method: 'POST', path: '/records/notes', as: 'alpha', body: { meta: { id: 1, etag: 2 } }, expectStatus: 201 },
    { name: 'a body over the limit is 413', method: 'POST', path: '/records/notes', as: 'alpha', body: { big: 'x'.repeat(BODY_LIMIT) }, expectStatus: 413, expectCode: 'too_large', expectDetails: { limit: BODY_LIMIT } },
    { name: 'a document nested too deep is invalid_document', method: 'POST', path: '/records/notes', as: 'alpha', raw: `${'{"a":'.repeat(150)}1${'}'.repeat(150)}`, expectStatus: 400, expectCode: 'invalid_document' },
    { name: 'an unknown id is 404', path: '/records/notes/01ARZ3NDEKTSV4RRFFQ69G5FAV', as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'an id that is not a ULID is 404', path: '/records/notes/nope', as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'the lower-case form of an id is 404', path: (e) => `/records/notes/${e.ids!.note!.toLowerCase()}`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'a record in another collection is 404', path: (e) => `/records/other/${e.ids!.note}`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'another studio\'s record is 404', path: (e) => `/records/notes/${e.ids!.betaNote}`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'PUT of another studio\'s record is 404', method: 'PUT', path: (e) => `/records/notes/${e.ids!.betaNote}`, as: 'alpha', body: { a: 1 }, expectStatus: 404, expectCode: 'not_found' },
    { name: 'PATCH of another studio\'s record is 404', method: 'PATCH', path: (e) => `/records/notes/${e.ids!.betaNote}`, as: 'alpha', body: { a: 1 }, contentType: 'application/merge-patch+json', expectStatus: 404, expectCode: 'not_found' },
    { name: 'DELETE of another studio\'s record is 404', method: 'DELETE', path: (e) => `/records/notes/${e.ids!.betaNote}`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'PUT in another collection is 404', method: 'PUT', path: (e) => `/records/other/${e.ids!.note}`, as: 'alpha', body: { a: 1 }, expectStatus: 404, expectCode: 'not_found' },
    { name: 'a deleted record is 404', path: (e) => `/records/notes/${e.ids!.deleted}`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'PUT of a deleted record is 404', method: 'PUT', path: (e) => `/records/notes/${e.ids!.deleted}`, as: 'alpha', body: { a: 1 }, expectStatus: 404, expectCode: 'not_found' },
    { name: 'PUT of a deleted record with If-Match is 404', method: 'PUT', path: (e) => `/records/notes/${e.ids!.deleted}`, as: 'alpha', body: { a: 1 }, headers: { 'If-Match': '*' }, expectStatus: 404, expectCode: 'not_found' },
    { name: 'PATCH of a deleted record is 404', method: 'PATCH', path: (e) => `/records/notes/${e.ids!.deleted}`, as: 'alpha', body: { a: 1 }, expectStatus: 404, expectCode: 'not_found' },
    { name: 'DELETE of a deleted record is 404', method: 'DELETE', path: (e) => `/records/notes/${e.ids!.deleted}`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: '404 comes before a bad body', method: 'PUT', path: '/records/notes/01ARZ3NDEKTSV4RRFFQ69G5FAV', as: 'alpha', raw: '{"a":', expectStatus: 404, expectCode: 'not_found' },
    { name: 'a bad body is 400 before a stale If-Match', method: 'PUT', path: (e) => `/records/notes/${e.ids!.note}`, as: 'alpha', body: [1], headers: { 'If-Match': '"stale"' }, expectStatus: 400, expectCode: 'invalid_document' },
    { name: 'limit 0 is bad_request', path: '/records/notes?limit=0', as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'limit 501 is bad_request', path: '/records/notes?limit=501', as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'a garbage cursor is bad_cursor', path: '/records/notes?cursor=zzz', as: 'alpha', expectStatus: 400, expectCode: 'bad_cursor' },
  ]);
});

describe('writes', () => {
  test('POST creates a flat record: reserved members, then the document; ETag header', async () => {
    const res = await alpha().post('/records/writes', { title: 'x', n: 1.5, tags: ['a'], nested: { k: null } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(Object.keys(res.json), ['id', 'created_at', 'updated_at', 'etag', 'title', 'n', 'tags', 'nested']);
    assert.match(res.json.id, ULID);
    assert.match(res.json.created_at, INSTANT);
    assert.equal(res.json.updated_at, res.json.created_at);
    assert.equal(res.headers.etag, `"${res.json.etag}"`);
    const got = await alpha().get(`/records/writes/${res.json.id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.json, res.json);
    assert.equal(got.headers.etag, `"${res.json.etag}"`);
    const empty = await alpha().post('/records/writes', {});
    assert.deepEqual(Object.keys(empty.json), ['id', 'created_at', 'updated_at', 'etag']);
  });

  test('created_at is the instant of the id; ids grow with creation', async () => {
    const a = await alpha().post('/records/writes', { i: 1 });
    const b = await alpha().post('/records/writes', { i: 2 });
    assert.ok(b.json.id > a.json.id);
    assert.ok(b.json.created_at >= a.json.created_at);
  });

  test('PUT replaces the document; id and created_at stay, etag and updated_at move', async () => {
    const made = await alpha().post('/records/writes', { a: 1, b: 2 });
    await new Promise((r) => setTimeout(r, 5));
    const put = await alpha().put(`/records/writes/${made.json.id}`, { c: 3 });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(
      { ...put.json, etag: undefined, updated_at: undefined },
      { id: made.json.id, created_at: made.json.created_at, c: 3, etag: undefined, updated_at: undefined },
    );
    assert.notEqual(put.json.etag, made.json.etag);
    assert.ok(put.json.updated_at > made.json.updated_at);
    assert.equal(put.headers.etag, `"${put.json.etag}"`);
    assert.deepEqual((await alpha().get(`/records/writes/${made.json.id}`)).json, put.json);
    assertError(await alpha().put(`/records/writes/${made.json.id}`, { id: 'mine' }), 400, 'invalid_document');
    assertError(await alpha().put(`/records/writes/${made.json.id}`, [1]), 400, 'invalid_document');
  });

  test('PATCH merges (RFC 7396): null removes, nested objects merge, arrays replace', async () => {
    const made = await alpha().post('/records/writes', { a: 1, b: { x: 1, y: 2 }, list: [1, 2], gone: true });
    const res = await alpha().patch(`/records/writes/${made.json.id}`, { a: 2, b: { y: null, z: 3 }, list: [9], gone: null, added: 'n' });
    assert.equal(res.status, 200, res.text);
    const { id, created_at, updated_at, etag, ...doc } = res.json;
    assert.deepEqual(doc, { a: 2, b: { x: 1, z: 3 }, list: [9], added: 'n' });
    assert.equal(id, made.json.id);
    assert.equal(created_at, made.json.created_at);
    assert.notEqual(etag, made.json.etag);
    assert.ok(updated_at >= made.json.updated_at);
    // A patch that removes a reserved name the document never had is fine; one that sets it is not.
    assert.equal((await alpha().patch(`/records/writes/${made.json.id}`, { etag: null, id: null })).status, 200);
    assertError(await alpha().patch(`/records/writes/${made.json.id}`, { created_at: 'x' }), 400, 'invalid_document');
    assertError(await alpha().patch(`/records/writes/${made.json.id}`, [1]), 400, 'invalid_document');
    // 400 comes before 409: a reserved key with a stale If-Match is invalid_document (docs/api.md "Records and collections").
    const stale = await alpha().patch(`/records/writes/${made.json.id}`, { etag: 'x' }, { 'If-Match': '"stale"' });
    assertError(stale, 400, 'invalid_document', { reserved: ['etag'] });
  });

  test('a PATCH whose result outgrows the body limit is 413 and changes nothing', async () => {
    const made = await alpha().post('/records/writes', { a: 'x'.repeat(BODY_LIMIT / 2) });
    assertError(await alpha().patch(`/records/writes/${made.json.id}`, { b: 'y'.repeat(BODY_LIMIT / 2) }), 413, 'too_large', { limit: BODY_LIMIT });
    assert.equal((await alpha().get(`/records/writes/${made.json.id}`)).json.etag, made.json.etag);
  });

  for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
    test(`If-Match on ${method}: stale is 409 etag_mismatch and nothing changes; quoted, bare and * match`, async () => {
      const call = (id: string, ifMatch: string) => {
        const h = { 'If-Match': ifMatch };
        if (method === 'PUT') return alpha().put(`/records/writes/${id}`, { v: 2 }, h);
        if (method === 'PATCH') return alpha().patch(`/records/writes/${id}`, { v: 2 }, h);
        return alpha().delete(`/records/writes/${id}`, h);
      };
      const ok = method === 'DELETE' ? 204 : 200;
      const made = await alpha().post('/records/writes', { v: 1 });
      const changed = await alpha().patch(`/records/writes/${made.json.id}`, { w: 1 });
      assertError(await call(made.json.id, `"${made.json.etag}"`), 409, 'etag_mismatch');
      assertError(await call(made.json.id, made.json.etag), 409, 'etag_mismatch');
      assert.deepEqual((await alpha().get(`/records/writes/${made.json.id}`)).json, changed.json);
      for (const form of [`"${changed.json.etag}"`, changed.json.etag, '*']) {
        const fresh = await alpha().post('/records/writes', { v: 1 });
        const value = form === '*' ? '*' : form.replace(changed.json.etag, fresh.json.etag);
        assert.equal((await call(fresh.json.id, value)).status, ok, `If-Match ${form}`);
      }
    });
  }

  test('DELETE is soft: 204, then 404 everywhere and gone from every query', async () => {
    const made = await alpha().post('/records/softdel', { tag: 'x' });
    assert.equal((await alpha().delete(`/records/softdel/${made.json.id}`)).status, 204);
    assertError(await alpha().get(`/records/softdel/${made.json.id}`), 404, 'not_found');
    for (const q of ['', '?where=tag:eq:x', `?where=id:eq:${made.json.id}`, '?order=tag:asc', '?where=tag:exists:true']) {
      assert.deepEqual((await alpha().get(`/records/softdel${q}`)).json.items, [], q);
    }
  });

  test('the records quota counts live records: 429 inside the write, deletes free room, PUT and PATCH do not count', async () => {
    const small = client(env.port, env.tokens.small);
    const one = await small.post('/records/q', { n: 1 });
    const two = await small.post('/records/q2', { n: 2 });
    assert.equal(one.status, 201);
    assert.equal(two.status, 201);
    assertError(await small.post('/records/q', { n: 3 }), 429, 'quota_exceeded', { quota: 'records', limit: 2, used: 2 });
    assert.equal((await small.get('/records/q')).json.items.length, 1, 'the refused record was not written');
    assert.equal((await small.put(`/records/q/${one.json.id}`, { n: 10 })).status, 200);
    assert.equal((await small.patch(`/records/q/${one.json.id}`, { m: 1 })).status, 200);
    assert.equal((await small.delete(`/records/q2/${two.json.id}`)).status, 204);
    assert.equal((await small.post('/records/q', { n: 4 })).status, 201);
    assertError(await small.post('/records/q', { n: 5 }), 429, 'quota_exceeded');
    // Raising the quota applies from the next request.
    assert.equal(svc.cli(['studio', 'set', 'small', '--quota-records', '3']).code, 0);
    assert.equal((await small.post('/records/q', { n: 5 })).status, 201);
  });

  test('concurrent creates never pass the quota together', async () => {
    const token = svc.studio('racer', ['records'], ['--quota-records', '5']);
    const racer = client(env.port, token);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => racer.post('/records/r', { i })));
    assert.equal(results.filter((r) => r.status === 201).length, 5);
    assert.equal(results.filter((r) => r.status === 429).length, 15);
    assert.equal((await racer.get('/records/r?limit=50')).json.items.length, 5);
  });
});

/** The query fixture: names say what each document is for. */
const FIXTURE: Record<string, unknown>[] = [
  { name: 'int1', v: 1, s: 'Hello World', tags: ['red', 'blue'], when: 'x' },
  { name: 'real1', v: 1.0, s: 'hello world', tags: ['Red'] },
  { name: 'real1.5', v: 1.5, s: 'a:b:c', tags: [1, 'red'] },
  { name: 'str1', v: '1', s: 'über 😀 日本', tags: 'red' },
  { name: 'null', v: null, s: '', tags: [] },
  { name: 'true', v: true, s: 'http://x/y?z=1', tags: [[1, 2], { k: 1 }, null] },
  { name: 'false', v: false, s: 'long' + 'L'.repeat(5000) },
  { name: 'arr', v: [1, 2], s: 'Ab' },
  { name: 'obj', v: { a: 1 }, s: 'aB' },
  { name: 'missing', s: 'no v here' },
  { name: 'big', v: 10, s: 'z' },
  { name: 'neg', v: -3, s: 'A' },
];

async function query(q: string, collection = 'fixture'): Promise<HttpResponse> {
  return alpha().get(`/records/${collection}?${q}`);
}
const names = (res: HttpResponse): string[] => {
  assert.equal(res.status, 200, res.text);
  return res.json.items.map((i: { name: string }) => i.name);
};
const where = (...clauses: string[]) => clauses.map((c) => `where=${encodeURIComponent(c)}`).join('&');
const sorted = (xs: string[]) => [...xs].sort();

describe('queries', () => {
  const ids: Record<string, string> = {};
  const created: Record<string, string> = {};
  before(async () => {
    for (const doc of FIXTURE) {
      const res = await alpha().post('/records/fixture', doc);
      ids[doc.name as string] = res.json.id;
      created[doc.name as string] = res.json.created_at;
    }
    await alpha().post('/records/elsewhere', { name: 'other collection', v: 1 });
    await beta().post('/records/fixture', { name: 'other studio', v: 1 });
  });

  const filterRows: [string[], string[]][] = [
    [['v:eq:1'], ['int1', 'real1']],
    [['v:eq:1.0'], ['int1', 'real1']],
    [['v:eq:"1"'], ['str1']],
    [['v:eq:null'], ['null']],
    [['v:eq:true'], ['true']],
    [['v:eq:[1,2]'], ['arr']],
    [['v:eq:{"a":1}'], ['obj']],
    [['v:ne:1'], ['real1.5', 'str1', 'null', 'true', 'false', 'arr', 'obj', 'missing', 'big', 'neg']],
    [['v:ne:null'], ['int1', 'real1', 'real1.5', 'str1', 'true', 'false', 'arr', 'obj', 'missing', 'big', 'neg']],
    [['v:gt:1'], ['real1.5', 'big']],
    [['v:gte:1'], ['int1', 'real1', 'real1.5', 'big']],
    [['v:lt:1'], ['neg']],
    [['v:lte:"1"'], ['str1']],
    [['v:gt:"0"'], ['str1']],
    [['v:gt:false'], ['true']],
    [['v:lt:true'], ['false']],
    [['v:in:[1,"1",null]'], ['int1', 'real1', 'str1', 'null']],
    [['v:in:[]'], []],
    [['v:in:[[1,2],{"a":1},false]'], ['arr', 'obj', 'false']],
    [['v:exists:true'], FIXTURE.filter((d) => 'v' in d).map((d) => d.name as string)],
    [['v:exists:false'], ['missing']],
    [['s:contains:ello'], ['int1', 'real1']],
    [['s:contains:World'], ['int1']],
    [['s:contains:b:c'], ['real1.5']],
    [['s:contains:a:b:c'], ['real1.5']],
    [['s:contains:😀 日'], ['str1']],
    [['s:contains:' + 'L'.repeat(4000)], ['false']],
    [['s:contains:"b"'], ['real1.5', 'str1', 'arr']],
    [['s:contains:B'], ['obj']],
    [['s:eq:http://x/y?z=1'], ['true']],
    [['s:eq:'], ['null']],
    [['s:eq:""'], ['null']],
    [['s:gte:a', 's:lt:b'], ['real1.5', 'obj']],
    [['tags:contains:red'], ['int1', 'real1.5', 'str1']],
    [['tags:contains:1'], ['real1.5']],
    [['tags:contains:null'], ['true']],
    [['tags:contains:[1,2]'], ['true']],
    [['tags:contains:{"k":1}'], ['true']],
    [['v:contains:1'], ['arr']],
    [['v:contains:"1"'], ['str1']],
    [['s:contains:1'], []],
    [['v:contains:{"a":1}'], []],
    [['v:gte:1', 'v:lt:10'], ['int1', 'real1', 'real1.5']],
    [['v:eq:1', 's:contains:hello'], ['real1']],
  ];
  for (const [clauses, expected] of filterRows) {
    test(`where ${clauses.map((c) => (c.length > 60 ? c.slice(0, 60) + '...' : c)).join(' & ')}`, async () => {
      assert.deepEqual(sorted(names(await query(where(...clauses)))), sorted(expected));
    });
  }

  test('id is compared as a string; created_at and updated_at as instants (any offset)', async () => {
    assert.deepEqual(names(await query(where(`id:eq:${ids.str1}`))), ['str1']);
    assert.deepEqual(names(await query(where(`id:eq:"${ids.str1}"`))), ['str1']);
    assert.deepEqual(sorted(names(await query(where(`id:in:["${ids.neg}","${ids.big}"]`)))), ['big', 'neg']);
    assert.deepEqual(names(await query(where(`id:gt:${ids.big}`))), ['neg']);
    const at = created.obj!;
    assert.ok(names(await query(where(`created_at:eq:${at}`))).includes('obj'));
    assert.ok(!names(await query(where(`created_at:lt:${at}`))).includes('obj'));
    assert.ok(names(await query(where(`created_at:lte:${at}`))).includes('obj'));
    const shifted = new Date(Date.parse(at) + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    assert.ok(names(await query(where(`created_at:eq:${shifted}`))).includes('obj'), 'an offset names the same instant');
    assert.ok(names(await query(where(`updated_at:gte:${at}`))).includes('obj'));
    assert.deepEqual(names(await query(where('created_at:gt:2999-01-01T00:00:00Z'))), []);
    assert.equal(names(await query(where('created_at:gt:2000-01-01T00:00:00.000Z'))).length, FIXTURE.length);
  });

  test('only this studio\'s live records of this collection', async () => {
    assert.equal(names(await query(where('v:eq:1'))).includes('other collection'), false);
    assert.equal(names(await query(where('v:eq:1'))).includes('other studio'), false);
  });

  test('default order is created_at desc', async () => {
    assert.deepEqual(names(await query('limit=500')), FIXTURE.map((d) => d.name).reverse());
    assert.deepEqual(names(await query('order=created_at:asc')), FIXTURE.map((d) => d.name));
    assert.deepEqual(names(await query('order=id:desc')), FIXTURE.map((d) => d.name).reverse());
  });

  test('order on a field: numbers, strings, null, false, true, arrays, objects; missing last both ways; ties by id', async () => {
    const asc = ['neg', 'int1', 'real1', 'real1.5', 'big', 'str1', 'null', 'false', 'true', 'arr', 'obj', 'missing'];
    assert.deepEqual(names(await query('order=v:asc')), asc);
    const desc = ['obj', 'arr', 'true', 'false', 'null', 'str1', 'big', 'real1.5', 'real1', 'int1', 'neg', 'missing'];
    assert.deepEqual(names(await query('order=v:desc')), desc);
    for (const limit of [1, 2, 3, 5]) {
      for (const [order, expected] of [['v:asc', asc], ['v:desc', desc]] as const) {
        const seen: string[] = [];
        let cursor: string | null = null;
        do {
          const res = await query(`order=${order}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
          seen.push(...names(res));
          cursor = res.json.next_cursor;
        } while (cursor);
        assert.deepEqual(seen, expected, `${order} limit ${limit}`);
      }
    }
  });

  test('numbers are doubles: an integer beyond 2^53 matches the double it stands for', async () => {
    const big = await alpha().post('/records/big', { a: 2 ** 60 });
    await alpha().post('/records/big', { a: 2 ** 60 + 4096 });
    for (const text of ['1152921504606846976', '1152921504606847000', '1.152921504606847e18']) {
      const res = await query(where(`a:eq:${text}`), 'big');
      assert.deepEqual(res.json.items.map((i: { id: string }) => i.id), [big.json.id], text);
    }
    assert.equal((await query(where('a:gt:1152921504606846976'), 'big')).json.items.length, 1);
    const listed = await alpha().post('/records/big', { tags: [1, 2 ** 60] });
    const res = await query(where('tags:contains:1152921504606847000'), 'big');
    assert.deepEqual(res.json.items.map((i: { id: string }) => i.id), [listed.json.id]);
  });

  test('strings order by UTF-8 bytes (case-sensitive)', async () => {
    const res = names(await query(`${where('s:in:["Ab","aB","A","z"]')}&order=s:asc`));
    assert.deepEqual(res, ['neg', 'arr', 'obj', 'big']);
  });

  test('paging with ties: every match exactly once', async () => {
    for (let i = 0; i < 23; i++) await alpha().post('/records/ties', { k: i % 3 === 0 ? 'same' : i % 3 === 1 ? 1 : null, i });
    for (const order of ['k:asc', 'k:desc', 'created_at:asc', 'updated_at:desc', 'i:asc']) {
      const seen: number[] = [];
      let cursor: string | null = null;
      do {
        const res = await query(`order=${order}&limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, 'ties');
        assert.equal(res.status, 200, res.text);
        seen.push(...res.json.items.map((x: { i: number }) => x.i));
        cursor = res.json.next_cursor;
      } while (cursor);
      assert.equal(seen.length, 23, order);
      assert.equal(new Set(seen).size, 23, order);
    }
  });

  test('a page stops at 8 MiB of documents; the walk still returns each record once', async () => {
    const pad = 'p'.repeat(30_000);
    for (let i = 0; i < 300; i++) assert.equal((await alpha().post('/records/heavy', { i, pad })).status, 201);
    const first = await query('limit=500', 'heavy');
    assert.equal(first.status, 200);
    assert.ok(first.json.items.length > 200 && first.json.items.length < 300, `${first.json.items.length} items`);
    assert.ok(first.text.length < 9 * 1024 * 1024);
    assert.notEqual(first.json.next_cursor, null);
    const seen = first.json.items.map((x: { i: number }) => x.i);
    let cursor = first.json.next_cursor;
    while (cursor) {
      const res = await query(`limit=500&cursor=${encodeURIComponent(cursor)}`, 'heavy');
      seen.push(...res.json.items.map((x: { i: number }) => x.i));
      cursor = res.json.next_cursor;
    }
    assert.deepEqual(seen, Array.from({ length: 300 }, (_, i) => 299 - i));
  });

  test('a cursor is bound to its where clauses and order: reused with others it is bad_cursor', async () => {
    const first = await query(`${where('v:exists:true')}&order=v:asc&limit=2`);
    const cursor = encodeURIComponent(first.json.next_cursor);
    assert.equal((await query(`${where('v:exists:true')}&order=v:asc&limit=5&cursor=${cursor}`)).status, 200, 'limit may change');
    assertError(await query(`${where('v:exists:false')}&order=v:asc&cursor=${cursor}`), 400, 'bad_cursor');
    assertError(await query(`order=v:asc&cursor=${cursor}`), 400, 'bad_cursor');
    assertError(await query(`${where('v:exists:true')}&order=v:desc&cursor=${cursor}`), 400, 'bad_cursor');
    assertError(await query(`${where('v:exists:true')}&cursor=${cursor}`), 400, 'bad_cursor');
    assertError(await query(`${where('v:exists:true')}&order=v:asc&cursor=${cursor}`, 'elsewhere'), 400, 'bad_cursor');
    const theirs = await client(env.port, env.tokens.beta).get(`/records/fixture?${where('v:exists:true')}&order=v:asc&cursor=${cursor}`);
    assertError(theirs, 400, 'bad_cursor');
    assertError(await query(`${where('v:exists:true')}&order=v:asc&cursor=${cursor.slice(0, -2)}`), 400, 'bad_cursor');
  });

  const badFilters: [string, string][] = [
    ['nested path', where('a.b:eq:1')],
    ['a JSON path', where('$.a:eq:1')],
    ['an array index', where('a[0]:eq:1')],
    ['a quote in the field', where("a'b:eq:1")],
    ['a double quote in the field', where('a"b:eq:1')],
    ['SQL in the field', where('a) OR 1=1 --:eq:1')],
    ['a unicode field', where('prénom:eq:1')],
    ['an empty field', where(':eq:1')],
    ['no operator', where('v')],
    ['no value part', where('v:eq')],
    ['an unknown operator', where('v:like:1')],
    ['an upper-case operator', where('v:EQ:1')],
    ['in without an array', where('v:in:1')],
    ['exists with a non-boolean', where('v:exists:yes')],
    ['a range on null', where('v:lt:null')],
    ['contains on created_at', where('created_at:contains:2026')],
    ['exists on updated_at', where('updated_at:exists:true')],
    ['created_at with a non-instant', where('created_at:gt:yesterday')],
    ['an empty clause', 'where='],
    ['nine clauses', where(...Array(9).fill('v:exists:true'))],
    ['a bad order field', 'order=a.b:asc'],
    ['a bad direction', 'order=v:up'],
    ['an order without direction', 'order=v'],
    ['two orders', 'order=v:asc&order=s:asc'],
    ['etag', where('etag:eq:x')],
    // Brackets unescaped: 10,000 characters stay under Node's 16 KiB header limit.
    ['a value nested 5,000 deep (was a 500)', `where=v:eq:${'['.repeat(5000)}${']'.repeat(5000)}`],
  ];
  for (const [name, q] of badFilters) {
    test(`bad_filter: ${name}`, async () => {
      const res = await query(q);
      assertError(res, 400, 'bad_filter');
      assert.ok(res.json.message.length > 10);
    });
  }

  test('bad_filter names the clause and the reason', async () => {
    const res = await query(where('v:eq:1', 'v:in:nope'));
    assertError(res, 400, 'bad_filter', { index: 2, clause: 'v:in:nope' });
    assert.match(res.json.message, /where clause 2 "v:in:nope": in takes a JSON array/);
    assert.equal(typeof res.json.details.reason, 'string');
  });

  test('eight clauses are fine', async () => {
    assert.deepEqual(names(await query(where(...Array(8).fill('v:eq:10')))), ['big']);
  });

  test('a very long value, a value with every kind of character', async () => {
    const long = 'q'.repeat(8000);
    const odd = 'a:b/c?d=e&f#g %20 "h" \'i\' \\j 😀 \u0007 日本';
    const one = await alpha().post('/records/odd', { s: long });
    const two = await alpha().post('/records/odd', { s: odd });
    const ids = async (q: string) => (await query(q, 'odd')).json.items.map((i: { id: string }) => i.id);
    assert.deepEqual(await ids(where(`s:eq:${long}`)), [one.json.id]);
    assert.deepEqual(await ids(where(`s:eq:${odd}`)), [two.json.id]);
    assert.deepEqual(await ids(where(`s:eq:${JSON.stringify(odd)}`)), [two.json.id]);
    assert.deepEqual(await ids(where('s:contains:😀 \u0007 日')), [two.json.id]);
    assert.deepEqual(await ids(where(`s:contains:${'q'.repeat(7999)}`)), [one.json.id]);
  });
});
