import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { assertError } from './helpers/scenario';
import { send } from './helpers/http';
import { type TestService } from './helpers/service';
import { openSse } from './helpers/sse';
import { alive, until } from './helpers/processes';
import { CLIPMAKER, fixture, pidsIn, SKETCHPAD, startLauncher, studioGet, type LauncherClient } from './helpers/launcher';

/**
 * Running studios: start and stop, the environment and the
 * runtime token a studio gets, every 409 of :start and :stop, a studio that
 * dies, one that is never ready, the whole process group ended at stop, the
 * studio's own log, and the launcher's `studio` events (never on a studio's
 * own /events).
 */

const READY_MS = 6000;
let svc: TestService;
let l: LauncherClient;
let held: Server;
let heldPort = 0;

before(async () => {
  ({ svc, l } = await startLauncher({ env: { BACKLOT_SECRET_TEST: 'leaked-if-you-see-this', BACKLOT_READY_TIMEOUT_MS: String(READY_MS), BACKLOT_SSE_HEARTBEAT_MS: '300' } }));
  held = createServer((_req, res) => res.end('someone else'));
  await new Promise<void>((r) => held.listen(0, '127.0.0.1', () => r()));
  heldPort = (held.address() as { port: number }).port;
  await l.installOk(SKETCHPAD);
  await l.installOk(CLIPMAKER);
});
after(async () => {
  held.close();
  await svc.stop();
});

const kv = (token: string | null) => l.call('GET', '/kv/settings', undefined, token);

test('start: 200 starting, then running; the env has PORT, BACKLOT_URL, BACKLOT_TOKEN and nothing of the service', async () => {
  await l.installOk(fixture({ id: 'envrun', capabilities: ['kv', 'jobs'], env: { FIXTURE_TAG: 'tagged' } }));
  const res = await l.post('/launcher/studios/envrun:start');
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.state, 'starting');
  assert.equal(typeof res.json.port, 'number');
  const running = await l.waitState('envrun', 'running');
  assert.equal(running.port, res.json.port);
  const env = (await studioGet(running.port, '/env')).json;
  assert.equal(env.PORT, String(running.port));
  assert.equal(env.BACKLOT_URL, `http://127.0.0.1:${svc.port}/api/v1`);
  assert.equal(env.BACKLOT_STUDIO_ID, 'envrun');
  assert.equal(env.FIXTURE_TAG, 'tagged');
  for (const name of Object.keys(env)) {
    assert.ok(['PATH', 'HOME', 'LANG', 'PORT', 'FIXTURE_TAG'].includes(name) || name.startsWith('BACKLOT_'), `unexpected variable ${name}`);
  }
  assert.equal(env.BACKLOT_SECRET_TEST, undefined, "the service's variables do not leak");
  assert.ok(!JSON.stringify(env).includes(l.cred), 'no launcher credential');
  assert.equal((await studioGet(running.port, '/')).text.trim(), 'envrun 1.0.0 tagged');
});

test("the runtime token has exactly the manifest's capabilities and is revoked at stop", async () => {
  const s = await l.studio('envrun');
  const token = (await studioGet(s.port, '/env')).json.BACKLOT_TOKEN;
  assert.equal((await kv(token)).status, 200);
  assert.equal((await l.call('GET', '/jobs', undefined, token)).status, 200);
  assertError(await l.call('GET', '/records/notes', undefined, token), 403, 'capability_required');
  assertError(await l.call('GET', '/gallery/items', undefined, token), 403, 'capability_required');
  assert.equal((await l.call('GET', '/launcher/studios', undefined, token)).status, 401, 'never the launcher');
  await l.stopOk('envrun');
  const stopped = await l.studio('envrun');
  assert.equal(stopped.state, 'installed');
  assert.equal(stopped.port, null);
  assert.equal((await kv(token)).status, 401, 'revoked at stop');
});

test('404 unknown studio; 409 not_installed, already_running, not_running', async () => {
  assertError(await l.post('/launcher/studios/nosuch:start'), 404, 'not_found');
  assertError(await l.post('/launcher/studios/nosuch:stop'), 404, 'not_found');
  const { studio } = await l.install(fixture({ id: 'broken', install: [{ name: 'boom', run: 'node tool.js fail 1' }] }));
  assert.equal(studio.state, 'failed');
  assertError(await l.post('/launcher/studios/broken:start'), 409, 'not_installed');
  assertError(await l.post('/launcher/studios/sketchpad:stop'), 409, 'not_running');
  await l.startOk('sketchpad');
  assertError(await l.post('/launcher/studios/sketchpad:start'), 409, 'already_running');
  await l.stopOk('sketchpad');
  assertError(await l.post('/launcher/studios/sketchpad:stop'), 409, 'not_running');
});

test('409 port_conflict (details.port) when the fixed port is held; the studio stays installed', async () => {
  await l.installOk(fixture({ id: 'fixedport', start: { run: 'node server.js --port {port}', port: heldPort } }));
  assertError(await l.post('/launcher/studios/fixedport:start'), 409, 'port_conflict', { port: heldPort });
  assert.equal((await l.studio('fixedport')).state, 'installed');
});

test('a fixed port is used as the manifest says; otherwise a free one each start', async () => {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
  const free = (probe.address() as { port: number }).port;
  await new Promise((r) => probe.close(r));
  await l.installOk(fixture({ id: 'ownport', start: { run: 'node server.js --port {port}', port: free } }));
  const s = await l.startOk('ownport');
  assert.equal(s.port, free);
  assert.equal((await studioGet(free, '/')).text.trim(), 'ownport 1.0.0');
  await l.stopOk('ownport');
  const a = await l.startOk('sketchpad');
  assert.ok(a.port !== svc.port && a.port !== heldPort);
  await l.stopOk('sketchpad');
});

test('409 heavy_conflict (details.heavy) while another heavy studio runs', async () => {
  await l.installOk(fixture({ id: 'heavytwo', heavy: true }));
  await l.startOk('clipmaker');
  try {
    assertError(await l.post('/launcher/studios/heavytwo:start'), 409, 'heavy_conflict', { heavy: 'clipmaker' });
    assert.equal((await l.studio('heavytwo')).state, 'installed');
    await l.startOk('sketchpad');
    await l.stopOk('sketchpad');
  } finally {
    await l.stopOk('clipmaker');
  }
  await l.startOk('heavytwo');
  assertError(await l.post('/launcher/studios/clipmaker:start'), 409, 'heavy_conflict', { heavy: 'heavytwo' });
  await l.stopOk('heavytwo');
});

test('409 not_fetched when a download is missing or its bytes changed; a new mtime with the same bytes still starts', async () => {
  const bed = join(svc.dataDir, 'studios', 'clipmaker', 'app', 'models', 'bed.wav');
  const later = new Date(Date.now() + 60_000);
  utimesSync(bed, later, later);
  await l.startOk('clipmaker');
  await l.stopOk('clipmaker');

  const bytes = readFileSync(bed);
  const changed = Buffer.from(bytes);
  changed[changed.length - 1] ^= 0xff;
  writeFileSync(bed, changed);
  assertError(await l.post('/launcher/studios/clipmaker:start'), 409, 'not_fetched', { downloads: ['models/bed.wav'] });
  assert.equal((await l.studio('clipmaker')).state, 'installed');
  rmSync(bed);
  assertError(await l.post('/launcher/studios/clipmaker:start'), 409, 'not_fetched', { downloads: ['models/bed.wav'] });
  copyFileSync(join(CLIPMAKER, 'media', 'bed.wav'), bed);
  assert.equal(statSync(bed).size, bytes.length);
  await l.startOk('clipmaker');
  await l.stopOk('clipmaker');
});

test('stop ends the whole process group (a child of the server too); the log shows the output', async () => {
  await l.installOk(fixture({ id: 'family', env: { FIXTURE_MODE: 'child' } }));
  const s = await l.startOk('family');
  const lines = await l.studioLog('family', (t) => t === `listening on ${s.port}`);
  const pids = pidsIn(lines);
  assert.equal(pids.length, 2, lines.join('\n'));
  assert.ok(pids.every(alive));
  await l.stopOk('family');
  for (const pid of pids) assert.equal(alive(pid), false, `pid ${pid} is gone once stop answered`);
  const sse = await openSse(svc.port, '/launcher/studios/family/logs', l.cred);
  await sse.waitFor((m) => m.event === 'line' && JSON.parse(m.data).text === '[backlot] stopped');
  const steps = sse.events.filter((m) => m.event === 'step').map((m) => JSON.parse(m.data).step);
  assert.match(steps[0], new RegExp(`^start 1\\.0\\.0 on port ${s.port}: node server\\.js --port ${s.port}$`));
  sse.close();
});

test('a studio whose process exits becomes failed and its token is revoked', async () => {
  await l.installOk(fixture({ id: 'crashy' }));
  const s = await l.startOk('crashy');
  const token = (await studioGet(s.port, '/env')).json.BACKLOT_TOKEN;
  assert.equal((await kv(token)).status, 200);
  await studioGet(s.port, '/exit');
  const failed = await l.waitState('crashy', 'failed');
  assert.match(failed.last_error, /exited with code 3 while running/);
  assert.equal(failed.port, null);
  assert.equal((await kv(token)).status, 401);
  const lines = await l.studioLog('crashy', (t) => t.includes('[backlot] the studio exited with code 3'));
  assert.ok(lines.includes('exiting on purpose'));
  await l.startOk('crashy');
  await l.stopOk('crashy');
});

test('a start refused after a crash leaves the studio failed, with its error', async () => {
  const blocker = createServer((_req, res) => res.end('x'));
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
  const port = (blocker.address() as { port: number }).port;
  try {
    await l.installOk(fixture({ id: 'crash-twice', start: { run: 'node server.js --port {port}', port } }));
    blocker.close();
    await new Promise((r) => setTimeout(r, 100));
    const s = await l.startOk('crash-twice');
    await studioGet(s.port, '/exit');
    const failed = await l.waitState('crash-twice', 'failed');
    await new Promise<void>((r, j) => {
      blocker.once('error', j);
      blocker.listen(port, '127.0.0.1', () => r());
    });
    assertError(await l.post('/launcher/studios/crash-twice:start'), 409, 'port_conflict');
    const after = await l.studio('crash-twice');
    assert.equal(after.state, 'failed');
    assert.equal(after.last_error, failed.last_error);
  } finally {
    blocker.close();
  }
});

test("the whole /_backlot prefix is the service's: other paths there are 404 and never reach the studio", async () => {
  const s = await l.startOk('sketchpad');
  try {
    for (const path of ['/_backlot', '/_backlot/', '/_backlot/api/v1', '/_backlot/index.html', '/_backlot/api/v2/kv/x']) {
      const r = await studioGetVia(svc.port, 'sketchpad', path);
      assert.equal(r.status, 404, `${path}: ${r.text.slice(0, 200)}`);
      assert.equal(r.json?.code, 'not_found', path);
    }
    assert.equal(s.id, 'sketchpad');
  } finally {
    await l.stopOk('sketchpad');
  }
});

test('not ready in time: failed, and its process group ended', async () => {
  await l.installOk(fixture({ id: 'sluggish', env: { FIXTURE_MODE: 'never,child' } }));
  const started = Date.now();
  assert.equal((await l.post('/launcher/studios/sluggish:start')).status, 200);
  const lines = await l.studioLog('sluggish', (t) => t.startsWith('child pid'));
  const pids = pidsIn(lines);
  assert.equal(pids.length, 2);
  const failed = await l.waitState('sluggish', 'failed', READY_MS + 15_000);
  assert.ok(Date.now() - started >= READY_MS - 500, 'it had its time');
  assert.match(failed.last_error, /did not answer on \/ within/);
  await until(() => !pids.some(alive), 'the group to end', 10_000);
});

test('GET /launcher/events: studio and job events; a studio\'s own /events never gets studio events', async () => {
  const token = svc.token('envrun', ['jobs']);
  const mine = await openSse(svc.port, '/events', token);
  const events = await openSse(svc.port, '/launcher/events', l.cred);
  assert.equal(events.status, 200);
  assert.match(String(events.headers['content-type']), /^text\/event-stream/);
  try {
    await l.startOk('envrun');
    await l.stopOk('envrun');
    const studio = (m: { event: string; data: string }) => m.event === 'studio' && JSON.parse(m.data).id === 'envrun';
    await events.waitFor((m) => studio(m) && JSON.parse(m.data).state === 'installed');
    const states = events.events.filter(studio).map((m) => JSON.parse(m.data).state);
    assert.deepEqual(states, ['starting', 'running', 'stopping', 'installed']);
    const first = JSON.parse(events.events.find(studio)!.data);
    assert.equal(first.origin, `http://envrun.localhost:${svc.port}`);

    const task = await l.call('POST', '/jobs', { title: 'marker' }, token);
    assert.equal(task.status, 201, task.text);
    await mine.waitFor((m) => m.event === 'job' && JSON.parse(m.data).id === task.json.id);
    assert.deepEqual(mine.events.filter((m) => m.event === 'studio'), [], "the studio's channel has no studio events");
    await events.waitFor((m) => m.event === 'job' && JSON.parse(m.data).id === task.json.id);

    const install = await l.post('/launcher/studios:install', { source: fixture({ id: 'watched' }) });
    await events.waitFor((m) => m.event === 'job' && JSON.parse(m.data).id === install.json.id && JSON.parse(m.data).state === 'succeeded');
    await events.waitFor((m) => m.event === 'studio' && JSON.parse(m.data).id === 'watched' && JSON.parse(m.data).state === 'installed');
  } finally {
    events.close();
    mine.close();
  }
});

test('the launcher event stream and a studio log stream send heartbeat comments', async () => {
  for (const path of ['/launcher/events', '/launcher/studios/sketchpad/logs']) {
    const sse = await openSse(svc.port, path, l.cred);
    try {
      assert.equal(sse.status, 200, sse.text());
      await sse.waitForComment((c) => c === 'heartbeat', 5000);
    } finally {
      sse.close();
    }
  }
  assertError(await l.get('/launcher/studios/nosuch/logs'), 404, 'not_found');
});

/** A GET on a studio's own origin, through the service's port. */
function studioGetVia(port: number, id: string, path: string) {
  return send(port, { path, headers: { Host: `${id}.localhost:${port}` } });
}
