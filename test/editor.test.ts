import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { createService, type Service } from '../service/app';
import { LAUNCHER_SQL } from '../service/studios';
import { send } from './helpers/http';
import { assertError, runScenarios, type ScenarioEnv } from './helpers/scenario';
import { runCli, startService, tempDir, type TestService } from './helpers/service';
import { openSse, type SseConnection } from './helpers/sse';

/**
 * The editor surface's service side (docs/api.md "Editor surface") and the
 * launcher credential: the real CLI, the real service, real
 * HTTP. Publishing is driven in-process (createService) until the timeline's
 * `:open` exists; the hub's own rules are in test/unit/editor-hub.test.ts.
 */

const EVENTS = '!/editor/events';
const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function launcherToken(dataDir: string): string {
  const r = runCli(['launcher-token', '--data-dir', dataDir]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.trim();
}

describe('bin/backlot launcher-token', () => {
  let dir: string;
  before(() => {
    dir = tempDir();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('prints one credential alone on one line; two calls give two; only hashes are stored', () => {
    const r = runCli(['launcher-token', '--data-dir', dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^bl_launcher_[A-Za-z0-9_-]{43}\n$/);
    assert.equal(r.stderr, '');
    const first = r.stdout.trim();
    const second = launcherToken(dir);
    assert.notEqual(second, first);
    assert.notEqual(first.slice(0, 4), 'blt_', 'never the studio token prefix');
    for (const file of readdirSync(dir).filter((f) => f.startsWith('backlot.db'))) {
      const bytes = readFileSync(join(dir, file));
      for (const credential of [first, second]) {
        assert.equal(bytes.includes(credential), false, `${file} holds a credential in clear`);
        assert.equal(bytes.includes(credential.slice('bl_launcher_'.length)), false, `${file} holds a credential's random part`);
      }
    }
    const db = new Database(join(dir, 'backlot.db'), { readonly: true });
    try {
      const hashes = (db.prepare('SELECT hash FROM launcher_credentials ORDER BY created_at').pluck().all() as Buffer[]).map((h) => h.toString('hex'));
      const sha = (t: string) => createHash('sha256').update(t).digest('hex');
      assert.deepEqual(new Set(hashes), new Set([sha(first), sha(second)]));
      assert.equal((db.prepare('SELECT count(*) FROM tokens').pluck().get() as number), 0, 'not a studio token');
    } finally {
      db.close();
    }
  });

  test('the credential lookup is one primary-key search (migration 0009)', () => {
    const db = new Database(join(dir, 'backlot.db'), { readonly: true });
    try {
      const plan = (db.prepare(`EXPLAIN QUERY PLAN ${LAUNCHER_SQL.resolve}`).all(Buffer.alloc(32)) as { detail: string }[]).map((r) => r.detail);
      assert.deepEqual(plan, ['SEARCH launcher_credentials USING PRIMARY KEY (hash=?)']);
    } finally {
      db.close();
    }
  });

  test('takes no argument (exit 2) and --help shows its use', () => {
    const bad = runCli(['launcher-token', 'extra', '--data-dir', dir]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /Usage: backlot launcher-token/);
    const help = runCli(['launcher-token', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /launcher credential/);
  });
});

// Timeouts: a refusal that broke would answer with an endless stream; the test fails instead of hanging.
describe('GET /editor/events on the real service', { timeout: 60_000 }, () => {
  let svc: TestService;
  const env: ScenarioEnv = { port: 0, tokens: {} };
  before(async () => {
    // Short heartbeats (the jobs streams' test setting, shared by every event stream).
    svc = await startService({ env: { BACKLOT_SSE_HEARTBEAT_MS: '200' } });
    env.port = svc.port;
    env.tokens.studio = svc.studio('paint', ['kv', 'timeline', 'jobs']);
    // Made while serve runs on the same data dir, as a user would.
    env.tokens.launcher = launcherToken(svc.dataDir);
    env.tokens.revoked = launcherToken(svc.dataDir);
    const revoke = svc.cli(['token', 'revoke', env.tokens.revoked]);
    assert.equal(revoke.code, 0, revoke.stderr);
    assert.match(revoke.stderr, /Launcher credential revoked/);
  });
  after(async () => {
    if (svc) await svc.stop();
  });

  const host = (sub: string) => ({ Host: `${sub}:${env.port}` });

  test('a good credential opens the stream: 200 text/event-stream, hello, then heartbeats', async () => {
    const s = await openSse(svc.port, EVENTS, env.tokens.launcher);
    try {
      assert.equal(s.status, 200, s.text());
      assert.match(String(s.headers['content-type']), /^text\/event-stream/);
      assert.equal(s.headers['cache-control'], 'no-cache');
      assert.equal(s.headers['access-control-allow-origin'], undefined);
      const [hello] = await s.waitFor((m) => m.event === 'hello');
      assert.deepEqual(Object.keys(JSON.parse(hello!.data)), ['connected_at']);
      assert.match(JSON.parse(hello!.data).connected_at, RFC3339_MS);
      await s.waitForComment((c) => c === 'heartbeat');
    } finally {
      s.close();
    }
  });

  test('a credential made while the stream of another is open works at once; its revocation applies at once', async () => {
    const fresh = launcherToken(svc.dataDir);
    const s = await openSse(svc.port, EVENTS, fresh);
    s.close();
    assert.equal(s.status, 200);
    assert.equal(svc.cli(['token', 'revoke', fresh]).code, 0);
    assertError(await send(svc.port, { path: '/editor/events', token: fresh }), 401, 'unauthenticated');
    assert.equal(svc.cli(['token', 'revoke', fresh]).code, 1, 'already revoked');
  });

  describe('refusals', { timeout: 30_000 }, () => {
    runScenarios(() => env, [
      { name: 'no credential: 401', path: EVENTS, expectStatus: 401, expectCode: 'unauthenticated' },
      { name: 'a studio token: 401', path: EVENTS, as: 'studio', expectStatus: 401, expectCode: 'unauthenticated' },
      { name: 'garbage: 401', path: EVENTS, token: 'garbage', expectStatus: 401, expectCode: 'unauthenticated' },
      { name: 'garbage with the launcher prefix: 401', path: EVENTS, token: 'bl_launcher_garbage', expectStatus: 401, expectCode: 'unauthenticated' },
      { name: 'a revoked credential: 401', path: EVENTS, as: 'revoked', expectStatus: 401, expectCode: 'unauthenticated' },
      { name: 'not Bearer: 401', path: EVENTS, headers: { Authorization: 'Basic abc' }, expectStatus: 401, expectCode: 'unauthenticated' },
      // Unknown paths and methods under /editor (the page comes with the UI work).
      { name: 'GET /editor/events/x: 404', path: '!/editor/events/x', as: 'launcher', expectStatus: 404, expectCode: 'not_found' },
      { name: 'POST /editor/events: 404', method: 'POST', path: EVENTS, as: 'launcher', expectStatus: 404, expectCode: 'not_found' },
      // The launcher credential opens nothing of the studio data API (docs/api.md "Authentication and capabilities").
      { name: 'launcher credential on GET /kv/ns/key: 401', path: '/kv/ns/key', as: 'launcher', expectStatus: 401, expectCode: 'unauthenticated' },
      { name: 'launcher credential on PUT /kv/ns/key: 401', method: 'PUT', path: '/kv/ns/key', as: 'launcher', body: { a: 1 }, expectStatus: 401, expectCode: 'unauthenticated' },
      { name: 'launcher credential on GET /events: 401', path: '/events', as: 'launcher', expectStatus: 401, expectCode: 'unauthenticated' },
      { name: 'launcher credential on an unknown API path: 401', path: '/nowhere', as: 'launcher', expectStatus: 401, expectCode: 'unauthenticated' },
      // The studio token still works where it belongs.
      { name: 'the studio token on GET /kv/ns/key: 404 (authenticated)', path: '/kv/ns/key', as: 'studio', expectStatus: 404, expectCode: 'not_found' },
    ]);
  });

  // Own origin only, 403 before 401. Built per test: the headers name the port.
  const ownOriginOnly: { name: string; headers: () => Record<string, string>; credential?: boolean; path?: string }[] = [
    { name: "a studio page's Origin", headers: () => ({ Origin: `http://paint.localhost:${env.port}` }) },
    { name: "a studio page's Origin, no credential (403 first)", headers: () => ({ Origin: `http://paint.localhost:${env.port}` }), credential: false },
    { name: 'a foreign Origin', headers: () => ({ Origin: 'http://evil.example' }) },
    { name: 'a foreign Origin on our port', headers: () => ({ Origin: `http://evil.example:${env.port}` }) },
    { name: 'a foreign Host (DNS rebinding)', headers: () => host('evil.example') },
    { name: 'Sec-Fetch-Site same-site', headers: () => ({ 'Sec-Fetch-Site': 'same-site' }) },
    { name: 'Sec-Fetch-Site cross-site', headers: () => ({ 'Sec-Fetch-Site': 'cross-site' }) },
  ];
  // A studio's host name is the studio's own origin: every path there but /api/v1 and
  // /_backlot goes to the studio's server (docs/api.md "The studio origin"), so /editor is never the editor
  // channel there. No studio `paint` is installed: the proxy's 404 page answers.
  for (const [name, credential, path] of [
    ["a studio's host name", true, '/editor/events'],
    ["a studio's host name, no credential", false, '/editor/events'],
    ["a studio's host name on another path under /editor", true, '/editor/x'],
  ] as const) {
    test(`${name}: the studio's origin, never the editor channel`, { timeout: 15_000 }, async () => {
      const res = await send(env.port, { path, token: credential ? env.tokens.launcher : undefined, headers: host('paint.localhost') });
      assert.equal(res.status, 404);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.match(res.text, /No studio named paint/);
    });
  }
  for (const row of ownOriginOnly) {
    test(`${row.name}: 403 bad_origin`, { timeout: 15_000 }, async () => {
      const token = row.credential === false ? undefined : env.tokens.launcher;
      assertError(await send(env.port, { path: row.path ?? '/editor/events', token, headers: row.headers() }), 403, 'bad_origin');
    });
  }

  test("the service's own origins pass: Origin 127.0.0.1 or localhost, Host localhost, Sec-Fetch-Site same-origin", async () => {
    for (const headers of <Record<string, string>[]>[
      { Origin: `http://127.0.0.1:${env.port}`, 'Sec-Fetch-Site': 'same-origin' },
      { Origin: `http://localhost:${env.port}` },
      { Host: `localhost:${env.port}`, Origin: `http://localhost:${env.port}` },
    ]) {
      const s = await openSse(svc.port, EVENTS, env.tokens.launcher, headers);
      s.close();
      assert.equal(s.status, 200, `${JSON.stringify(headers)}: ${s.text()}`);
    }
  });
});

describe('the editor hub in a running service (in-process, real HTTP)', { timeout: 60_000 }, () => {
  let dataDir: string;
  let service: Service;
  let port: number;
  let credential: string;
  const open: SseConnection[] = [];

  before(async () => {
    dataDir = tempDir();
    credential = launcherToken(dataDir);
    service = createService({ dataDir, jobs: { heartbeatMs: 100, highWater: 64 * 1024 } });
    port = (await service.listen(0)).port;
  });
  after(async () => {
    for (const s of open) s.close();
    await service.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const connect = async (): Promise<SseConnection> => {
    const s = await openSse(port, EVENTS, credential);
    open.push(s);
    assert.equal(s.status, 200, s.text());
    await s.waitFor((m) => m.event === 'hello');
    return s;
  };

  async function until(ok: () => boolean, what: string): Promise<void> {
    const deadline = Date.now() + 15_000;
    while (!ok()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  test('surfaceUrl is the editor page on the port the service listens on', () => {
    assert.equal(service.editor.surfaceUrl(), `http://127.0.0.1:${port}/editor/`);
  });

  test('publish reaches two connected pages, as event open with the payload', async () => {
    const a = await connect();
    const b = await connect();
    assert.equal(service.editor.connected(), 2);
    const timeline = { id: '01JTIMELINE', name: 'cut', revision: 2, tracks: { V1: [] } };
    const opened = service.editor.openTimeline(timeline, 'paint');
    assert.deepEqual(opened, { opened: true, surface: `http://127.0.0.1:${port}/editor/` });
    for (const s of [a, b]) {
      const [event] = await s.waitFor((m) => m.event === 'open');
      const data = JSON.parse(event!.data);
      assert.deepEqual(data.timeline, timeline);
      assert.equal(data.studio_id, 'paint');
      assert.match(data.opened_at, RFC3339_MS);
    }
    assert.equal(service.editor.publish('open', { n: 2 }), 2);
    await b.waitFor((m) => m.event === 'open', 2);
  });

  test('a page that disconnects is removed; with none left, openTimeline is 501 unsupported', async () => {
    const before = service.editor.connected();
    await connect();
    assert.equal(service.editor.connected(), before + 1);
    for (const s of open.splice(0)) s.close();
    await until(() => service.editor.connected() === 0, 'the pages to be removed');
    assert.equal(service.editor.publish('open', {}), 0);
    assert.throws(() => service.editor.openTimeline({}, 'paint'), { status: 501, code: 'unsupported' });
  });

  test('revoking the credential of a connected page: it gets no later event and its stream ends; the others keep theirs', async () => {
    const doomed = launcherToken(dataDir);
    const revokedPage = await openSse(port, EVENTS, doomed);
    open.push(revokedPage);
    assert.equal(revokedPage.status, 200);
    await revokedPage.waitFor((m) => m.event === 'hello');
    const kept = await connect();
    assert.equal(runCli(['token', 'revoke', doomed, '--data-dir', dataDir]).code, 0);
    assert.equal(service.editor.publish('open', { secret: 'after revocation' }), 1, 'only the live page is reached');
    await kept.waitFor((m) => m.event === 'open' && m.data.includes('after revocation'));
    await revokedPage.closed;
    assert.equal(revokedPage.events.some((m) => m.data.includes('after revocation')), false, 'a revoked page received an event');
    kept.close();
    await until(() => service.editor.connected() === 0, 'the pages to be removed');
  });

  test('a connected page whose credential is revoked is ended at the next heartbeat, with no event to send', async () => {
    const doomed = launcherToken(dataDir);
    const page = await openSse(port, EVENTS, doomed);
    open.push(page);
    await page.waitFor((m) => m.event === 'hello');
    assert.equal(runCli(['token', 'revoke', doomed, '--data-dir', dataDir]).code, 0);
    await page.closed;
    await until(() => service.editor.connected() === 0, 'the page to be removed');
  });

  test('HEAD answers the headers and holds no page', async () => {
    const before = service.editor.connected();
    const res = await send(port, { method: 'HEAD', path: '/editor/events', token: credential });
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^text\/event-stream/);
    await until(() => service.editor.connected() === before, 'no page left behind');
  });

  test('a sequence larger than the high-water mark reaches a page that reads (:open is not 501 for a big timeline)', async () => {
    const page = await connect();
    const timeline = { id: '01JBIG', tracks: { V1: Array.from({ length: 2000 }, (_, i) => ({ asset_id: `01JASSET${i}`, start: i, in: 0, duration: 1 })) } };
    assert.ok(JSON.stringify(timeline).length > 64 * 1024);
    // Twice in a row: the second is written while the socket still holds the first.
    for (let i = 0; i < 2; i++) {
      assert.deepEqual(service.editor.openTimeline(timeline, 'paint'), { opened: true, surface: service.editor.surfaceUrl() });
    }
    const events = await page.waitFor((m) => m.event === 'open' && m.data.includes('01JBIG'), 2);
    for (const event of events) assert.deepEqual(JSON.parse(event.data).timeline, timeline);
    page.close();
    await until(() => service.editor.connected() === 0, 'the page to be removed');
  });

  test('a page that stops reading is dropped past the high-water mark', async () => {
    const slow = await connect();
    const fast = await connect();
    slow.res.pause();
    const big = { blob: 'z'.repeat(64 * 1024) };
    // Until the socket buffers on both sides are full and then the 64 KiB mark is passed.
    for (let i = 0; i < 2000 && service.editor.connected() === 2; i++) {
      service.editor.publish('open', big);
      await new Promise((r) => setImmediate(r));
    }
    await until(() => service.editor.connected() === 1, 'the slow page to be dropped');
    await fast.waitFor((m) => m.event === 'open', 1);
    slow.close();
    fast.close();
    await until(() => service.editor.connected() === 0, 'both pages gone');
  });

  test('service close ends a connected page cleanly (the response completes) and stops', async () => {
    const s = await connect();
    await service.close();
    await s.closed;
    assert.equal(s.res.complete, true, 'the stream was ended, not cut');
    assert.equal(service.editor.connected(), 0);
  });
});

describe('shutdown with an editor page connected', { timeout: 30_000 }, () => {
  test('SIGTERM: the stream ends, exit 0 within 5 s', async () => {
    const svc = await startService();
    const credential = launcherToken(svc.dataDir);
    const s = await openSse(svc.port, EVENTS, credential);
    await s.waitFor((m) => m.event === 'hello');
    const started = Date.now();
    const code = await svc.stop('SIGTERM');
    await s.closed;
    assert.equal(code, 0);
    assert.ok(Date.now() - started < 5000);
    assert.equal(s.res.complete, true, 'the stream was ended, not cut');
  });
});
