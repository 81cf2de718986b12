import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { upload } from './helpers/assets';
import { ffmpegWrapper, tmpEntries } from './helpers/export';
import { makeVideo, requireFfmpeg } from './helpers/media';
import { assertError } from './helpers/scenario';
import { tempDir, type TestService } from './helpers/service';
import { openSse } from './helpers/sse';
import { alive } from './helpers/processes';
import { fixture, pidsIn, startLauncher, type LauncherClient } from './helpers/launcher';

/**
 * POST /launcher/jobs/{id}:cancel: a lifecycle job ends its
 * process group and removes partial files before the 204; a finished job is
 * 409 job_finished, an unknown one 404; a task job gets cancel_requested_at.
 */

let svc: TestService;
let l: LauncherClient;
let media: string;
let wrapper: ReturnType<typeof ffmpegWrapper>;

before(async () => {
  requireFfmpeg();
  media = tempDir('backlot-launcher-cancel-');
  wrapper = ffmpegWrapper(media);
  ({ svc, l } = await startLauncher({ env: { BACKLOT_FFMPEG: wrapper.path } }));
});
after(async () => {
  await svc.stop();
  rmSync(media, { recursive: true, force: true });
});

/** Waits for the running step to print its pids (leader and child) in the job's log. */
async function stepPids(jobId: string): Promise<number[]> {
  const sse = await openSse(svc.port, `/launcher/jobs/${jobId}/logs`, l.cred);
  try {
    const [line] = await sse.waitFor((m) => m.event === 'line' && JSON.parse(m.data).text.startsWith('pids '));
    return pidsIn([JSON.parse(line!.data).text]);
  } finally {
    sse.close();
  }
}

test('cancel of a slow install step: 204, cancelled, no process of its group left, partial files gone', async () => {
  const src = fixture({
    id: 'slowstep',
    install: [
      { name: 'quick', run: 'node tool.js print quick' },
      { name: 'wait', run: 'node tool.js sleep 30000' },
      { name: 'after', run: 'node tool.js touch after.txt' },
    ],
  });
  const res = await l.post('/launcher/studios:install', { source: src });
  assert.equal(res.status, 202, res.text);
  const pids = await stepPids(res.json.id);
  assert.equal(pids.length, 2);
  assert.ok(pids.every(alive), 'the step and its child run');
  const app = join(svc.dataDir, 'studios', 'slowstep', 'app');
  assert.ok(existsSync(join(app, 'partial.txt')), 'the step made a file in the app folder');

  const started = Date.now();
  const cancel = await l.post(`/launcher/jobs/${res.json.id}:cancel`);
  assert.equal(cancel.status, 204, cancel.text);
  assert.ok(Date.now() - started < 10_000);
  const job = await l.job(res.json.id);
  assert.equal(job.state, 'cancelled', 'cancelled before the 204');
  assert.ok(job.cancel_requested_at);
  for (const pid of pids) assert.equal(alive(pid), false, `pid ${pid} of the step's group is gone`);
  assert.equal(existsSync(app), false, 'the app folder is gone');
  assert.deepEqual(readdirSync(join(svc.dataDir, 'studios', 'slowstep')).filter((n) => n.endsWith('.tmp')), [], 'no temporary copy');
  const studio = await l.waitState('slowstep', 'failed');
  assert.match(studio.last_error, /cancelled/);
  assert.equal(existsSync(join(src, 'after.txt')), false);

  const events = await l.log(res.json.id);
  assert.deepEqual(JSON.parse(events[events.length - 1]!.data), { state: 'cancelled', last_error: null });
  assertError(await l.post(`/launcher/jobs/${res.json.id}:cancel`), 409, 'job_finished');
  assertError(await l.post('/launcher/jobs/01J0000000000000000000000X:cancel'), 404, 'not_found');
  assertError(await l.post('/launcher/jobs/nonsense:cancel'), 404, 'not_found');
});

test('while a first install runs: id_taken, in_use, not_installed; once cancelled it can be installed again', async () => {
  const src = fixture({ id: 'slowonce', install: [{ name: 'wait', run: 'node tool.js sleep 30000' }] });
  const res = await l.post('/launcher/studios:install', { source: src });
  await stepPids(res.json.id);
  assertError(await l.post('/launcher/studios:install', { source: src }), 409, 'id_taken', { id: 'slowonce' });
  assertError(await l.post('/launcher/studios/slowonce:uninstall', { confirm: true }), 409, 'in_use', { job: res.json.id });
  assertError(await l.post('/launcher/studios/slowonce:start'), 409, 'not_installed');
  assert.equal((await l.studio('slowonce')).state, 'installing');
  assert.equal((await l.post(`/launcher/jobs/${res.json.id}:cancel`)).status, 204);
  await l.waitState('slowonce', 'failed');
  const again = fixture({ id: 'slowonce' });
  await l.installOk(again);
});

test('cancel of a build job ends it the same way', async () => {
  const src = fixture({ id: 'slowbuild', build: [{ name: 'compile', run: 'node tool.js sleep 30000' }] });
  const res = await l.post('/launcher/studios:install', { source: src });
  assert.equal((await l.waitJob(res.json.id)).state, 'succeeded');
  let build: any;
  for (let i = 0; i < 200 && !build; i++) {
    build = (await l.jobsOf('slowbuild')).find((j) => j.kind === 'build');
    if (!build) await new Promise((r) => setTimeout(r, 25));
  }
  assert.ok(build, 'a build job follows the install job');
  const pids = await stepPids(build.id);
  assert.equal((await l.post(`/launcher/jobs/${build.id}:cancel`)).status, 204);
  assert.equal((await l.job(build.id)).state, 'cancelled');
  for (const pid of pids) assert.equal(alive(pid), false);
  const studio = await l.waitState('slowbuild', 'failed');
  assert.match(studio.last_error, /build job was cancelled/);
});

test("cancel of a task job records cancel_requested_at; the studio's code ends it", async () => {
  const token = svc.studio('tasker', ['jobs']);
  const task = await l.call('POST', '/jobs', { title: 'long', state: 'running' }, token);
  assert.equal(task.status, 201, task.text);
  const mine = await openSse(svc.port, '/events', token);
  try {
    assert.equal((await l.post(`/launcher/jobs/${task.json.id}:cancel`)).status, 204);
    const job = await l.job(task.json.id);
    assert.equal(job.state, 'running', 'a task job is ended by its studio');
    assert.ok(job.cancel_requested_at, 'the request is recorded');
    await mine.waitFor((m) => m.event === 'job' && JSON.parse(m.data).cancel_requested_at !== null, 1, 5000);
  } finally {
    mine.close();
  }
  const done = await l.call('PATCH', `/jobs/${task.json.id}`, { state: 'cancelled' }, token, { 'Content-Type': 'application/merge-patch+json' });
  assert.equal(done.status, 200, done.text);
  assertError(await l.post(`/launcher/jobs/${task.json.id}:cancel`), 409, 'job_finished');
});

test("cancel of an export from the launcher: as the export's own cancel, ffmpeg ended and no partial file", async () => {
  const token = svc.studio('exporter', ['timeline', 'assets', 'jobs', 'gallery']);
  const video = makeVideo(join(media, 'a.mp4'), { seconds: 1 });
  const asset = await upload(svc.port, token, readFileSync(video), 'kind=video&filename=a.mp4');
  assert.equal(asset.status, 201, asset.body.toString());
  const seq = await l.call('POST', '/timeline', { name: 'seq', clips: [{ asset_id: asset.json.id }] }, token);
  assert.equal(seq.status, 201, seq.text);
  writeFileSync(wrapper.gate, 'held');
  try {
    const job = await l.call('POST', `/timeline/${seq.json.id}:export`, { preset: 'h264' }, token);
    assert.equal(job.status, 202, job.text);
    for (let i = 0; i < 400 && wrapper.pids().length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    assert.ok(wrapper.pids().some(alive), 'ffmpeg was started and waits');
    const res = await l.post(`/launcher/jobs/${job.json.id}:cancel`);
    assert.equal(res.status, 204, res.text);
    const ended = await l.job(job.json.id);
    assert.equal(ended.state, 'cancelled');
    assert.ok(ended.cancel_requested_at);
    for (const pid of wrapper.pids()) assert.equal(alive(pid), false, `ffmpeg ${pid} is gone`);
    assert.deepEqual(tmpEntries(svc.dataDir), [], 'no partial output');
    assertError(await l.post(`/launcher/jobs/${job.json.id}:cancel`), 409, 'job_finished');
  } finally {
    rmSync(wrapper.gate, { force: true });
  }
});
