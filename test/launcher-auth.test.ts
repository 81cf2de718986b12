import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import { send, type HttpResponse } from './helpers/http';
import { assertError } from './helpers/scenario';
import { BIN, runCli, tempDir, type TestService } from './helpers/service';
import { fixture, startLauncher, type LauncherClient } from './helpers/launcher';

/**
 * The launcher credential (issue 15 item 7): every /launcher route needs it
 * (401 without, 401 with a studio token), it never opens a studio's data, a
 * studio's Host or Origin never reaches /launcher (403 bad_origin), and the
 * one-time login URL: printed by `login-url` and by `serve`, works once, for
 * two minutes, sets an HttpOnly, SameSite=Strict, host-only cookie, 303 to /.
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

const login = (code: string, headers: Record<string, string> = {}) => send(svc.port, { path: `/login?code=${code}`, headers });

function loginCode(url: string): string {
  const m = new RegExp(`^http://127\\.0\\.0\\.1:${svc.port}/login\\?code=([A-Za-z0-9_-]{43})$`).exec(url.trim());
  assert.ok(m, `a login URL for this server: ${url}`);
  return m[1]!;
}

function cookieOf(res: HttpResponse): string {
  const set = res.headers['set-cookie'];
  assert.ok(set && set.length === 1, 'one Set-Cookie');
  return set[0]!;
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

test('login-url: a one-time code; 303 to / with an HttpOnly, SameSite=Strict, host-only cookie that opens the launcher API', async () => {
  const r = svc.cli(['login-url']);
  assert.equal(r.code, 0, r.stderr);
  const code = loginCode(r.stdout);
  const res = await login(code);
  assert.equal(res.status, 303, res.text);
  assert.equal(res.headers.location, '/');
  const cookie = cookieOf(res);
  const parts = cookie.split(';').map((p) => p.trim());
  assert.match(parts[0]!, /^backlot_launcher=bl_launcher_[A-Za-z0-9_-]+$/);
  assert.ok(parts.includes('HttpOnly'), cookie);
  assert.ok(parts.includes('SameSite=Strict'), cookie);
  assert.ok(parts.includes('Path=/'), cookie);
  assert.ok(!parts.some((p) => /^domain=/i.test(p)), `host-only: ${cookie}`);

  const jar = { Cookie: parts[0]! };
  const list = await send(svc.port, { path: '/api/v1/launcher/studios', headers: jar });
  assert.equal(list.status, 200, list.text);
  assert.ok(list.json.items.some((s: any) => s.id === 'hosted'));
  const home = await send(svc.port, { path: '/', headers: jar });
  assert.equal(home.status, 200);
  assert.match(home.text, /<script src="\/ui\/launcher\.js" defer><\/script>/, 'signed in: the launcher UI');
  assertError(await send(svc.port, { path: '/api/v1/kv/settings', headers: jar }), 401, 'unauthenticated');
  assertError(await send(svc.port, { path: '/api/v1/launcher/studios', headers: { ...jar, Host: `hosted.localhost:${svc.port}` } }), 403, 'bad_origin');

  const again = await login(code);
  assert.equal(again.status, 401, 'the code works once');
  assert.equal(again.headers['set-cookie'], undefined);
  assert.equal((await login('x'.repeat(43))).status, 401);
  assert.equal((await login('short')).status, 401);
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
  const res = await login(code);
  assert.equal(res.status, 401);
  assert.equal(res.headers['set-cookie'], undefined);
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
  assert.equal((await login(live)).status, 303);
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
    const res = await send(Number(u.port), { path: `${u.pathname}${u.search}` });
    assert.equal(res.status, 303);
    assert.match(cookieOf(res), /^backlot_launcher=/);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
});
