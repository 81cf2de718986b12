import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CLIPMAKER, fixture, LauncherClient, rewriteManifest, sleep, SKETCHPAD, startLauncher, type LauncherService } from './helpers/launcher';
import { startService } from './helpers/service';

/**
 * `POST /launcher/jobs/{id}:retry` and `GET /launcher/examples` (docs/api.md
 * "Launcher"), black-box against the real service: every refusal with its
 * status and code, and what each retried kind runs again.
 */

describe('retrying a failed job', () => {
  let svc: LauncherService;
  let l: LauncherClient;

  before(async () => {
    svc = await startLauncher();
    l = svc.l;
  });
  after(async () => {
    await svc?.svc.stop();
  });

  const refused = async (jobId: string, status: number, code: string, reason?: string) => {
    const r = await l.post(`/launcher/jobs/${jobId}:retry`);
    assert.equal(r.status, status, r.text);
    assert.equal(r.json.code, code, r.text);
    if (reason) assert.equal(r.json.details.reason, reason, r.text);
    return r;
  };
  const retried = async (jobId: string, kind: string) => {
    const r = await l.post(`/launcher/jobs/${jobId}:retry`);
    assert.equal(r.status, 202, r.text);
    assert.equal(r.json.kind, kind);
    assert.notEqual(r.json.id, jobId, 'a new job');
    return l.waitJob(r.json.id);
  };

  test('an unknown job is 404; a studio token is 401', async () => {
    await refused('01ARZ3NDEKTSV4RRFFQ69G5FAV', 404, 'not_found');
    await refused('not-an-id', 404, 'not_found');
    await l.installOk(fixture({ id: 'rtoken' }));
    const token = svc.svc.token('rtoken', ['kv']);
    const r = await l.call('POST', '/launcher/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV:retry', undefined, token);
    assert.equal(r.status, 401);
    assert.equal(r.json.code, 'unauthenticated');
  });

  test('a failed install runs again from the source; once installed, the old failure is superseded; a succeeded job is not retryable', async () => {
    const src = fixture({ id: 'rinst', install: [{ name: 'boom', run: 'node tool.js fail 3' }] });
    const { res, studio } = await l.install(src);
    assert.equal(studio.state, 'failed');
    const first = await l.waitJob(res.json.id);
    assert.equal(first.state, 'failed');

    const again = await retried(first.id, 'install');
    assert.equal(again.state, 'failed', 'the folder still fails');
    assert.equal((await l.waitState('rinst', ['failed'])).state, 'failed');

    rewriteManifest(src, { id: 'rinst', install: [{ name: 'fine', run: 'node tool.js print ok' }] });
    const third = await retried(again.id, 'install');
    assert.equal(third.state, 'succeeded');
    const s = await l.waitState('rinst', 'installed');
    assert.equal(s.installed, true);

    await refused(first.id, 409, 'not_retryable', 'superseded');
    await refused(third.id, 409, 'not_retryable', 'state');
  });

  test('a failed download resumes the install at the download: no new install job, the studio ends installed', async () => {
    const bytes = Buffer.from('model weights v1\n');
    const sha = createHash('sha256').update(bytes).digest('hex');
    const src = fixture({ id: 'rdl', download: [{ url: 'file:weights.bin', sha256: sha, to: 'models/weights.bin' }] }, { 'weights.bin': 'wrong bytes' });
    const { studio } = await l.install(src);
    assert.equal(studio.state, 'failed');
    const failed = (await l.jobsOf('rdl')).find((j) => j.kind === 'download');
    assert.equal(failed?.state, 'failed', JSON.stringify(failed));

    writeFileSync(join(src, 'weights.bin'), bytes);
    const done = await retried(failed.id, 'download');
    assert.equal(done.state, 'succeeded', JSON.stringify(done));
    const s = await l.waitState('rdl', 'installed');
    assert.equal(s.last_error, null);
    assert.equal((await l.jobsOf('rdl')).filter((j) => j.kind === 'install').length, 1, 'the install was not run again');
    // Startable: the download is verified.
    await l.startOk('rdl');
    await l.stopOk('rdl');
  });

  test('a failed build runs the build again (then the download), not the install', async () => {
    const src = fixture({ id: 'rbuild', build: [{ name: 'compile', run: 'node tool.js fail 9' }] });
    const { studio } = await l.install(src);
    assert.equal(studio.state, 'failed');
    const failed = (await l.jobsOf('rbuild')).find((j) => j.kind === 'build');
    const again = await retried(failed.id, 'build');
    assert.equal(again.state, 'failed');
    const s = await l.waitState('rbuild', 'failed');
    assert.match(s.last_error, /The build job failed/);
    const kinds = (await l.jobsOf('rbuild')).map((j) => j.kind);
    assert.deepEqual(kinds, ['build', 'build', 'install']);
  });

  test('a failed update runs again from its folder with the capabilities approved then; a newly added one asks again', async () => {
    const src = fixture({ id: 'rupd', version: '1.0.0' });
    await l.installOk(src);
    const v2 = fixture({ id: 'rupd', version: '2.0.0', capabilities: ['kv', 'assets'], install: [{ name: 'migrate', run: 'node tool.js fail 4' }] });
    const u = await l.post('/launcher/studios/rupd:update', { source: v2, approve: true });
    assert.equal(u.status, 202, u.text);
    const failed = await l.waitJob(u.json.id);
    assert.equal(failed.state, 'failed');
    assert.equal(JSON.stringify(failed.data).includes(v2), false, 'the folder is not in the job a studio can read');

    const again = await retried(failed.id, 'update');
    assert.equal(again.state, 'failed', 'approved then: no approval asked');

    rewriteManifest(v2, { id: 'rupd', version: '2.0.0', capabilities: ['kv', 'assets', 'gallery'] });
    const r = await refused(again.id, 409, 'approval_required');
    assert.deepEqual(r.json.details.approval.capabilities, ['gallery']);

    rewriteManifest(v2, { id: 'rupd', version: '2.0.0', capabilities: ['kv', 'assets'] });
    const ok = await retried(again.id, 'update');
    assert.equal(ok.state, 'succeeded', JSON.stringify(ok));
    assert.equal((await l.studio('rupd')).version, '2.0.0');
    await refused(ok.id, 409, 'not_retryable', 'state');
  });

  test('other kinds are not retryable (kind before state); an uninstalled studio\'s failures are gone', async () => {
    const src = fixture({ id: 'rgone', install: [{ name: 'boom', run: 'node tool.js fail 3' }] });
    const { res } = await l.install(src);
    const failed = await l.waitJob(res.json.id);
    const un = await l.uninstall('rgone');
    await refused(un.id, 409, 'not_retryable', 'kind');
    await refused(failed.id, 409, 'not_retryable', 'gone');
  });

  test('a running job is not retryable; a folder that went away is the install\'s own 422', async () => {
    const src = fixture({ id: 'rbusy', install: [{ name: 'wait', run: 'node tool.js sleep 20000' }] });
    const r = await l.post('/launcher/studios:install', { source: src });
    assert.equal(r.status, 202);
    await refused(r.json.id, 409, 'not_retryable', 'state');
    assert.equal((await l.post(`/launcher/jobs/${r.json.id}:cancel`)).status, 204);
    // Cancelled is not failed.
    await refused(r.json.id, 409, 'not_retryable', 'state');

    const gone = fixture({ id: 'rmoved', install: [{ name: 'boom', run: 'node tool.js fail 3' }] });
    const { res } = await l.install(gone);
    const failed = await l.waitJob(res.json.id);
    const { rmSync } = await import('node:fs');
    rmSync(gone, { recursive: true, force: true });
    await refused(failed.id, 422, 'not_launchable');
  });
});

test('an install interrupted by a restart can be retried after it', { timeout: 90_000 }, async () => {
  const first = await startLauncher({ keepDataDir: true });
  const src = fixture({ id: 'rcrash', install: [{ name: 'slow', run: 'node tool.js sleep 60000' }] });
  const r = await first.l.post('/launcher/studios:install', { source: src });
  assert.equal(r.status, 202);
  while ((await first.l.job(r.json.id)).state !== 'running') await sleep(50);
  await sleep(300);
  first.svc.child.kill('SIGKILL');
  await new Promise((resolve) => first.svc.child.once('exit', resolve));
  const second = await startService({ dataDir: first.svc.dataDir });
  try {
    const cred = second.cli(['launcher-token']).stdout.trim();
    const l = new LauncherClient(second.port, cred);
    const job = await l.job(r.json.id);
    assert.equal(job.state, 'failed', 'interrupted jobs end failed at start-up');
    rewriteManifest(src, { id: 'rcrash', install: [{ name: 'quick', run: 'node tool.js print done' }] });
    const again = await l.post(`/launcher/jobs/${r.json.id}:retry`);
    assert.equal(again.status, 202, again.text);
    assert.equal((await l.waitJob(again.json.id)).state, 'succeeded');
    await l.waitState('rcrash', 'installed');
  } finally {
    await second.stop();
  }
});

describe('the example studios', () => {
  let svc: LauncherService;
  before(async () => {
    svc = await startLauncher();
  });
  after(async () => {
    await svc?.svc.stop();
  });

  test('GET /launcher/examples lists the shipped folders with what each needs; installing one from its folder marks it installed', async () => {
    const r = await svc.l.get('/launcher/examples');
    assert.equal(r.status, 200, r.text);
    const byId = new Map<string, any>(r.json.items.map((e: any) => [e.id, e]));
    assert.deepEqual([...byId.keys()], ['clipmaker', 'sketchpad'], 'by name');
    const clip = byId.get('clipmaker');
    assert.equal(clip.source, CLIPMAKER);
    assert.deepEqual(clip.needs, ['ffmpeg']);
    assert.equal(clip.heavy, true);
    assert.equal(clip.installed, false);
    assert.match(clip.description, /ffmpeg/);
    const sketch = byId.get('sketchpad');
    assert.equal(sketch.source, SKETCHPAD);
    assert.deepEqual(sketch.needs, []);
    for (const e of r.json.items) {
      assert.ok(isAbsolute(e.source) && existsSync(join(e.source, 'backlot.json')), e.source);
      assert.deepEqual(Object.keys(e).sort(), ['capabilities', 'description', 'heavy', 'id', 'installed', 'name', 'needs', 'source', 'version']);
    }

    await svc.l.installOk(sketch.source);
    const after = await svc.l.get('/launcher/examples');
    assert.equal(after.json.items.find((e: any) => e.id === 'sketchpad').installed, true);
    assert.equal(after.json.items.find((e: any) => e.id === 'clipmaker').installed, false);
  });

  test('only the launcher credential lists them (the folders are the person\'s paths)', async () => {
    for (const token of [null, svc.svc.token('sketchpad', ['kv', 'assets', 'gallery', 'jobs'])]) {
      const r = await svc.l.call('GET', '/launcher/examples', undefined, token);
      assert.equal(r.status, 401, r.text);
      assert.equal(r.json.code, 'unauthenticated');
      assert.doesNotMatch(r.text, /examples\/studios/);
    }
  });
});
