import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import { send } from './helpers/http';
import { spendLoginCode } from './helpers/login';
import { assertError } from './helpers/scenario';
import { BIN, runCli, tempDir, type TestService } from './helpers/service';
import { fixture, startLauncher, type LauncherClient } from './helpers/launcher';

/**
 * The launcher credential (docs/security.md "The launcher credential"): every
 * /launcher route needs it (401 without, 401 with a studio token), it never
 * opens a studio's data, a studio's Host or Origin never reaches /launcher
 * (403 bad_origin), and the one-time login URL: printed by `login-url` and by
 * `serve`; opening it spends nothing; the page's own POST spends it once, for
 * two minutes, and gets a credential back in JSON; never a cookie.
 */

let svc: TestService;
let l: LauncherClient;
let studioToken: string;

before(async () => {
  ({ svc, l } = await startLauncher());
  studioToken = svc.studio('plain', ['kv', 'records', 'jobs', 'assets', 'gallery', 'timeline']);
  await l.installOk(fixture({ id: 'hosted' }));
  await l.startOk('hosted');
});
after(async () => {
  await svc.stop();
});

/** Every operation under /launcher in the OpenAPI document, with its path parameters filled in. */
async function launcherOperations(): Promise<{ method: string; path: string }[]> {
  const doc = await send(svc.port, { path: '/api/v1/openapi.json' });
  assert.equal(doc.status, 200);
  const ops: { method: string; path: string }[] = [];
  for (const [path, item] of Object.entries(doc.json.paths as Record<string, Record<string, unknown>>)) {
    if (!path.startsWith('/launcher')) continue;
    for (const method of Object.keys(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      ops.push({ method: method.toUpperCase(), path: `/api/v1${path.replace(/\{[^}]+\}/g, 'hosted')}` });
    }
  }
  return ops;
}


function loginCode(url: string): string {
  const m = new RegExp(`^http://127\\.0\\.0\\.1:${svc.port}/login\\?code=([A-Za-z0-9_-]{43})$`).exec(url.trim());
  assert.ok(m, `a login URL for this server: ${url}`);
  return m[1]!;
}


test('every /launcher operation is 401 without a credential and with a studio token', async () => {
  const ops = await launcherOperations();
  for (const needed of ['GET /api/v1/launcher/studios', 'POST /api/v1/launcher/studios:install', 'POST /api/v1/launcher/jobs/hosted:cancel', 'GET /api/v1/launcher/events']) {
    assert.ok(ops.some((o) => `${o.method} ${o.path}` === needed), `${needed} is listed`);
  }
  assert.ok(ops.length >= 15, `${ops.length} operations`);
  for (const op of [...ops, { method: 'GET', path: '/api/v1/launcher/nosuch' }]) {
    const body = op.method === 'POST' ? {} : undefined;
    assertError(await send(svc.port, { method: op.method, path: op.path, body }), 401, 'unauthenticated');
    const studio = await send(svc.port, { method: op.method, path: op.path, body, token: studioToken });
    assert.equal(studio.status, 401, `${op.method} ${op.path} with a studio token: ${studio.text}`);
    const garbage = await send(svc.port, { method: op.method, path: op.path, body, token: 'bl_launcher_not-a-real-one' });
    assert.equal(garbage.status, 401, `${op.method} ${op.path} with a made-up credential`);
  }
});

test("the launcher credential never opens a studio's data", async () => {
  for (const path of ['/kv/settings', '/kv/settings/x', '/records/notes', '/sessions', '/jobs', '/events', '/gallery/items', '/timeline', '/assets/01ARZ3NDEKTSV4RRFFQ69G5FAV']) {
    const res = await l.call('GET', path);
    assertError(res, 401, 'unauthenticated');
  }
  assert.equal((await l.call('PUT', '/kv/settings/x', { a: 1 })).status, 401);
});

test('/launcher from a studio Host or Origin is 403 bad_origin, even with the credential', async () => {
  const studioHost = `hosted.localhost:${svc.port}`;
  for (const headers of [
    { Host: studioHost },
    { Origin: `http://${studioHost}` },
    { Origin: 'http://evil.example' },
    { Host: `plain.localhost:${svc.port}` },
  ]) {
    const res = await send(svc.port, { path: '/api/v1/launcher/studios', token: l.cred, headers });
    assertError(res, 403, 'bad_origin');
  }
  const viaBacklot = await send(svc.port, { path: '/_backlot/api/v1/launcher/studios', token: l.cred, headers: { Host: studioHost } });
  assert.ok([401, 403].includes(viaBacklot.status), `${viaBacklot.status} ${viaBacklot.text}`);
  assert.equal(viaBacklot.json?.items, undefined);
});

test('login-url: opening the URL (GET, HEAD, again and again: a prefetch, a preview) spends nothing; the page posts the code once and gets a credential, never a cookie', async () => {
  const r = svc.cli(['login-url']);
  assert.equal(r.code, 0, r.stderr);
  const code = loginCode(r.stdout);
  for (const method of ['HEAD', 'GET', 'GET', 'HEAD']) {
    const page = await send(svc.port, { method, path: `/login?code=${code}`, headers: { 'Sec-Fetch-Site': 'none', 'Sec-Fetch-Mode': 'navigate', 'Sec-Purpose': 'prefetch' } });
    assert.equal(page.status, 200, `${method}: ${page.text}`);
    assert.equal(page.headers['set-cookie'], undefined, 'never a cookie');
    if (method === 'GET') assert.match(page.text, /<script src="\/ui\/launcher\.js" defer><\/script>/, 'the launcher page, whose script spends the code');
    assert.match(String(page.headers['content-security-policy']), /script-src 'self'(;|$)/);
  }
  const res = await spendLoginCode(svc.port, code);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers['set-cookie'], undefined, 'never a cookie');
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.deepEqual(Object.keys(res.json).sort(), ['credential', 'kind']);
  assert.equal(res.json.kind, 'browser');
  assert.match(res.json.credential, /^bl_launcher_[A-Za-z0-9_-]{43}$/);
  const cred = res.json.credential as string;

  const list = await send(svc.port, { path: '/api/v1/launcher/studios', token: cred });
  assert.equal(list.status, 200, list.text);
  assert.ok(list.json.items.some((s: any) => s.id === 'hosted'));
  assertError(await send(svc.port, { path: '/api/v1/kv/settings', token: cred }), 401, 'unauthenticated');
  assertError(await send(svc.port, { path: '/api/v1/launcher/studios', token: cred, headers: { Host: `hosted.localhost:${svc.port}` } }), 403, 'bad_origin');
  // The credential as a cookie opens nothing, under any name or path: only the header counts.
  for (const cookie of [`backlot_launcher=${cred}`, `backlot_launcher=${cred}; other=1`, `bl=${cred}`]) {
    assertError(await send(svc.port, { path: '/api/v1/launcher/studios', headers: { Cookie: cookie } }), 401, 'unauthenticated');
  }

  const again = await spendLoginCode(svc.port, code);
  assertError(again, 401, 'unauthenticated');
  assert.match(again.json.message, /backlot login-url/);
  assertError(await spendLoginCode(svc.port, 'x'.repeat(43)), 401, 'unauthenticated');
  assertError(await spendLoginCode(svc.port, 'short'), 401, 'unauthenticated');
});

test('a code is spent once even when two pages post it at the same moment', async () => {
  const code = loginCode(svc.cli(['login-url']).stdout);
  const answers = await Promise.all(Array.from({ length: 8 }, () => spendLoginCode(svc.port, code)));
  assert.deepEqual(answers.map((a) => a.status).sort(), [200, 401, 401, 401, 401, 401, 401, 401]);
});

test('POST /login from anywhere but the launcher page itself is refused and spends nothing', async () => {
  const code = loginCode(svc.cli(['login-url']).stdout);
  const studio = `http://hosted.localhost:${svc.port}`;
  const refusals: [string, Record<string, string | undefined>, number, string][] = [
    ['no Origin', { Origin: undefined, 'Sec-Fetch-Site': undefined }, 403, 'bad_origin'],
    ['a studio origin', { Origin: studio, 'Sec-Fetch-Site': 'same-site' }, 403, 'bad_origin'],
    ['another port of 127.0.0.1', { Origin: `http://127.0.0.1:${svc.port + 1}`, 'Sec-Fetch-Site': 'same-site' }, 403, 'bad_origin'],
    ['another site', { Origin: 'http://evil.example', 'Sec-Fetch-Site': 'cross-site' }, 403, 'bad_origin'],
    ['a null origin', { Origin: 'null' }, 403, 'bad_origin'],
    ['a rebound Host', { Host: `evil.example:${svc.port}`, Origin: `http://evil.example:${svc.port}` }, 403, 'bad_origin'],
  ];
  for (const [name, headers, status, errorCode] of refusals) {
    const r = await spendLoginCode(svc.port, code, headers);
    assert.equal(r.status, status, `${name}: ${r.status} ${r.text}`);
    assert.equal(r.json.code, errorCode, name);
    assert.equal(r.headers['set-cookie'], undefined);
  }
  // On a studio's host, /login is the studio's own server's path: it never reaches the service.
  const onStudio = await spendLoginCode(svc.port, code, { Origin: studio, Host: `hosted.localhost:${svc.port}` });
  assert.doesNotMatch(onStudio.text, /bl_launcher_/);
  // A form post (no preflight) is not JSON: refused before the code is looked at.
  const form = await send(svc.port, { method: 'POST', path: '/login', raw: `code=${code}`, contentType: 'application/x-www-form-urlencoded', headers: { Origin: `http://127.0.0.1:${svc.port}` } });
  assertError(form, 400, 'bad_request');
  const text = await send(svc.port, { method: 'POST', path: '/login', raw: JSON.stringify({ code }), contentType: 'text/plain', headers: { Origin: `http://127.0.0.1:${svc.port}` } });
  assertError(text, 400, 'bad_request');
  // None of these spent it.
  assert.equal((await spendLoginCode(svc.port, code)).status, 200);
});

test('an expired code fails', async () => {
  const code = randomBytes(32).toString('base64url');
  const db = new Database(join(svc.dataDir, 'backlot.db'));
  try {
    db.prepare('INSERT INTO login_codes (hash, expires_at) VALUES (?, ?)').run(
      createHash('sha256').update(code).digest(),
      new Date(Date.now() - 1000).toISOString(),
    );
  } finally {
    db.close();
  }
  const res = await spendLoginCode(svc.port, code);
  assertError(res, 401, 'unauthenticated');
  // The same kind of row, still live, works: the expiry is what refused it.
  const live = randomBytes(32).toString('base64url');
  const db2 = new Database(join(svc.dataDir, 'backlot.db'));
  try {
    db2.prepare('INSERT INTO login_codes (hash, expires_at) VALUES (?, ?)').run(
      createHash('sha256').update(live).digest(),
      new Date(Date.now() + 60_000).toISOString(),
    );
  } finally {
    db2.close();
  }
  assert.equal((await spendLoginCode(svc.port, live)).status, 200);
});

test('a code lives two minutes', async () => {
  const code = loginCode(svc.cli(['login-url']).stdout);
  const db = new Database(join(svc.dataDir, 'backlot.db'));
  try {
    const expires = db.prepare('SELECT expires_at FROM login_codes WHERE hash = ?').pluck().get(createHash('sha256').update(code).digest()) as string;
    const left = Date.parse(expires) - Date.now();
    assert.ok(left > 110_000 && left <= 120_000, `${left} ms`);
    assert.equal(db.prepare('SELECT count(*) FROM login_codes WHERE hash = ?').pluck().get(Buffer.from(code)), 0, 'stored only hashed');
  } finally {
    db.close();
  }
});

test('login-url with no server running: exit 1 and a clear message', () => {
  const r = runCli(['login-url', '--data-dir', tempDir()]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /No Backlot server is running on .*backlot serve/);
  assert.equal(r.stdout, '');
});

test('serve prints a login URL at start, and it signs in', async () => {
  const dataDir = tempDir();
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const lines: string[] = [];
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no login URL: ${lines.join('\n')}`)), 20_000);
      createInterface({ input: child.stdout! }).on('line', (line) => {
        lines.push(line);
        const m = /(http:\/\/127\.0\.0\.1:\d+\/login\?code=\S+)/.exec(line);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
    });
    assert.match(lines[0]!, /^Backlot listening on http:\/\/127\.0\.0\.1:\d+$/);
    const u = new URL(url);
    const res = await spendLoginCode(Number(u.port), u.searchParams.get('code')!);
    assert.equal(res.status, 200, res.text);
    assert.match(res.json.credential, /^bl_launcher_/);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
});
