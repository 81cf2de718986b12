import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { assertError } from './helpers/scenario';
import { tempDir, type TestService } from './helpers/service';
import { alive } from './helpers/processes';
import { fixture, rewriteManifest, startLauncher, studioGet, type LauncherClient } from './helpers/launcher';

/**
 * Update and link: the new version is swapped in
 * only when every step succeeded (a failed or cancelled update leaves the old
 * one installed and startable), a running studio is stopped before the swap
 * and started after it, added capabilities need approval, another lifecycle
 * job makes it 409 in_use; a linked studio runs from its source folder.
 */

let svc: TestService;
let l: LauncherClient;

before(async () => {
  ({ svc, l } = await startLauncher({ env: { BACKLOT_READY_TIMEOUT_MS: '8000' } }));
});
after(async () => {
  await svc.stop();
});

const appOf = (id: string) => join(svc.dataDir, 'studios', id, 'app');
const answer = async (id: string) => (await studioGet((await l.studio(id)).port, '/')).text.trim();

async function update(id: string, source: string, approve?: boolean): Promise<any> {
  const res = await l.post(`/launcher/studios/${id}:update`, approve === undefined ? { source } : { source, approve });
  assert.equal(res.status, 202, res.text);
  assert.equal(res.json.kind, 'update');
  return l.waitJob(res.json.id);
}

test('update of a running studio: stopped before the swap, started after it, and the new version answers', async () => {
  await l.installOk(fixture({ id: 'upd', version: '1.0.0' }));
  await l.startOk('upd');
  assert.equal(await answer('upd'), 'upd 1.0.0');
  const oldPid = Number((await studioGet((await l.studio('upd')).port, '/pid')).text);

  const v2 = fixture({ id: 'upd', version: '2.0.0', install: [{ name: 'prepare', run: 'node tool.js print preparing-2' }] });
  const job = await update('upd', v2);
  assert.equal(job.state, 'succeeded', JSON.stringify(job));
  const text = await l.logText(job.id);
  for (const line of ['preparing-2', 'stopping the running version', 'updated to 2.0.0', 'starting the new version']) {
    assert.ok(text.includes(line), `update log has "${line}": ${text.join('\n')}`);
  }
  assert.ok(text.indexOf('preparing-2') < text.indexOf('stopping the running version'), 'steps run before the old version stops');
  assert.equal(alive(oldPid), false);
  const s = await l.waitState('upd', 'running');
  assert.equal(s.version, '2.0.0');
  assert.equal(await answer('upd'), 'upd 2.0.0');
  assert.equal(JSON.parse(readFileSync(join(appOf('upd'), 'backlot.json'), 'utf8')).version, '2.0.0');
  assert.deepEqual(readdirSync(join(svc.dataDir, 'studios', 'upd')).sort(), ['app', 'data', 'stage'], 'no app.next or app.old left');
});

test('a failed update leaves the old version installed, running and startable', async () => {
  const v3 = fixture({ id: 'upd', version: '3.0.0', install: [{ name: 'migrate', run: 'node tool.js fail 4' }] });
  const pid = Number((await studioGet((await l.studio('upd')).port, '/pid')).text);
  const job = await update('upd', v3);
  assert.equal(job.state, 'failed');
  assert.match(job.last_error, /"migrate"/);
  const s = await l.studio('upd');
  assert.equal(s.state, 'running', 'the running version was never stopped');
  assert.equal(s.version, '2.0.0');
  assert.ok(alive(pid));
  assert.equal(JSON.parse(readFileSync(join(appOf('upd'), 'backlot.json'), 'utf8')).version, '2.0.0');
  assert.deepEqual(readdirSync(join(svc.dataDir, 'studios', 'upd')).sort(), ['app', 'data', 'stage']);
  await l.stopOk('upd');
  await l.startOk('upd');
  assert.equal(await answer('upd'), 'upd 2.0.0');
  await l.stopOk('upd');
  // Also when the download fails (the last phase before the swap).
  const v4 = fixture({ id: 'upd', version: '4.0.0', download: [{ url: 'file:tool.js', sha256: 'c'.repeat(64), to: 'x.bin' }] });
  assert.equal((await update('upd', v4)).state, 'failed');
  assert.equal((await l.studio('upd')).version, '2.0.0');
  await l.startOk('upd');
  await l.stopOk('upd');
});

test('409 approval_required with details.approval.capabilities until sent with approve: true', async () => {
  const v5 = fixture({ id: 'upd', version: '5.0.0', capabilities: ['kv', 'records', 'timeline'] });
  const res = await l.post('/launcher/studios/upd:update', { source: v5 });
  assertError(res, 409, 'approval_required', { approval: { capabilities: ['records', 'timeline'] } });
  assertError(await l.post('/launcher/studios/upd:update', { source: v5, approve: false }), 409, 'approval_required');
  assert.deepEqual((await l.jobsOf('upd')).filter((j) => j.state === 'running'), [], 'no job was started');
  assert.equal((await l.studio('upd')).version, '2.0.0');
  assert.equal((await update('upd', v5, true)).state, 'succeeded');
  const s = await l.studio('upd');
  assert.deepEqual(s.capabilities, ['kv', 'records', 'timeline']);
  const running = await l.startOk('upd');
  const token = (await studioGet(running.port, '/env')).json.BACKLOT_TOKEN;
  assert.equal((await l.call('GET', '/records/notes', undefined, token)).status, 200, 'the new token has the approved capability');
  await l.stopOk('upd');
  // Dropping a capability needs no approval.
  assert.equal((await update('upd', fixture({ id: 'upd', version: '6.0.0', capabilities: ['kv'] }))).state, 'succeeded');
});

test('409 in_use (details.job) while another lifecycle job of the studio runs; a cancelled update keeps the old version', async () => {
  const slow = fixture({ id: 'upd', version: '7.0.0', install: [{ name: 'wait', run: 'node tool.js sleep 30000' }] });
  const first = await l.post('/launcher/studios/upd:update', { source: slow });
  assert.equal(first.status, 202, first.text);
  assertError(await l.post('/launcher/studios/upd:update', { source: slow }), 409, 'in_use', { job: first.json.id });
  assertError(await l.post('/launcher/studios/upd:uninstall', { confirm: true }), 409, 'in_use', { job: first.json.id });
  for (let i = 0; i < 200 && !existsSync(join(svc.dataDir, 'studios', 'upd', 'app.next', 'partial.txt')); i++) await new Promise((r) => setTimeout(r, 25));
  assert.equal((await l.post(`/launcher/jobs/${first.json.id}:cancel`)).status, 204);
  assert.equal((await l.job(first.json.id)).state, 'cancelled');
  const s = await l.studio('upd');
  assert.equal(s.version, '6.0.0');
  assert.equal(s.state, 'installed');
  assert.deepEqual(readdirSync(join(svc.dataDir, 'studios', 'upd')).sort(), ['app', 'data', 'stage'], 'the prepared version is removed');
  await l.startOk('upd');
  await l.stopOk('upd');
});

test('update refusals: 404 unknown, 409 not_installed, 400 another id, 422 not_launchable and blocked', async () => {
  const v = fixture({ id: 'upd', version: '8.0.0' });
  assertError(await l.post('/launcher/studios/nosuch:update', { source: v }), 404, 'not_found');
  const { studio } = await l.install(fixture({ id: 'never', install: [{ name: 'boom', run: 'node tool.js fail 1' }] }));
  assert.equal(studio.state, 'failed');
  assertError(await l.post('/launcher/studios/never:update', { source: fixture({ id: 'never' }) }), 409, 'not_installed');
  assertError(await l.post('/launcher/studios/upd:update', { source: fixture({ id: 'other' }) }), 400, 'bad_request', { member: 'manifest.id' });
  assertError(await l.post('/launcher/studios/upd:update', { source: tempDir() }), 422, 'not_launchable');
  const blocked = fixture({ id: 'upd', version: '8.0.0', install: [{ name: 'x', run: 'node ../../x.js' }] });
  assertError(await l.post('/launcher/studios/upd:update', { source: blocked }), 422, 'blocked', { member: 'manifest.install.0.run' });
  assert.equal((await l.studio('upd')).version, '6.0.0');
});

test('a bad index in the new version is 400 naming the member before any job: nothing is swapped', async () => {
  await l.installOk(fixture({ id: 'upd-index', version: '1.0.0' }));
  const jobsBefore = (await l.jobsOf('upd-index')).length;
  const bad = fixture({ id: 'upd-index', version: '2.0.0', collections: { notes: { indexes: ['id'] } } });
  const res = await l.post('/launcher/studios/upd-index:update', { source: bad });
  assertError(res, 400, 'bad_request');
  assert.equal(res.json.details.member, 'manifest.collections.notes');
  assert.equal((await l.jobsOf('upd-index')).length, jobsBefore, 'no update job was made');
  assert.equal((await l.studio('upd-index')).version, '1.0.0');
});

test('link: the app folder is the source; steps run there; edits show at the next start', async () => {
  const src = fixture({ id: 'linked', install: [{ name: 'mark', run: 'node tool.js touch installed.txt' }] });
  const { res, studio } = await l.install(src, true);
  assert.equal(res.status, 202, res.text);
  assert.equal(res.json.kind, 'install');
  assert.equal(studio.state, 'installed');
  assert.equal(studio.linked, true);
  assert.equal(studio.source, src);
  assert.ok(existsSync(join(src, 'installed.txt')), 'the step ran in the source folder');
  assert.equal(existsSync(appOf('linked')), false, 'nothing is copied');
  await l.startOk('linked');
  assert.equal(await answer('linked'), 'linked 1.0.0');
  await l.stopOk('linked');
  const server = join(src, 'server.js');
  writeFileSync(server, readFileSync(server, 'utf8').replace("res.end(m.id + ' '", "res.end('edited ' + m.id + ' '"));
  await l.startOk('linked');
  assert.equal(await answer('linked'), 'edited linked 1.0.0');
  await l.stopOk('linked');
  assertError(await l.post('/launcher/studios:link', { source: src }), 409, 'id_taken');
  // An update of a linked studio runs from the source too.
  rewriteManifest(src, { id: 'linked', version: '1.1.0' });
  assert.equal((await update('linked', src)).state, 'succeeded');
  assert.equal((await l.studio('linked')).version, '1.1.0');
  await l.uninstall('linked');
  assert.ok(existsSync(join(src, 'server.js')), 'uninstall never removes a linked source');
});

test('422 not_linkable: inside the data dir, a file, a symlink in the path', async () => {
  const inData = join(svc.dataDir, 'mine');
  mkdirSync(inData);
  writeFileSync(join(inData, 'backlot.json'), readFileSync(join(fixture({ id: 'indata' }), 'backlot.json')));
  assertError(await l.post('/launcher/studios:link', { source: inData }), 422, 'not_linkable');
  const src = fixture({ id: 'linkme' });
  assertError(await l.post('/launcher/studios:link', { source: join(src, 'backlot.json') }), 422, 'not_linkable');
  const base = tempDir('backlot-linkpath-');
  symlinkSync(join(src, '..'), join(base, 'via'));
  assertError(await l.post('/launcher/studios:link', { source: join(base, 'via', src.split('/').pop()!) }), 422, 'not_linkable');
  const direct = join(base, 'direct');
  symlinkSync(src, direct);
  assertError(await l.post('/launcher/studios:link', { source: direct }), 422, 'not_linkable');
  assert.equal(await l.studio('linkme'), null);
  assert.equal(await l.studio('indata'), null);
});
