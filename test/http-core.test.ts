import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, startService, type TestService } from './helpers/service';
import { send } from './helpers/http';
import { assertError, runScenarios, type ScenarioEnv } from './helpers/scenario';

/**
 * What every endpoint shares (docs/api.md "Order of checks", "Host and
 * Origin", "Errors"): Host and Origin first, then the token, then the capability,
 * unknown paths 404, body limits, the error body, no-store.
 */

let svc: TestService;
const env: ScenarioEnv = { port: 0, tokens: {} };

before(async () => {
  svc = await startService({ args: ['--body-limit', '1000'] });
  env.port = svc.port;
  env.tokens.alpha = svc.studio('alpha', ['kv']);
  env.tokens.beta = svc.studio('beta', ['kv']);
  env.tokens.none = svc.token('alpha', ['records']);
});
after(async () => {
  await svc.stop();
});

describe('Host and Origin are checked before anything else', () => {
  const rows: [string, Record<string, string | undefined>, number, string?][] = [
    ['loopback IPv4 Host', { Host: '127.0.0.1:PORT' }, 404],
    ['localhost Host', { Host: 'localhost:PORT' }, 404],
    ['LOCALHOST Host (case-insensitive)', { Host: 'LOCALHOST:PORT' }, 404],
    ['IPv6 loopback Host', { Host: '[::1]:PORT' }, 404],
    ['the caller studio\'s own Host', { Host: 'alpha.localhost:PORT' }, 404],
    ['another studio\'s Host', { Host: 'beta.localhost:PORT' }, 403, 'bad_origin'],
    ['a rebinding Host', { Host: 'evil.example:PORT' }, 403, 'bad_origin'],
    ['loopback on another port', { Host: '127.0.0.1:1' }, 403, 'bad_origin'],
    ['a Host without a port', { Host: 'localhost' }, 403, 'bad_origin'],
    ['an empty Host', { Host: '' }, 403, 'bad_origin'],
    ['a Host that only starts like localhost', { Host: 'localhost.evil.example:PORT' }, 403, 'bad_origin'],
    ['the service origin', { Origin: 'http://127.0.0.1:PORT' }, 404],
    ['the localhost origin', { Origin: 'http://localhost:PORT' }, 404],
    ['the caller studio\'s page origin', { Origin: 'http://alpha.localhost:PORT' }, 404],
    ['another studio\'s page origin', { Origin: 'http://beta.localhost:PORT' }, 403, 'bad_origin'],
    ['a foreign origin', { Origin: 'http://evil.example' }, 403, 'bad_origin'],
    ['a foreign origin equal to a (hostile) Host is not proof', { Origin: 'http://evil.example:PORT', Host: 'evil.example:PORT' }, 403, 'bad_origin'],
    ['Origin null', { Origin: 'null' }, 403, 'bad_origin'],
    ['https origin of the same host', { Origin: 'https://127.0.0.1:PORT' }, 403, 'bad_origin'],
    ['Sec-Fetch-Site cross-site', { 'Sec-Fetch-Site': 'cross-site' }, 403, 'bad_origin'],
    ['Sec-Fetch-Site same-origin', { 'Sec-Fetch-Site': 'same-origin' }, 404],
  ];
  runScenarios(
    () => env,
    rows.map(([name, headers, status, code]) => ({
      name,
      path: '/kv/ns/missing',
      as: 'alpha',
      get headers() {
        return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, v?.replace('PORT', String(env.port))]));
      },
      expectStatus: status,
      expectCode: code ?? 'not_found',
    })),
  );

  test('bad_origin comes before 401: no token and a foreign origin', async () => {
    const res = await send(env.port, { path: '/api/v1/kv/ns/k', headers: { Origin: 'http://evil.example' } });
    assertError(res, 403, 'bad_origin');
  });

  test('a missing Host header is refused', async () => {
    // HTTP/1.0 allows omitting Host; node:http sends none when told not to.
    const res = await send(env.port, { path: '/api/v1/kv/ns/k', token: env.tokens.alpha, headers: { Host: undefined } });
    assertError(res, 403, 'bad_origin');
  });

  test('no CORS headers are ever sent', async () => {
    const res = await send(env.port, { method: 'OPTIONS', path: '/api/v1/kv/ns/k', headers: { Origin: `http://127.0.0.1:${env.port}` } });
    assert.equal(res.headers['access-control-allow-origin'], undefined);
  });
});

describe('token, capability, unknown paths', () => {
  runScenarios(() => env, [
    { name: 'no Authorization header', path: '/sessions', expectStatus: 401, expectCode: 'unauthenticated' },
    { name: 'a Basic credential', path: '/sessions', headers: { Authorization: 'Basic YTpi' }, expectStatus: 401, expectCode: 'unauthenticated' },
    { name: 'Bearer with nothing', path: '/sessions', headers: { Authorization: 'Bearer ' }, expectStatus: 401, expectCode: 'unauthenticated' },
    { name: 'an unknown token', path: '/sessions', token: 'blt_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', expectStatus: 401, expectCode: 'unauthenticated' },
    { name: 'an unknown path without a token is 401, not 404', path: '/nowhere', expectStatus: 401, expectCode: 'unauthenticated' },
    { name: 'an unknown path with a token is 404', path: '/nowhere', as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'a path outside the API is 404', path: '!/nowhere', as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    {
      name: "/ is the launcher's page: without its sign-in, it says how to get one (no data)",
      path: '!/',
      as: 'alpha',
      expectStatus: 200,
      check: (res) => {
        assert.match(String(res.headers['content-type']), /^text\/html/);
        assert.match(res.text, /backlot login-url/);
      },
    },
    { name: 'paths are case-sensitive', path: '/KV/ns/k', as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'an unknown method is 404', method: 'PUT', path: '/sessions', as: 'alpha', body: {}, expectStatus: 404, expectCode: 'not_found' },
    {
      name: 'a token without the route\'s capability gets 403 naming it',
      path: '/sessions',
      as: 'none',
      expectStatus: 403,
      expectCode: 'capability_required',
      expectDetails: { capability: 'kv' },
    },
    {
      name: 'the capability is checked before the body (403 before 400)',
      method: 'PUT',
      path: '/kv/ns/k',
      as: 'none',
      raw: 'not json',
      expectStatus: 403,
      expectCode: 'capability_required',
    },
  ]);

  test('a revoked token is refused on the very next request', async () => {
    const token = svc.token('alpha', ['kv']);
    const ok = await send(env.port, { path: '/api/v1/sessions', token });
    assert.equal(ok.status, 200);
    assert.equal(svc.cli(['token', 'revoke', token]).code, 0);
    assertError(await send(env.port, { path: '/api/v1/sessions', token }), 401, 'unauthenticated');
  });

  test('a token the server holds in memory, revoked by the CLI, is refused on its very next request (GET and PUT)', async () => {
    const token = svc.token('alpha', ['kv']);
    const sibling = svc.token('alpha', ['kv']);
    const put = (t: string, value: number) => send(env.port, { method: 'PUT', path: '/api/v1/kv/grants/doc', token: t, body: { value } });
    const get = (t: string) => send(env.port, { path: '/api/v1/kv/grants/doc', token: t });
    // Many requests first: the token's grant is served from memory by now.
    for (let i = 0; i < 20; i++) assert.equal((await put(token, i)).status, 200);
    for (let i = 0; i < 20; i++) assert.equal((await get(token)).status, 200);
    assert.equal((await get(sibling)).status, 200);
    assert.equal(svc.cli(['token', 'revoke', token]).code, 0);
    assertError(await put(token, 99), 401, 'unauthenticated');
    assertError(await get(token), 401, 'unauthenticated');
    const doc = await get(sibling);
    assert.equal(doc.status, 200, 'another token of the studio still works');
    assert.deepEqual(JSON.parse(doc.text).value, { value: 19 }, 'the refused PUT wrote nothing');
  });

  test('a token created while the server runs works at once', async () => {
    const token = svc.token('beta', ['kv']);
    assert.equal((await send(env.port, { path: '/api/v1/sessions', token })).status, 200);
  });
});

describe('bodies', () => {
  test('a JSON body over the body limit is 413 with details.limit (Content-Length)', async () => {
    const res = await send(env.port, { method: 'PUT', path: '/api/v1/kv/ns/big', token: env.tokens.alpha, body: { s: 'x'.repeat(1000) } });
    assertError(res, 413, 'too_large', { limit: 1000 });
    assert.equal(res.headers.connection, 'close', 'the unread rest of the body is not drained');
  });

  test('a chunked body over the limit is 413 as well and nothing is stored', async () => {
    const res = await send(env.port, {
      method: 'PUT',
      path: '/api/v1/kv/ns/chunked',
      token: env.tokens.alpha,
      raw: JSON.stringify({ s: 'x'.repeat(2000) }),
      headers: { 'Content-Length': undefined, 'Transfer-Encoding': 'chunked' },
    });
    assertError(res, 413, 'too_large', { limit: 1000 });
    assertError(await send(env.port, { path: '/api/v1/kv/ns/chunked', token: env.tokens.alpha }), 404, 'not_found');
  });

  test('a body at the limit is accepted', async () => {
    const doc = { s: 'x'.repeat(1000 - 8) };
    assert.equal(JSON.stringify(doc).length, 1000);
    const res = await send(env.port, { method: 'PUT', path: '/api/v1/kv/ns/exact', token: env.tokens.alpha, body: doc });
    assert.equal(res.status, 200, res.text);
  });

  test('invalid UTF-8 in a body is bad_request', async () => {
    const res = await send(env.port, {
      method: 'PUT',
      path: '/api/v1/kv/ns/utf',
      token: env.tokens.alpha,
      raw: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]),
    });
    assertError(res, 400, 'bad_request');
  });
});

describe('answers', () => {
  test('every API answer, success or error, is no-store JSON with a request id', async () => {
    for (const res of [
      await send(env.port, { path: '/api/v1/sessions', token: env.tokens.alpha }),
      await send(env.port, { path: '/api/v1/sessions' }),
      await send(env.port, { path: '/api/v1/x', token: env.tokens.alpha }),
    ]) {
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.ok(res.headers['x-request-id']);
    }
  });

  test('HEAD answers like GET, without a body', async () => {
    const get = await send(env.port, { path: '/api/v1/sessions', token: env.tokens.alpha });
    const head = await send(env.port, { method: 'HEAD', path: '/api/v1/sessions', token: env.tokens.alpha });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    assert.equal(head.headers['content-length'], get.headers['content-length']);
    assertError(await send(env.port, { path: '/api/v1/sessions', method: 'GET' }), 401, 'unauthenticated');
    assert.equal((await send(env.port, { method: 'HEAD', path: '/api/v1/sessions' })).status, 401);
  });

  test('the OpenAPI document is served and lists every route', async () => {
    const res = await send(env.port, { path: '/api/v1/openapi.json' });
    assert.equal(res.status, 200);
    assert.equal(res.json.openapi, '3.1.0');
    for (const path of ['/kv/{ns}', '/kv/{ns}/{key}', '/sessions', '/sessions/{id}', '/sessions/{id}:activate', '/sessions/{id}:duplicate']) {
      assert.ok(res.json.paths[path], `missing ${path}`);
    }
    assert.deepEqual(Object.keys(res.json.paths['/kv/{ns}/{key}']).sort(), ['delete', 'get', 'patch', 'put']);
  });

  test('docs/openapi.json is the document the service serves (run `npm run docs` after changing routes)', async () => {
    const res = await send(env.port, { path: '/api/v1/openapi.json' });
    const committed = JSON.parse(readFileSync(join(ROOT, 'docs', 'openapi.json'), 'utf8'));
    assert.deepEqual(res.json, committed);
  });

  test('the OpenAPI document is refused to a foreign origin too', async () => {
    assertError(await send(env.port, { path: '/api/v1/openapi.json', headers: { Origin: 'http://evil.example' } }), 403, 'bad_origin');
  });
});
