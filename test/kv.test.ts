import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startService, type TestService } from './helpers/service';
import { client, send } from './helpers/http';
import { assertError, runScenarios, type ScenarioEnv } from './helpers/scenario';

/** Key-value (docs/api.md "Key-value"). */

let svc: TestService;
const env: ScenarioEnv = { port: 0, tokens: {} };

before(async () => {
  svc = await startService();
  env.port = svc.port;
  env.tokens.alpha = svc.studio('alpha', ['kv']);
  env.tokens.alphaShared = svc.token('alpha', ['kv', 'kv.shared']);
  env.tokens.beta = svc.studio('beta', ['kv', 'kv.shared']);
  env.tokens.noKv = svc.studio('gamma', ['records', 'kv.shared']);
  env.tokens.small = svc.studio('small', ['kv', 'kv.shared'], ['--quota-kv-bytes', '100']);
});
after(async () => {
  await svc.stop();
});

const alpha = () => client(env.port, env.tokens.alpha);
const beta = () => client(env.port, env.tokens.beta);

describe('bad input and access', () => {
  runScenarios(() => env, [
    { name: 'no token is 401', path: '/kv/ns/k', expectStatus: 401, expectCode: 'unauthenticated' },
    { name: 'unknown token is 401', path: '/kv/ns/k', token: 'blt_nope', expectStatus: 401, expectCode: 'unauthenticated' },
    {
      name: 'missing kv capability is 403 with details.capability',
      path: '/kv/ns/k',
      as: 'noKv',
      expectStatus: 403,
      expectCode: 'capability_required',
      expectDetails: { capability: 'kv' },
    },
    {
      name: 'the shared namespace needs kv.shared as well',
      path: '/kv/shared/k',
      as: 'alpha',
      expectStatus: 403,
      expectCode: 'capability_required',
      expectDetails: { capability: 'kv.shared' },
    },
    {
      name: 'kv.shared alone does not open the shared namespace',
      path: '/kv/shared/k',
      as: 'noKv',
      expectStatus: 403,
      expectCode: 'capability_required',
      expectDetails: { capability: 'kv' },
    },
    { name: 'listing shared needs kv.shared', path: '/kv/shared', as: 'alpha', expectStatus: 403, expectCode: 'capability_required' },
    { name: 'bad namespace characters', path: '/kv/a%20b/k', as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'namespace over 64 characters', path: `/kv/${'n'.repeat(65)}/k`, as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'namespace of 64 characters is fine', path: `/kv/${'n'.repeat(64)}/k`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'key over 512 bytes', path: `/kv/ns/${encodeURIComponent('é'.repeat(257))}`, as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'key of 512 bytes is fine', path: `/kv/ns/${'k'.repeat(512)}`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'key with a control character', path: '/kv/ns/a%0Ab', as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'key with DEL', path: '/kv/ns/a%7Fb', as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'a malformed escape in the key is bad_request', path: '/kv/ns/%ZZ', as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'a cut UTF-8 escape in the key is bad_request', path: '/kv/ns/%E7%8C', as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'an empty key names no endpoint (404)', path: '/kv/ns/', as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'missing key is 404', path: '/kv/ns/missing', as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'PUT of an array is invalid_document', method: 'PUT', path: '/kv/ns/k', as: 'alpha', body: [1], expectStatus: 400, expectCode: 'invalid_document' },
    { name: 'PUT of null is invalid_document', method: 'PUT', path: '/kv/ns/k', as: 'alpha', raw: 'null', expectStatus: 400, expectCode: 'invalid_document' },
    { name: 'PUT of a string is invalid_document', method: 'PUT', path: '/kv/ns/k', as: 'alpha', body: 'x', expectStatus: 400, expectCode: 'invalid_document' },
    { name: 'PUT of a number is invalid_document', method: 'PUT', path: '/kv/ns/k', as: 'alpha', raw: '42', expectStatus: 400, expectCode: 'invalid_document' },
    { name: 'malformed JSON is bad_request', method: 'PUT', path: '/kv/ns/k', as: 'alpha', raw: '{"a":', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'an empty body is bad_request', method: 'PUT', path: '/kv/ns/k', as: 'alpha', raw: '', expectStatus: 400, expectCode: 'bad_request' },
    {
      name: 'a non-JSON content type is bad_request',
      method: 'PUT',
      path: '/kv/ns/k',
      as: 'alpha',
      raw: '{"a":1}',
      contentType: 'text/plain',
      expectStatus: 400,
      expectCode: 'bad_request',
    },
    {
      name: 'a document nested too deep is invalid_document',
      method: 'PUT',
      path: '/kv/ns/k',
      as: 'alpha',
      raw: `${'{"a":'.repeat(150)}1${'}'.repeat(150)}`,
      expectStatus: 400,
      expectCode: 'invalid_document',
    },
    {
      name: 'a number outside the double range is invalid_document (it would read back as null)',
      method: 'PUT',
      path: '/kv/ns/k',
      as: 'alpha',
      raw: '{"a":1e400}',
      expectStatus: 400,
      expectCode: 'invalid_document',
    },
    { name: 'PATCH of a missing key is 404', method: 'PATCH', path: '/kv/ns/missing', as: 'alpha', body: { a: 1 }, expectStatus: 404, expectCode: 'not_found' },
    { name: 'DELETE of a missing key is 404', method: 'DELETE', path: '/kv/ns/missing', as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    {
      name: 'DELETE of a missing key with If-Match is still 404',
      method: 'DELETE',
      path: '/kv/ns/missing',
      as: 'alpha',
      headers: { 'If-Match': '"x"' },
      expectStatus: 404,
      expectCode: 'not_found',
    },
    {
      name: 'PUT with If-Match on a missing key is etag_mismatch',
      method: 'PUT',
      path: '/kv/ns/never',
      as: 'alpha',
      body: { a: 1 },
      headers: { 'If-Match': '"abc"' },
      expectStatus: 409,
      expectCode: 'etag_mismatch',
    },
    {
      name: 'PUT with If-Match: * on a missing key is etag_mismatch',
      method: 'PUT',
      path: '/kv/ns/never',
      as: 'alpha',
      body: { a: 1 },
      headers: { 'If-Match': '*' },
      expectStatus: 409,
      expectCode: 'etag_mismatch',
    },
    { name: 'limit 0 is bad_request', path: '/kv/ns?limit=0', as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'limit 501 is bad_request', path: '/kv/ns?limit=501', as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'limit abc is bad_request', path: '/kv/ns?limit=abc', as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'limit given twice is bad_request', path: '/kv/ns?limit=1&limit=2', as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'a garbage cursor is bad_cursor', path: '/kv/ns?cursor=zzz', as: 'alpha', expectStatus: 400, expectCode: 'bad_cursor' },
    // Never handed out, so refused as every list refuses it (docs/api.md "Pages"), not read as the first page.
    { name: 'an empty cursor is bad_cursor', path: '/kv/ns?cursor=', as: 'alpha', expectStatus: 400, expectCode: 'bad_cursor' },
    { name: 'an unknown method on a known path is 404', method: 'POST', path: '/kv/ns/k', as: 'alpha', body: {}, expectStatus: 404, expectCode: 'not_found' },
  ]);
});

describe('documents', () => {
  test('PUT creates, GET reads, with matching ETag header and body etag', async () => {
    const put = await alpha().put('/kv/docs/a', { title: 'x', n: 1 });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(Object.keys(put.json).sort(), ['etag', 'key', 'modified_at', 'value']);
    assert.deepEqual(put.json.value, { title: 'x', n: 1 });
    assert.equal(put.json.key, 'a');
    assert.equal(put.headers.etag, `"${put.json.etag}"`);
    assert.match(put.json.modified_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const get = await alpha().get('/kv/docs/a');
    assert.equal(get.status, 200);
    assert.deepEqual(get.json, put.json);
    assert.equal(get.headers.etag, `"${put.json.etag}"`);
    assert.equal(get.headers['cache-control'], 'no-store');
  });

  test('PUT replaces and every write yields a new etag', async () => {
    const one = await alpha().put('/kv/docs/b', { a: 1, b: 2 });
    const two = await alpha().put('/kv/docs/b', { c: 3 });
    assert.notEqual(one.json.etag, two.json.etag);
    assert.deepEqual(two.json.value, { c: 3 });
    const same = await alpha().put('/kv/docs/b', { c: 3 });
    assert.notEqual(same.json.etag, two.json.etag, 'an identical write still changes the etag');
  });

  test('If-Match on PUT: quoted, bare and * match; stale is 409 and nothing changes', async () => {
    const first = await alpha().put('/kv/docs/c', { v: 1 });
    const quoted = await alpha().put('/kv/docs/c', { v: 2 }, { 'If-Match': `"${first.json.etag}"` });
    assert.equal(quoted.status, 200);
    const bare = await alpha().put('/kv/docs/c', { v: 3 }, { 'If-Match': quoted.json.etag });
    assert.equal(bare.status, 200);
    const star = await alpha().put('/kv/docs/c', { v: 4 }, { 'If-Match': '*' });
    assert.equal(star.status, 200);
    const stale = await alpha().put('/kv/docs/c', { v: 5 }, { 'If-Match': `"${first.json.etag}"` });
    assertError(stale, 409, 'etag_mismatch');
    const weak = await alpha().put('/kv/docs/c', { v: 5 }, { 'If-Match': `W/"${star.json.etag}"` });
    assertError(weak, 409, 'etag_mismatch');
    const now = await alpha().get('/kv/docs/c');
    assert.deepEqual(now.json.value, { v: 4 });
    assert.equal(now.json.etag, star.json.etag);
  });

  test('If-Match is read only where it means something; 404 comes before a malformed one', async () => {
    await alpha().put('/kv/docs/im', { a: 1 });
    assert.equal((await alpha().get('/kv/docs/im', { 'If-Match': '"unclosed' })).status, 200, 'a GET ignores If-Match');
    assertError(await alpha().delete('/kv/docs/im', { 'If-Match': '"unclosed' }), 400, 'bad_request');
    assertError(await alpha().delete('/kv/docs/not-here', { 'If-Match': '"unclosed' }), 404, 'not_found');
    assertError(await alpha().patch('/kv/docs/not-here', { a: 2 }, { 'If-Match': '"unclosed' }), 404, 'not_found');
    assertError(await alpha().put('/kv/docs/im', { a: 2 }, { 'If-Match': '"unclosed' }), 400, 'bad_request');
  });

  test('a bad document is 400 before a stale If-Match is 409', async () => {
    await alpha().put('/kv/docs/order', { a: 1 });
    assertError(await alpha().put('/kv/docs/order', [1], { 'If-Match': '"stale"' }), 400, 'invalid_document');
    assertError(await alpha().put('/kv/docs/never-there', 'x', { 'If-Match': '"stale"' }), 400, 'invalid_document');
    assertError(await alpha().patch('/kv/docs/order', [1], { 'If-Match': '"stale"' }), 400, 'invalid_document');
  });

  test('PATCH merges (RFC 7396): null removes, nested objects merge, arrays replace', async () => {
    await alpha().put('/kv/docs/p', { a: 1, b: { x: 1, y: 2 }, list: [1, 2], gone: true });
    const res = await alpha().patch('/kv/docs/p', { b: { y: null, z: 3 }, list: [3], gone: null, c: 'new' });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json.value, { a: 1, b: { x: 1, z: 3 }, list: [3], c: 'new' });
    assert.equal(res.headers.etag, `"${res.json.etag}"`);
  });

  test('PATCH with a non-object patch is invalid_document and changes nothing', async () => {
    const put = await alpha().put('/kv/docs/q', { a: 1 });
    assertError(await alpha().patch('/kv/docs/q', [1]), 400, 'invalid_document');
    assertError(await alpha().patch('/kv/docs/q', 'text'), 400, 'invalid_document');
    const get = await alpha().get('/kv/docs/q');
    assert.equal(get.json.etag, put.json.etag);
  });

  test('a PATCH nested too deep is invalid_document, never a crash', async () => {
    await alpha().put('/kv/docs/deep', { a: 1 });
    for (const depth of [150, 500_000]) {
      const raw = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
      const res = await send(env.port, {
        method: 'PATCH',
        path: '/api/v1/kv/docs/deep',
        token: env.tokens.alpha,
        raw,
        contentType: 'application/merge-patch+json',
      });
      assertError(res, 400, 'invalid_document');
    }
  });

  test('PATCH with If-Match: matching applies, stale is 409', async () => {
    const put = await alpha().put('/kv/docs/r', { a: 1 });
    const ok = await alpha().patch('/kv/docs/r', { b: 2 }, { 'If-Match': `"${put.json.etag}"` });
    assert.equal(ok.status, 200);
    assertError(await alpha().patch('/kv/docs/r', { c: 3 }, { 'If-Match': `"${put.json.etag}"` }), 409, 'etag_mismatch');
    assert.deepEqual((await alpha().get('/kv/docs/r')).json.value, { a: 1, b: 2 });
  });

  test('PATCH accepts application/json as well as merge-patch+json', async () => {
    await alpha().put('/kv/docs/s', { a: 1 });
    const res = await alpha().patch('/kv/docs/s', { b: 2 }, { 'Content-Type': 'application/json' });
    assert.equal(res.status, 200);
  });

  test('DELETE: 204, then 404; stale If-Match is 409 and the document stays', async () => {
    const put = await alpha().put('/kv/docs/d', { a: 1 });
    await alpha().put('/kv/docs/d', { a: 2 });
    assertError(await alpha().delete('/kv/docs/d', { 'If-Match': `"${put.json.etag}"` }), 409, 'etag_mismatch');
    assert.equal((await alpha().get('/kv/docs/d')).status, 200);
    const del = await alpha().delete('/kv/docs/d', { 'If-Match': '*' });
    assert.equal(del.status, 204);
    assert.equal(del.text, '');
    assertError(await alpha().get('/kv/docs/d'), 404, 'not_found');
    assertError(await alpha().delete('/kv/docs/d'), 404, 'not_found');
  });

  test('keys may contain "/" (raw or percent-encoded), spaces, "%" and unicode', async () => {
    for (const [path, key] of [
      ['/kv/docs/a/b/c', 'a/b/c'],
      ['/kv/docs/x%2Fy', 'x/y'],
      ['/kv/docs/with%20space', 'with space'],
      ['/kv/docs/100%25', '100%'],
      ['/kv/docs/%E7%8C%AB', '猫'],
      ['/kv/docs/a:b', 'a:b'],
    ]) {
      const put = await alpha().put(path!, { key });
      assert.equal(put.status, 200, `${path}: ${put.text}`);
      assert.equal(put.json.key, key);
      assert.deepEqual((await alpha().get(path!)).json.value, { key });
    }
  });

  test('a "__proto__" member is stored as an ordinary member', async () => {
    const res = await send(env.port, { method: 'PUT', path: '/api/v1/kv/docs/proto', token: env.tokens.alpha, raw: '{"__proto__":{"polluted":true},"a":1}' });
    assert.equal(res.status, 200, res.text);
    const patched = await send(env.port, {
      method: 'PATCH',
      path: '/api/v1/kv/docs/proto',
      token: env.tokens.alpha,
      raw: '{"__proto__":{"more":1}}',
      contentType: 'application/merge-patch+json',
    });
    assert.equal(patched.text.includes('"__proto__":{"polluted":true,"more":1}'), true, patched.text);
  });
});

describe('scoping', () => {
  test("another studio's namespace is separate: its keys are 404 and absent from lists", async () => {
    await alpha().put('/kv/private/secret', { s: 1 });
    assertError(await beta().get('/kv/private/secret'), 404, 'not_found');
    assertError(await beta().patch('/kv/private/secret', { s: 2 }), 404, 'not_found');
    assertError(await beta().delete('/kv/private/secret'), 404, 'not_found');
    assert.deepEqual((await beta().get('/kv/private')).json.items, []);
    // beta writing the same key makes its own document
    await beta().put('/kv/private/secret', { mine: true });
    assert.deepEqual((await alpha().get('/kv/private/secret')).json.value, { s: 1 });
  });

  test('the shared namespace is common to every studio holding kv.shared', async () => {
    const shared = client(env.port, env.tokens.alphaShared);
    const put = await shared.put('/kv/shared/palette', { colors: ['red'] });
    assert.equal(put.status, 200, put.text);
    const read = await beta().get('/kv/shared/palette');
    assert.equal(read.status, 200);
    assert.deepEqual(read.json.value, { colors: ['red'] });
    const patched = await beta().patch('/kv/shared/palette', { by: 'beta' }, { 'If-Match': put.json.etag });
    assert.equal(patched.status, 200);
    assert.deepEqual((await shared.get('/kv/shared/palette')).json.value, { colors: ['red'], by: 'beta' });
    assert.ok((await beta().get('/kv/shared')).json.items.some((i: { key: string }) => i.key === 'palette'));
  });
});

describe('listing', () => {
  test('keys ascending with size and modified_at, no values, paginated across pages', async () => {
    const keys = ['k05', 'k01', 'k10', 'k03', 'k02', 'k07', 'k04', 'k09', 'k06', 'k08', 'k11'];
    for (const k of keys) await alpha().put(`/kv/list/${k}`, { k });
    const seen: { key: string; size: number; modified_at: string }[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await alpha().get(`/kv/list?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(Object.keys(res.json).sort(), ['items', 'next_cursor']);
      assert.ok(res.json.items.length <= 3);
      seen.push(...res.json.items);
      cursor = res.json.next_cursor;
      pages++;
    } while (cursor);
    assert.equal(pages, 4);
    assert.deepEqual(seen.map((e) => e.key), [...keys].sort());
    for (const e of seen) {
      assert.deepEqual(Object.keys(e).sort(), ['key', 'modified_at', 'size']);
      assert.equal(e.size, Buffer.byteLength(JSON.stringify({ k: e.key })));
    }
  });

  test('keys come in UTF-8 byte order', async () => {
    for (const k of ['b', 'B', 'é', 'a', 'z', '猫', '_']) await alpha().put(`/kv/order/${encodeURIComponent(k)}`, {});
    const res = await alpha().get('/kv/order');
    const expected = ['b', 'B', 'é', 'a', 'z', '猫', '_'].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    assert.deepEqual(res.json.items.map((i: { key: string }) => i.key), expected);
  });

  test('prefix is literal: % and _ are not wildcards', async () => {
    for (const k of ['a%b', 'axb', 'a_c', 'abc', 'a', 'b%']) await alpha().put(`/kv/pre/${encodeURIComponent(k)}`, {});
    const keysFor = async (prefix: string) =>
      (await alpha().get(`/kv/pre?prefix=${encodeURIComponent(prefix)}`)).json.items.map((i: { key: string }) => i.key);
    assert.deepEqual(await keysFor('a%'), ['a%b']);
    assert.deepEqual(await keysFor('a_'), ['a_c']);
    assert.deepEqual(await keysFor('a'), ['a', 'a%b', 'a_c', 'abc', 'axb']);
    assert.deepEqual(await keysFor('zz'), []);
    assert.deepEqual(await keysFor(''), ['a', 'a%b', 'a_c', 'abc', 'axb', 'b%']);
  });

  test('prefix with pagination keeps the prefix across pages', async () => {
    for (let i = 0; i < 5; i++) await alpha().put(`/kv/pp/img-${i}`, {});
    await alpha().put('/kv/pp/other', {});
    const first = await alpha().get('/kv/pp?prefix=img-&limit=2');
    const second = await alpha().get(`/kv/pp?prefix=img-&limit=2&cursor=${encodeURIComponent(first.json.next_cursor)}`);
    const third = await alpha().get(`/kv/pp?prefix=img-&limit=2&cursor=${encodeURIComponent(second.json.next_cursor)}`);
    assert.deepEqual(
      [...first.json.items, ...second.json.items, ...third.json.items].map((i: { key: string }) => i.key),
      ['img-0', 'img-1', 'img-2', 'img-3', 'img-4'],
    );
    assert.equal(third.json.next_cursor, null);
  });

  test('a cursor is bound to its list: other prefix, namespace or studio is bad_cursor', async () => {
    for (let i = 0; i < 3; i++) await alpha().put(`/kv/bound/k${i}`, {});
    const first = await alpha().get('/kv/bound?limit=1');
    const c = encodeURIComponent(first.json.next_cursor);
    assert.equal((await alpha().get(`/kv/bound?limit=1&cursor=${c}`)).status, 200);
    assertError(await alpha().get(`/kv/bound?limit=1&prefix=k&cursor=${c}`), 400, 'bad_cursor');
    assertError(await alpha().get(`/kv/other?limit=1&cursor=${c}`), 400, 'bad_cursor');
    assertError(await beta().get(`/kv/bound?limit=1&cursor=${c}`), 400, 'bad_cursor');
    const tampered = first.json.next_cursor.replace(/^./, (ch: string) => (ch === 'A' ? 'B' : 'A'));
    assertError(await alpha().get(`/kv/bound?limit=1&cursor=${encodeURIComponent(tampered)}`), 400, 'bad_cursor');
  });

  test('cursors stay stable while keys are inserted before and after the position', async () => {
    for (const k of ['m1', 'm3', 'm5']) await alpha().put(`/kv/stable/${k}`, {});
    const first = await alpha().get('/kv/stable?limit=2');
    assert.deepEqual(first.json.items.map((i: { key: string }) => i.key), ['m1', 'm3']);
    await alpha().put('/kv/stable/m0', {});
    await alpha().put('/kv/stable/m4', {});
    const next = await alpha().get(`/kv/stable?limit=5&cursor=${encodeURIComponent(first.json.next_cursor)}`);
    assert.deepEqual(next.json.items.map((i: { key: string }) => i.key), ['m4', 'm5']);
  });
});

describe('kv_bytes quota', () => {
  const small = () => client(env.port, env.tokens.small);

  test('a write past the quota is 429 with QuotaDetails and writes nothing', async () => {
    const fits = await small().put('/kv/q/a', { s: 'x'.repeat(50) }); // 58 bytes
    assert.equal(fits.status, 200, fits.text);
    const over = await small().put('/kv/q/b', { s: 'y'.repeat(40) }); // 48 bytes: 106 > 100
    assertError(over, 429, 'quota_exceeded', { quota: 'kv_bytes', limit: 100, used: 58 });
    assertError(await small().get('/kv/q/b'), 404, 'not_found');
    // replacing a document counts only the difference
    const replace = await small().put('/kv/q/a', { s: 'x'.repeat(90) }); // 98 bytes
    assert.equal(replace.status, 200, replace.text);
    assertError(await small().patch('/kv/q/a', { more: 'zzzzz' }), 429, 'quota_exceeded');
    // shrinking is always allowed, and deleting frees the bytes
    assert.equal((await small().put('/kv/q/a', {})).status, 200);
    assert.equal((await small().put('/kv/q/b', { s: 'y'.repeat(40) })).status, 200);
    assert.equal((await small().delete('/kv/q/b')).status, 204);
    assert.equal((await small().put('/kv/q/c', { s: 'z'.repeat(80) })).status, 200);
  });

  test('shared documents count toward the studio that last wrote them', async () => {
    const shared = client(env.port, env.tokens.small);
    // fill small's quota elsewhere first: 2 bytes used by {} at q/a, 88 at q/c
    assertError(await shared.put('/kv/shared/big', { s: 'w'.repeat(20) }), 429, 'quota_exceeded');
    assert.equal((await beta().put('/kv/shared/big', { s: 'w'.repeat(20) })).status, 200);
    // beta's document: small may not take it over when it would not fit
    assertError(await shared.patch('/kv/shared/big', { t: 1 }), 429, 'quota_exceeded');
    assert.equal((await shared.delete('/kv/q/c')).status, 204);
    assert.equal((await shared.patch('/kv/shared/big', { t: 1 })).status, 200);
  });

  test('`studio set` changes the quota for the next request of the running server', async () => {
    const tight = svc.studio('tight', ['kv'], ['--quota-kv-bytes', '10']);
    const c = client(env.port, tight);
    assertError(await c.put('/kv/n/k', { s: 'long enough' }), 429, 'quota_exceeded');
    assert.equal(svc.cli(['studio', 'set', 'tight', '--quota-kv-bytes', '1000']).code, 0);
    assert.equal((await c.put('/kv/n/k', { s: 'long enough' })).status, 200);
  });

  test('concurrent writes cannot slip past the quota together', async () => {
    const token = svc.studio('racer', ['kv'], ['--quota-kv-bytes', '1000']);
    const c = client(env.port, token);
    const doc = { s: 'r'.repeat(90) }; // 98 bytes: only 10 fit
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => c.put(`/kv/race/k${i}`, doc)));
    const ok = results.filter((r) => r.status === 200).length;
    assert.equal(ok, 10);
    assert.ok(results.every((r) => r.status === 200 || r.json.code === 'quota_exceeded'));
    const listed = await c.get('/kv/race?limit=100');
    assert.equal(listed.json.items.length, 10);
  });
});
