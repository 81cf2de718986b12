import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { upload } from './helpers/assets';
import {
  blobPath,
  blobs,
  ffmpegWrapper,
  freshConnections,
  JOB_KEYS,
  processesMentioning,
  tmpEntries,
  waitForJob,
  waitForJobState,
} from './helpers/export';
import { client, send } from './helpers/http';
import { makeAudio, makeImage, makeVideo, requireFfmpeg } from './helpers/media';
import { alive } from './helpers/processes';
import { assertError, runScenarios, type ScenarioEnv } from './helpers/scenario';
import { startService, tempDir, type TestService } from './helpers/service';
import type { Client } from './helpers/timeline';

/**
 * Export jobs that do not succeed (docs/api.md "Export `POST
 * /timeline/{id}:export`"): cancel mid-export, a failing ffmpeg, a clip whose file
 * went bad after it was probed, SIGTERM to the service while ffmpeg writes,
 * and 501 without a media tool. Each leaves no partial file (DIR/blobs/.tmp
 * empty, no new blob), no asset, no item and no process behind.
 *
 * The service's ffmpeg is a wrapper (helpers/export.ts) that notes every pid
 * it runs as; in `slow` mode it reads its first input at its own rate (-re),
 * so an export of a 4 s sequence takes about 4 s and is caught while it
 * writes; in `fail` mode it exits 1.
 */

const TARGET = { fps: 25, width: 320, height: 180 };

let svc: TestService;
let dir: string;
let wrapper: ReturnType<typeof ffmpegWrapper>;
let env: ScenarioEnv & { ids: Record<string, string> };
let alpha: Client;
const files: Record<string, string> = {};
const assets: Record<string, { id: string; sha256: string }> = {};

function mode(m: 'slow' | 'fail' | 'normal'): void {
  writeFileSync(wrapper.mode, m);
}

async function uploadAs(port: number, token: string, name: string, kind: string, hints = '') {
  const res = await upload(port, token, readFileSync(files[name]!), `kind=${kind}&filename=${encodeURIComponent(basename(files[name]!))}${hints}`);
  assert.equal(res.status, 201, res.body.toString());
  return res.json as { id: string; sha256: string };
}

async function createSequence(port: number, token: string, body: Record<string, unknown>): Promise<string> {
  const res = await send(port, { method: 'POST', path: '/api/v1/timeline', token, body: { name: 'export cancel test', target: TARGET, ...body } });
  assert.equal(res.status, 201, res.text);
  return res.json.id;
}

async function startExport(id: string, body: unknown = {}): Promise<any> {
  const res = await alpha.post(`/timeline/${id}:export`, body);
  assert.equal(res.status, 202, res.text);
  assert.deepEqual(Object.keys(res.json).sort(), JOB_KEYS);
  assert.equal(res.json.state, 'running');
  return res.json;
}

/** The export is writing: ffmpeg has reported progress. */
function writing(id: string): Promise<any> {
  return waitForJobState(alpha, id, (j) => j.progress_num > 0, 'the export to report progress');
}

/** Nothing of an export that did not succeed is left: no partial file, no new blob, no item, no process. */
async function assertNothingLeft(seq: string, blobsBefore: string[]): Promise<void> {
  assert.deepEqual(tmpEntries(svc.dataDir), [], 'blobs/.tmp is empty');
  assert.deepEqual(blobs(svc.dataDir), blobsBefore, 'no new blob');
  const items = await alpha.get('/gallery/items?limit=500');
  assert.equal(items.status, 200, items.text);
  assert.deepEqual(items.json.items.filter((i: any) => i.timeline_id === seq), [], 'no exported item');
  for (const pid of wrapper.pids()) assert.equal(alive(pid), false, `ffmpeg (pid ${pid}) outlived its export`);
  assert.deepEqual(processesMentioning(svc.dataDir, [svc.child.pid!]), [], 'no process of the service works on its data dir');
}

before(async () => {
  requireFfmpeg();
  freshConnections();
  dir = tempDir('backlot-export-cancel-');
  files.a = makeVideo(join(dir, 'a.mp4'), { seconds: 2 });
  files.b = makeVideo(join(dir, 'b.mp4'), { seconds: 1, crf: 30 });
  files.c = makeVideo(join(dir, 'c.mp4'), { seconds: 1, crf: 32 });
  files.tone = makeAudio(join(dir, 'tone.wav'), { seconds: 1 });
  files.still = makeImage(join(dir, 'still.png'), { width: 320, height: 180 });
  files.junk = join(dir, 'junk.mp4');
  writeFileSync(files.junk, 'this is not a video file at all\n');
  wrapper = ffmpegWrapper(dir);
  mode('normal');
  svc = await startService({ env: { BACKLOT_FFMPEG: wrapper.path }, keepDataDir: true });
  const tokens: Record<string, string> = {
    alpha: svc.studio('alpha', ['timeline', 'assets', 'jobs', 'gallery']),
    beta: svc.studio('beta', ['timeline', 'assets', 'jobs', 'gallery']),
  };
  tokens.betaAll = svc.token('beta', ['timeline', 'jobs', 'gallery', 'gallery.read_all']);
  alpha = client(svc.port, tokens.alpha);
  for (const name of ['a', 'b', 'c']) assets[name] = await uploadAs(svc.port, tokens.alpha!, name, 'video');
  const ids: Record<string, string> = {};
  // 4 s: two whole 2 s clips (copy), so a slow export is caught while it writes.
  ids.slow = await createSequence(svc.port, tokens.alpha!, { clips: [{ asset_id: assets.a!.id }, { asset_id: assets.a!.id }] });
  ids.quick = await createSequence(svc.port, tokens.alpha!, { clips: [{ asset_id: assets.b!.id }] });
  ids.failing = await createSequence(svc.port, tokens.alpha!, { clips: [{ asset_id: assets.b!.id }] });
  ids.corrupt = await createSequence(svc.port, tokens.alpha!, { clips: [{ asset_id: assets.c!.id }] });
  env = { port: svc.port, tokens, ids };
});

after(async () => {
  await svc?.stop();
  if (svc) rmSync(svc.dataDir, { recursive: true, force: true });
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('cancel', () => {
  test('mid-export: 204 once it ended cancelled, the partial file gone, ffmpeg ended; a second cancel is 409', async () => {
    const before = blobs(svc.dataDir);
    mode('slow');
    try {
      const job = await startExport(env.ids.slow!);
      await writing(job.id);
      assert.notDeepEqual(tmpEntries(svc.dataDir), [], 'the partial output is in blobs/.tmp while ffmpeg writes');
      assert.ok(wrapper.pids().some(alive), 'ffmpeg runs');
      // Only the owner cancels: not another studio, not read_all.
      for (const who of ['beta', 'betaAll']) {
        const res = await client(svc.port, env.tokens[who]).post(`/timeline/${env.ids.slow}/exports/${job.id}:cancel`);
        assertError(res, 404, 'not_found');
      }
      assert.equal((await alpha.get(`/jobs/${job.id}`)).json.state, 'running');

      const res = await alpha.post(`/timeline/${env.ids.slow}/exports/${job.id}:cancel`);
      assert.equal(res.status, 204, res.text);
      // At once, no waiting: the route answered after the end.
      const ended = (await alpha.get(`/jobs/${job.id}`)).json;
      assert.equal(ended.state, 'cancelled', JSON.stringify(ended));
      assert.ok(ended.cancel_requested_at, JSON.stringify(ended));
      assert.ok(ended.finished_at, JSON.stringify(ended));
      assert.equal(ended.last_error, null, 'a cancel is an outcome, not a failure');
      assert.deepEqual(ended.data, {});
      await assertNothingLeft(env.ids.slow!, before);
      assert.deepEqual((await alpha.get(`/timeline/${env.ids.slow}/exports`)).json.items, [ended]);

      assertError(await alpha.post(`/timeline/${env.ids.slow}/exports/${job.id}:cancel`), 409, 'job_finished');
    } finally {
      mode('normal');
    }
  });

  describe('refusals', () => {
    before(async () => {
      const quick = await waitForJob(alpha, (await startExport(env.ids.quick!)).id);
      assert.equal(quick.state, 'succeeded', JSON.stringify(quick));
      env.ids.quickJob = quick.id;
      const task = await alpha.post('/jobs', { title: 'a task of my own' });
      assert.equal(task.status, 201, task.text);
      env.ids.task = task.json.id;
    });
    const cancel = (seq: string, job: string) => (e: ScenarioEnv) => `/timeline/${e.ids![seq] ?? seq}/exports/${e.ids![job] ?? job}:cancel`;
    runScenarios(() => env, [
      { name: 'a succeeded export: 409 job_finished', method: 'POST', path: cancel('quick', 'quickJob'), as: 'alpha', expectStatus: 409, expectCode: 'job_finished' },
      { name: 'another studio: 404', method: 'POST', path: cancel('quick', 'quickJob'), as: 'beta', expectStatus: 404, expectCode: 'not_found' },
      { name: 'another studio with read_all: 404', method: 'POST', path: cancel('quick', 'quickJob'), as: 'betaAll', expectStatus: 404, expectCode: 'not_found' },
      { name: 'a task job’s id: 404', method: 'POST', path: cancel('quick', 'task'), as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
      { name: 'another sequence’s export: 404 (not 409)', method: 'POST', path: cancel('slow', 'quickJob'), as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
      { name: 'an unknown job: 404', method: 'POST', path: cancel('quick', '01JZZZZZZZZZZZZZZZZZZZZZZZ'), as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
      { name: 'an unknown sequence: 404', method: 'POST', path: cancel('01JZZZZZZZZZZZZZZZZZZZZZZZ', 'quickJob'), as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    ]);
  });
});

describe('failure', () => {
  test('ffmpeg exits 1: failed with last_error, no asset, nothing left', async () => {
    const before = blobs(svc.dataDir);
    mode('fail');
    try {
      const job = await waitForJob(alpha, (await startExport(env.ids.failing!)).id);
      assert.equal(job.state, 'failed', JSON.stringify(job));
      assert.equal(typeof job.last_error, 'string');
      assert.ok(job.last_error.trim().length > 0, JSON.stringify(job));
      assert.deepEqual(job.data, {});
      assert.ok(job.finished_at);
      await assertNothingLeft(env.ids.failing!, before);
    } finally {
      mode('normal');
    }
  });

  test('a clip whose file went bad on disk after it was probed: failed with last_error, nothing left', async () => {
    // The probe is cached by sha256 (made when the sequence was created); the blob now holds other bytes.
    const blob = blobPath(svc.dataDir, assets.c!.sha256);
    const mode0 = statSync(blob).mode & 0o777;
    chmodSync(blob, 0o644);
    writeFileSync(blob, randomBytes(statSync(blob).size));
    chmodSync(blob, mode0);
    const before = blobs(svc.dataDir);
    const job = await waitForJob(alpha, (await startExport(env.ids.corrupt!)).id);
    assert.equal(job.state, 'failed', JSON.stringify(job));
    assert.ok(typeof job.last_error === 'string' && job.last_error.trim().length > 0, JSON.stringify(job));
    assert.deepEqual(job.data, {});
    await assertNothingLeft(env.ids.corrupt!, before);
  });
});

describe('without a media tool: 501, after the checks that need none', () => {
  for (const tool of ['ffmpeg', 'ffprobe'] as const) {
    describe(`no ${tool}`, () => {
      let bare: TestService;
      let c: Client;
      const ids: Record<string, string> = {};
      before(async () => {
        bare = await startService({ env: { [tool === 'ffmpeg' ? 'BACKLOT_FFMPEG' : 'BACKLOT_FFPROBE']: '/nonexistent' } });
        const token = bare.studio('alpha', ['timeline', 'assets', 'jobs']);
        c = client(bare.port, token);
        // Lengths given (hints and durations), so no probe is needed to create the sequences.
        const a = await uploadAs(bare.port, token, 'a', 'video', '&duration_s=2&fps=25');
        const tone = await uploadAs(bare.port, token, 'tone', 'audio', '&duration_s=1');
        const still = await uploadAs(bare.port, token, 'still', 'image');
        const junk = await uploadAs(bare.port, token, 'junk', 'video', '&duration_s=1&fps=25');
        const v = (asset: string, start = 0, extra: Record<string, unknown> = {}) => ({ asset_id: asset, start, duration: 1, ...extra });
        ids.video = await createSequence(bare.port, token, { tracks: { V1: [v(a.id)] } });
        ids.images = await createSequence(bare.port, token, { tracks: { V1: [v(still.id)] } });
        ids.trimmed = await createSequence(bare.port, token, { tracks: { V1: [v(a.id, 0, { in: 0.2 })] } });
        ids.junk = await createSequence(bare.port, token, { tracks: { V1: [v(a.id), v(junk.id, 1)] } });
        ids.rate = await createSequence(bare.port, token, { target: { ...TARGET, sample_rate: 192000 }, tracks: { V1: [v(a.id)] } });
        ids.empty = await createSequence(bare.port, token, {});
        ids.soundOnly = await createSequence(bare.port, token, { tracks: { A1: [{ asset_id: tone.id, start: 0, duration: 1 }] } });
      });
      after(async () => {
        await bare?.stop();
      });

      const unsupported = async (seq: string, body: unknown = {}) => {
        const res = await c.post(`/timeline/${ids[seq]}:export`, body);
        assertError(res, 501, 'unsupported', { tool });
        assert.deepEqual((await c.get(`/timeline/${ids[seq]}/exports`)).json.items, [], 'no job was made');
      };

      test(`a sequence with a video clip: 501 with details.tool ${tool}`, () => unsupported('video'));
      test('images only: 501', () => unsupported('images'));
      test('a clip that could not be probed, preset copy on a trimmed clip, a sample rate AAC cannot carry: 501 first', async () => {
        await unsupported('junk');
        await unsupported('trimmed', { preset: 'copy' });
        await unsupported('rate');
      });
      test('no video clip: 422 before the tool is needed; a bad body 400; an unknown sequence 404', async () => {
        for (const seq of ['empty', 'soundOnly']) assertError(await c.post(`/timeline/${ids[seq]}:export`, {}), 422, 'invalid_timeline');
        assertError(await c.post(`/timeline/${ids.video}:export`, { preset: 'bogus' }), 400, 'bad_request');
        assertError(await c.post('/timeline/01JZZZZZZZZZZZZZZZZZZZZZZZ:export', {}), 404, 'not_found');
      });
    });
  }
});

describe('stop', () => {
  test('SIGTERM during an export: exit 0 within 5 s, ffmpeg ended, no partial file; the export ended cancelled', async () => {
    const before = blobs(svc.dataDir);
    mode('slow');
    const job = await startExport(env.ids.slow!);
    await writing(job.id);
    const pids = wrapper.pids().filter(alive);
    assert.ok(pids.length > 0, 'ffmpeg runs');
    const t0 = Date.now();
    const code = await svc.stop('SIGTERM');
    const took = Date.now() - t0;
    mode('normal');
    assert.equal(code, 0, svc.stderr().slice(-2000));
    assert.ok(took < 5000, `stopped in ${took} ms`);
    for (const pid of wrapper.pids()) assert.equal(alive(pid), false, `ffmpeg (pid ${pid}) outlived the service`);
    assert.deepEqual(processesMentioning(svc.dataDir, []), []);
    assert.deepEqual(tmpEntries(svc.dataDir), [], 'blobs/.tmp is empty');
    assert.deepEqual(blobs(svc.dataDir), before, 'no new blob');
    // The service's stop cancels running exports; the job says so after a restart.
    const again = await startService({ dataDir: svc.dataDir, keepDataDir: true });
    try {
      const ended = await client(again.port, again.token('alpha', ['jobs'])).get(`/jobs/${job.id}`);
      assert.equal(ended.status, 200, ended.text);
      assert.equal(ended.json.state, 'cancelled', ended.text);
    } finally {
      await again.stop();
    }
  });
});
