import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { upload } from './helpers/assets';
import {
  downloadAsset,
  ffmpegWrapper,
  freshConnections,
  frameDifference,
  frameGray,
  frameMean,
  JOB_KEYS,
  loudness,
  probeFile,
  rate,
  videoPackets,
  waitForJob,
  type Probe,
  type ProbeStream,
} from './helpers/export';
import { client, send, type HttpResponse } from './helpers/http';
import { ffmpeg, makeAudio, makeImage, makeVideo, requireFfmpeg, topLevelBoxes } from './helpers/media';
import { runScenarios, type ScenarioEnv } from './helpers/scenario';
import { startService, tempDir, type TestService } from './helpers/service';
import { openSse } from './helpers/sse';
import { walk, type Client } from './helpers/timeline';

/**
 * POST /timeline/{id}:export and GET /timeline/{id}/exports, black box
 * (docs/api.md "Export `POST /timeline/{id}:export`"): the real service running the real ffmpeg, its output read back with
 * GET /assets/{id} and looked at with ffprobe. Fixtures are 320x180, 25 fps,
 * a second or two, x264 superfast.
 *
 * The service's ffmpeg is a wrapper (helpers/export.ts) that runs the real
 * one at once unless the test holds its gate, so "while an export runs" is
 * a state the test keeps, not a race. The data dir's path has a space, a
 * single quote and a non-ASCII letter, as a user's home folder may.
 */

const TARGET = { fps: 25, width: 320, height: 180 };
/** x264 options of every H.264 fixture (makeVideo's defaults, spelled out for testsrc2). */
const X264 = ['-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-preset', 'superfast', '-crf', '28'];
const COPY_NAME = 'Cut: "take" 1?';
/** COPY_NAME + ".mp4" as asset filenames are sanitised (reserved characters become `_`). */
const COPY_FILENAME = 'Cut_ _take_ 1_.mp4';

let svc: TestService;
let dir: string;
let wrapper: ReturnType<typeof ffmpegWrapper>;
let env: ScenarioEnv & { ids: Record<string, string> };
let alpha: Client;
const files: Record<string, string> = {};
const assets: Record<string, { id: string; sha256: string }> = {};
const timelines: Record<string, any> = {};

function makeFixtures(): Record<string, 'video' | 'image' | 'audio'> {
  const f = (name: string) => (files[name.replace(/\..*$/, '')] = join(dir, name));
  // Copy: two different pictures with identical settings, each with AAC sound that runs
  // 0.2 s past the picture (as a camera's may), so a file's length is not its picture's.
  for (const [name, source] of [['a.mp4', 'testsrc'], ['b.mp4', 'testsrc2']]) {
    ffmpeg([
      ...['-f', 'lavfi', '-i', `${source}=size=320x180:rate=25:duration=1`, '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000:duration=1.2'],
      ...['-map', '0:v', '-map', '1:a', '-c:a', 'aac', '-b:a', '64k', ...X264, f(name!)],
    ]);
  }
  makeAudio(f('tone.wav'), { seconds: 1 });
  // Conform: no sound in the video sources, so silence is the A tracks' doing.
  ffmpeg(['-f', 'lavfi', '-i', 'testsrc2=size=320x180:rate=25', '-t', '2', ...X264, f('long.mp4')]);
  makeImage(f('still.png'), { width: 180, height: 180 });
  makeVideo(f('small.mp4'), { width: 256, height: 144, seconds: 1 });
  makeVideo(f('fps30.mp4'), { fps: 30, seconds: 1 });
  ffmpeg(['-f', 'lavfi', '-i', 'testsrc2=size=320x180:rate=25', '-t', '1', ...X264, '-crf', '30', f('held.mp4')]);
  ffmpeg(['-f', 'lavfi', '-i', 'sine=frequency=880:sample_rate=48000', '-t', '1', '-c:a', 'pcm_s16le', f('tone880.wav')]);
  // Refusals.
  makeVideo(f('doomed.mp4'), { seconds: 1, crf: 31 });
  writeFileSync(f('junk.mp4'), 'this is not a video file at all\n');
  return {
    a: 'video',
    b: 'video',
    tone: 'audio',
    long: 'video',
    still: 'image',
    small: 'video',
    fps30: 'video',
    held: 'video',
    tone880: 'audio',
    doomed: 'video',
    junk: 'video',
  };
}

async function createSequence(token: string, body: Record<string, unknown>): Promise<any> {
  const res = await send(svc.port, { method: 'POST', path: '/api/v1/timeline', token, body: { name: 'export test', target: TARGET, ...body } });
  assert.equal(res.status, 201, res.text);
  return res.json;
}

const exportOf = (id: string, body: unknown = {}, c: Client = alpha) => c.post(`/timeline/${id}:export`, body);

/** POST :export, 202 with a fresh running export Job of that sequence. */
async function startExport(id: string, body: unknown = {}): Promise<any> {
  const res = await exportOf(id, body);
  assert.equal(res.status, 202, res.text);
  const job = res.json;
  assert.deepEqual(Object.keys(job).sort(), JOB_KEYS);
  assert.equal(job.kind, 'export');
  assert.equal(job.state, 'running');
  assert.equal(job.studio_id, 'alpha');
  assert.equal(job.timeline_id, id);
  assert.deepEqual(job.data, {});
  assert.equal(job.last_error, null);
  assert.equal(job.cancel_requested_at, null);
  assert.equal(job.finished_at, null);
  assert.equal(typeof job.title, 'string');
  assert.ok(Number.isInteger(job.progress_num) && Number.isInteger(job.progress_den));
  return job;
}

async function succeeded(id: string): Promise<any> {
  const job = await waitForJob(alpha, id);
  assert.equal(job.state, 'succeeded', JSON.stringify(job));
  assert.deepEqual(Object.keys(job.data).sort(), ['asset_id', 'item_id']);
  assert.equal(job.last_error, null);
  assert.ok(job.finished_at);
  return job;
}

/** The output file of a finished export, read with GET /assets/{id}. */
async function output(job: any, name: string) {
  const file = join(dir, `out-${name}.mp4`);
  const got = await downloadAsset(svc.port, env.tokens.alpha!, job.data.asset_id, file);
  return { file, ...got, probe: probeFile(file) };
}

function streams(probe: Probe): { video: ProbeStream; audio: ProbeStream } {
  const video = probe.streams.filter((s) => s.codec_type === 'video');
  const audio = probe.streams.filter((s) => s.codec_type === 'audio');
  assert.equal(video.length, 1, JSON.stringify(probe.streams));
  assert.equal(audio.length, 1, JSON.stringify(probe.streams));
  return { video: video[0]!, audio: audio[0]! };
}

/** What every export gives: faststart MP4, target size and rate, duration within a frame, AAC stereo at the target rate. */
function assertOutput(out: { file: string; contentType: string; probe: Probe }, timeline: any): { video: ProbeStream; audio: ProbeStream } {
  assert.match(out.contentType, /^video\/mp4/);
  const boxes = topLevelBoxes(out.file);
  assert.ok(boxes.includes('moov') && boxes.includes('mdat'), boxes.join(','));
  assert.ok(boxes.indexOf('moov') < boxes.indexOf('mdat'), `moov before mdat (faststart): ${boxes.join(',')}`);
  assert.match(out.probe.format.format_name, /mp4/);
  const { video, audio } = streams(out.probe);
  assert.equal(video.width, timeline.target.width);
  assert.equal(video.height, timeline.target.height);
  assert.equal(rate(video.r_frame_rate), timeline.target.fps, video.r_frame_rate);
  const frame = 1 / timeline.target.fps;
  assert.ok(Math.abs(Number(video.duration) - timeline.duration) <= frame + 1e-6, `video ${video.duration} s vs ${timeline.duration} s`);
  assert.ok(Math.abs(Number(out.probe.format.duration) - timeline.duration) <= frame + 1e-6, `file ${out.probe.format.duration} s vs ${timeline.duration} s`);
  assert.equal(audio.codec_name, 'aac');
  assert.equal(Number(audio.sample_rate), timeline.target.sample_rate);
  assert.equal(audio.channels, 2);
  return { video, audio };
}

/** GET :plan's answer, for comparing an export's refusal with the plan's reasons. */
function planOf(id: string, preset?: string): Promise<HttpResponse> {
  return alpha.get(`/timeline/${id}:plan${preset ? `?preset=${preset}` : ''}`);
}

async function exportsOf(id: string, c: Client = alpha): Promise<any[]> {
  const res = await c.get(`/timeline/${id}/exports`);
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(Object.keys(res.json).sort(), ['items', 'next_cursor']);
  return res.json.items;
}

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

before(async () => {
  requireFfmpeg();
  freshConnections();
  dir = tempDir('backlot-export-');
  const kinds = makeFixtures();
  wrapper = ffmpegWrapper(dir);
  svc = await startService({ dataDir: tempDir("backlot export 'é "), env: { BACKLOT_FFMPEG: wrapper.path } });
  const tokens: Record<string, string> = {
    alpha: svc.studio('alpha', ['timeline', 'assets', 'jobs', 'gallery']),
    beta: svc.studio('beta', ['timeline', 'assets', 'jobs', 'gallery']),
  };
  tokens.betaAll = svc.token('beta', ['timeline', 'jobs', 'gallery', 'gallery.read_all']);
  tokens.noTimeline = svc.token('alpha', ['assets', 'jobs', 'gallery']);
  alpha = client(svc.port, tokens.alpha);
  for (const [name, kind] of Object.entries(kinds)) {
    const res = await upload(svc.port, tokens.alpha!, readFileSync(files[name]!), `kind=${kind}&filename=${encodeURIComponent(basename(files[name]!))}`);
    assert.equal(res.status, 201, res.body.toString());
    assets[name] = res.json;
  }
  const id = (name: string) => assets[name]!.id;
  const t = tokens.alpha!;
  timelines.copy = await createSequence(t, {
    name: COPY_NAME,
    tracks: { V1: [{ asset_id: id('a'), start: 0 }, { asset_id: id('b'), start: 1 }, { asset_id: id('a'), start: 2 }], A1: [{ asset_id: id('tone'), start: 0.5 }] },
  });
  timelines.conform = await createSequence(t, {
    name: 'conform',
    target: { ...TARGET, sample_rate: 22050 },
    tracks: {
      V1: [
        { asset_id: id('long'), start: 0, in: 0.2, duration: 1 },
        { asset_id: id('still'), start: 1, duration: 1 },
        // a gap from 2 to 2.6 (every time on the 25 fps grid, so nothing moves when snapped)
        { asset_id: id('small'), start: 2.6 },
        { asset_id: id('fps30'), start: 3.6, transition: { kind: 'crossfade', duration: 0.4 } },
        { asset_id: id('held'), start: 4.6, duration: 1.6 },
      ],
      A1: [{ asset_id: id('tone'), start: 0.3 }],
      A2: [{ asset_id: id('tone880'), start: 4 }],
    },
  });
  timelines.trimmed = await createSequence(t, { clips: [{ asset_id: id('a'), duration: 0.6 }] });
  timelines.whole = await createSequence(t, { clips: [{ asset_id: id('b') }] });
  // No sound anywhere (its one source has none): the output still carries an AAC track, silent.
  timelines.doomed = await createSequence(t, { name: 'deleted while running', clips: [{ asset_id: id('held') }] });
  const ids: Record<string, string> = {};
  for (const [name, tl] of Object.entries(timelines)) ids[name] = tl.id;
  ids.empty = (await createSequence(t, {})).id;
  ids.soundOnly = (await createSequence(t, { clips: [{ asset_id: id('tone') }] })).id;
  ids.junk = (await createSequence(t, { tracks: { V1: [{ asset_id: id('a'), start: 0 }, { asset_id: id('junk'), start: 1, duration: 1 }] } })).id;
  ids.reclaimed = (await createSequence(t, { clips: [{ asset_id: id('a') }, { asset_id: id('doomed') }] })).id;
  ids.rate192k = (await createSequence(t, { target: { ...TARGET, sample_rate: 192000 }, clips: [{ asset_id: id('a') }] })).id;
  ids.rate47k = (await createSequence(t, { target: { ...TARGET, sample_rate: 47000 }, clips: [{ asset_id: id('a') }] })).id;
  ids.deleted = (await createSequence(t, { clips: [{ asset_id: id('a') }] })).id;
  assert.equal((await alpha.delete(`/timeline/${ids.deleted}`)).status, 204);
  ids.beta = (await createSequence(tokens.beta!, {})).id;
  env = { port: svc.port, tokens, ids };
});

after(async () => {
  if (wrapper && existsSync(wrapper.gate)) unlinkSync(wrapper.gate);
  await svc?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('copy: whole H.264 clips with identical settings at a matching target', () => {
  let job: any;

  test('GET :plan says copy; preset auto exports by copy: the item, the asset, its lineage', async () => {
    const plan = await planOf(env.ids.copy!);
    assert.equal(plan.status, 200, plan.text);
    assert.equal(plan.json.path, 'copy', plan.text);
    const events = await openSse(svc.port, '/events', env.tokens.alpha);
    try {
      const started = await startExport(env.ids.copy!);
      job = await succeeded(started.id);
      // Progress: milliseconds of the sequence (3 s); it only rises, and ends full.
      assert.equal(job.progress_den, 3000);
      assert.equal(job.progress_num, 3000);
      await events.waitFor((m) => m.event === 'job' && JSON.parse(m.data).id === job.id && JSON.parse(m.data).state === 'succeeded');
      const seen = events.events.filter((m) => m.event === 'job').map((m) => JSON.parse(m.data)).filter((j) => j.id === job.id);
      let last = 0;
      for (const j of seen) {
        if (j.progress_den !== 0) assert.equal(j.progress_den, 3000, JSON.stringify(j));
        assert.ok(j.progress_num >= last && j.progress_num <= Math.max(j.progress_den, 0), `progress ${seen.map((s) => `${s.progress_num}/${s.progress_den}`).join(' ')}`);
        last = j.progress_num;
      }
    } finally {
      events.close();
    }

    const item = await alpha.get(`/gallery/items/${job.data.item_id}`);
    assert.equal(item.status, 200, item.text);
    assert.equal(item.json.asset_id, job.data.asset_id);
    assert.equal(item.json.timeline_id, env.ids.copy);
    assert.equal(item.json.kind, 'video');
    assert.equal(item.json.title, COPY_NAME);
    assert.deepEqual(item.json.params, { preset: 'auto', path: 'copy', revision: timelines.copy.revision });
    const byId = (x: { asset_id: string }, y: { asset_id: string }) => x.asset_id.localeCompare(y.asset_id);
    assert.deepEqual(
      [...item.json.inputs].sort(byId),
      [assets.a!, assets.b!, assets.tone!].map((a) => ({ asset_id: a.id, role: 'clip' })).sort(byId),
      'one clip input per distinct asset (a is used twice)',
    );
    for (const name of ['a', 'b', 'tone']) {
      const lineage = await alpha.get(`/assets/${assets[name]!.id}/lineage`);
      assert.equal(lineage.status, 200, lineage.text);
      assert.ok(
        lineage.json.items.some((i: any) => i.id === job.data.item_id),
        `${name}'s lineage holds the export: ${lineage.text}`,
      );
    }
  });

  test('the file: sequence name as filename, faststart MP4, the sources’ packets in order, no gaps, AAC stereo', async () => {
    const out = await output(job, 'copy');
    // The library file is named after the sequence (sanitised) and is the asset's bytes.
    const library = join(svc.dataDir, 'library', 'alpha', COPY_FILENAME);
    assert.ok(existsSync(library), `library file ${library}`);
    assert.equal(sha256(library), out.etag.replace(/"/g, ''));
    assert.equal(sha256(out.file), out.etag.replace(/"/g, ''));

    const { video } = assertOutput(out, timelines.copy);
    const source = streams(probeFile(files.a!)).video;
    assert.equal(video.codec_name, 'h264');
    assert.equal(video.profile, source.profile);
    assert.equal(video.level, source.level);
    assert.equal(video.pix_fmt, source.pix_fmt);

    const packets = videoPackets(out.file);
    const frames = [files.a!, files.b!, files.a!].map((f) => videoPackets(f));
    assert.equal(packets.length, frames.reduce((n, p) => n + p.length, 0), 'one packet per source frame');
    for (let i = 1; i < packets.length; i++) assert.ok(packets[i]!.dts > packets[i - 1]!.dts, `dts ${packets[i - 1]!.dts} then ${packets[i]!.dts} at packet ${i}`);
    const shown = [...packets].sort((x, y) => x.pts - y.pts);
    for (let i = 1; i < shown.length; i++) {
      const gap = shown[i]!.pts - (shown[i - 1]!.pts + shown[i - 1]!.duration);
      assert.ok(Math.abs(gap) <= 1, `a gap of ${gap} ticks before the frame shown ${i}th (pts ${shown[i]!.pts})`);
    }
    // Copied, not encoded again: the bytes of every packet but the key frames are the
    // sources' (a muxer may put parameter sets in front of a key frame).
    const expected = frames.flat().filter((p) => !p.key).map((p) => p.hash);
    assert.deepEqual(packets.filter((p) => !p.key).map((p) => p.hash), expected);
  });

  test('the job: in GET /jobs and the exports list, its log starts with the ffmpeg command, not a task', async () => {
    const jobs = await walk(alpha, '/jobs', 100);
    assert.deepEqual(jobs.find((j) => j.id === job.id), job);
    assert.deepEqual((await exportsOf(env.ids.copy!))[0], job);
    const log = await openSse(svc.port, `/jobs/${job.id}/logs`, env.tokens.alpha);
    try {
      assert.equal(log.status, 200);
      await log.waitFor((m) => m.event === 'end');
      const lines = log.events.filter((m) => m.event === 'line').map((m) => JSON.parse(m.data).text as string);
      assert.ok(lines.length >= 2, `ffmpeg's output is in the log: ${JSON.stringify(lines)}`);
      assert.match(lines[0]!, /ffmpeg.* -i /);
      assert.equal(JSON.parse(log.events.find((m) => m.event === 'end')!.data).state, 'succeeded');
    } finally {
      log.close();
    }
    const notATask = [
      await alpha.patch(`/jobs/${job.id}`, { title: 'mine now' }),
      await alpha.post(`/jobs/${job.id}/logs`, { lines: ['hello'] }),
      await alpha.post(`/jobs/${job.id}:cancel`),
    ];
    for (const res of notATask) {
      assert.equal(res.status, 403, res.text);
      assert.equal(res.json.code, 'not_a_task');
    }
    assert.equal((await client(svc.port, env.tokens.beta).get(`/jobs/${job.id}`)).status, 404);
  });

  test('preset h264 on the same sequence encodes (conform); a filename ending in .mp4 is kept', async () => {
    const h264 = await succeeded((await startExport(env.ids.copy!, { preset: 'h264', filename: 'h264 cut.mp4' })).id);
    const item = await alpha.get(`/gallery/items/${h264.data.item_id}`);
    assert.deepEqual(item.json.params, { preset: 'h264', path: 'conform', revision: timelines.copy.revision });
    const out = await output(h264, 'h264');
    assert.equal(sha256(join(svc.dataDir, 'library', 'alpha', 'h264 cut.mp4')), out.etag.replace(/"/g, ''));
    const { video } = assertOutput(out, timelines.copy);
    assert.equal(video.codec_name, 'h264');
    assert.equal(video.pix_fmt, 'yuv420p');
    const copied = new Set([files.a!, files.b!].flatMap((f) => videoPackets(f).map((p) => p.hash)));
    const same = videoPackets(out.file).filter((p) => copied.has(p.hash)).length;
    assert.equal(same, 0, `${same} packets are the sources' bytes: encoded again, not copied`);
  });

  test('the exports list: newest first, one page at a time, readable with gallery.read_all', async () => {
    const all = await exportsOf(env.ids.copy!);
    assert.equal(all.length, 2);
    assert.deepEqual(all[1].id, job.id);
    assert.ok(all[0].created_at >= all[1].created_at && all[0].id > all[1].id);
    assert.deepEqual(await walk(alpha, `/timeline/${env.ids.copy}/exports`, 1), all);
    assert.deepEqual(await exportsOf(env.ids.copy!, client(svc.port, env.tokens.betaAll)), all);
    assert.deepEqual(await exportsOf(env.ids.whole!), []);
  });
});

describe('conform: trim, image, gap, other size and rate, crossfade, hold, two sound tracks', () => {
  let out: Awaited<ReturnType<typeof output>>;

  test('preset auto with a filename: H.264 + AAC at the target, the sequence’s duration', async () => {
    const plan = await planOf(env.ids.conform!);
    assert.equal(plan.json.path, 'conform', plan.text);
    const job = await succeeded((await startExport(env.ids.conform!, { filename: 'conform cut' })).id);
    assert.equal(job.progress_den, Math.round(timelines.conform.duration * 1000));
    assert.equal(job.progress_num, job.progress_den);
    const item = await alpha.get(`/gallery/items/${job.data.item_id}`);
    assert.deepEqual(item.json.params, { preset: 'auto', path: 'conform', revision: timelines.conform.revision });
    assert.equal(item.json.inputs.length, 7);
    out = await output(job, 'conform');
    assert.equal(sha256(join(svc.dataDir, 'library', 'alpha', 'conform cut.mp4')), out.etag.replace(/"/g, ''));
    assert.equal(timelines.conform.duration, 6.2);
    const { video, audio } = assertOutput(out, timelines.conform);
    assert.equal(video.codec_name, 'h264');
    assert.equal(video.pix_fmt, 'yuv420p');
    assert.equal(audio.sample_rate, '22050');
    const packets = videoPackets(out.file).length;
    assert.ok(Math.abs(packets - 6.2 * 25) <= 1, `${packets} frames for 6.2 s at 25 fps`);
  });

  test('the picture: the trim starts 0.2 s in, the gap is black, the crossfade blends, the hold holds', () => {
    assert.ok(frameMean(out.file, 0.5) > 40, 'a picture where a clip plays');
    for (const t of [2.1, 2.3, 2.5]) {
      const mean = frameMean(out.file, t);
      assert.ok(mean < 20, `the frame at ${t} s (in the gap) has mean luma ${mean}`);
    }
    // The first frame is the source's at 0.2 s: nearer to it than to the frames either side.
    const first = frameGray(out.file, 0);
    const [before, at, after] = [0.16, 0.2, 0.24].map((t) => frameDifference(first, frameGray(files.long!, t)));
    assert.ok(at! < before! / 2 && at! < after! / 2, `differences from the source at 0.16, 0.2, 0.24 s: ${before}, ${at}, ${after}`);
    // The crossfade: in the middle of the clip's first 0.4 s (from 3.6 s) its picture is blended with
    // the clip before; once the fade is over it is the clip's own.
    const own = (t: number) => frameDifference(frameGray(out.file, t), frameGray(files.fps30!, t - 3.6));
    const [fading, faded] = [own(3.8), own(4.2)];
    assert.ok(fading > 2 && fading > 3 * faded, `difference from the clip's own picture mid-fade ${fading}, after ${faded}`);
    // The last clip plays its 1 s source from 4.6 s, then holds its last frame until 6.2 s.
    const moving = frameDifference(frameGray(out.file, 4.7), frameGray(out.file, 5.4));
    const held = frameDifference(frameGray(out.file, 5.7), frameGray(out.file, 6.1));
    assert.ok(held < 1.5 && moving > 3 * held, `held ${held}, playing ${moving}`);
    // What is held is the source's last frame (at 0.96 s of its 1 s), not black or an earlier one.
    const last = frameGray(out.file, 6.1);
    const [earlier, end] = [0.8, 0.96].map((t) => frameDifference(last, frameGray(files.held!, t)));
    assert.ok(end! < earlier! / 2, `the held frame differs from the source's at 0.96 s by ${end}, at 0.8 s by ${earlier}`);
  });

  test('the sound: each A clip sounds where it plays, silence in the gap where none does', () => {
    const a1 = loudness(out.file, 0.5, 1.1);
    const a2 = loudness(out.file, 4.2, 4.8);
    const gap = loudness(out.file, 2.1, 2.5);
    assert.ok(a1.mean > -45, `A1 at 0.5..1.1 s: ${JSON.stringify(a1)}`);
    assert.ok(a2.mean > -45, `A2 at 4.2..4.8 s: ${JSON.stringify(a2)}`);
    assert.ok(gap.max < -80, `the gap at 2.1..2.5 s: ${JSON.stringify(gap)}`);
  });
});

describe('refusals', () => {
  /** The refusal matches the plan's own (same clips, same reasons), and started no export. */
  const sameAsPlan = (seq: string, preset?: string) => async (res: HttpResponse, e: ScenarioEnv) => {
    const plan = await planOf(e.ids![seq]!, preset);
    assert.equal(plan.status, 422, plan.text);
    assert.ok(res.json.details.clips.length > 0);
    assert.deepEqual(res.json.details.clips, plan.json.details.clips);
    assert.deepEqual(await exportsOf(e.ids![seq]!), []);
  };
  const path = (seq: string) => (e: ScenarioEnv) => `/timeline/${e.ids![seq]}:export`;

  runScenarios(() => env, [
    { name: 'no token: 401', method: 'POST', path: path('copy'), body: {}, expectStatus: 401, expectCode: 'unauthenticated' },
    {
      name: 'no timeline capability: 403',
      method: 'POST',
      path: path('copy'),
      as: 'noTimeline',
      body: {},
      expectStatus: 403,
      expectCode: 'capability_required',
      expectDetails: { capability: 'timeline' },
    },
    { name: 'an unknown member: 400', method: 'POST', path: path('copy'), as: 'alpha', body: { preset: 'auto', speed: 2 }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'preset bogus: 400', method: 'POST', path: path('copy'), as: 'alpha', body: { preset: 'bogus' }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'preset AUTO (case matters): 400', method: 'POST', path: path('copy'), as: 'alpha', body: { preset: 'AUTO' }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'preset a number: 400', method: 'POST', path: path('copy'), as: 'alpha', body: { preset: 1 }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'filename a number: 400', method: 'POST', path: path('copy'), as: 'alpha', body: { filename: 7 }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'a body that is an array: 400', method: 'POST', path: path('copy'), as: 'alpha', body: [], expectStatus: 400, expectCode: 'bad_request' },
    { name: 'a body that is not JSON: 400', method: 'POST', path: path('copy'), as: 'alpha', raw: '{preset', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'another studio’s sequence: 404', method: 'POST', path: path('copy'), as: 'beta', body: {}, expectStatus: 404, expectCode: 'not_found' },
    {
      name: 'another studio’s sequence with gallery.read_all: 404 (read access only)',
      method: 'POST',
      path: path('copy'),
      as: 'betaAll',
      body: {},
      expectStatus: 404,
      expectCode: 'not_found',
    },
    {
      name: 'another studio’s sequence with a bad body: 404 first',
      method: 'POST',
      path: path('copy'),
      as: 'beta',
      body: { preset: 'bogus' },
      expectStatus: 404,
      expectCode: 'not_found',
    },
    { name: 'a deleted sequence: 404', method: 'POST', path: path('deleted'), as: 'alpha', body: {}, expectStatus: 404, expectCode: 'not_found' },
    { name: 'an unknown sequence: 404', method: 'POST', path: '/timeline/01JZZZZZZZZZZZZZZZZZZZZZZZ:export', as: 'alpha', body: {}, expectStatus: 404, expectCode: 'not_found' },
    { name: 'an empty sequence: 422', method: 'POST', path: path('empty'), as: 'alpha', body: {}, expectStatus: 422, expectCode: 'invalid_timeline' },
    { name: 'sound only: 422', method: 'POST', path: path('soundOnly'), as: 'alpha', body: {}, expectStatus: 422, expectCode: 'invalid_timeline' },
    {
      name: 'preset copy on a conform plan: 422 with the plan’s reasons',
      method: 'POST',
      path: path('trimmed'),
      as: 'alpha',
      body: { preset: 'copy' },
      expectStatus: 422,
      expectCode: 'invalid_timeline',
      check: sameAsPlan('trimmed', 'copy'),
    },
    {
      name: 'a clip that cannot be probed: 422 naming it',
      method: 'POST',
      path: path('junk'),
      as: 'alpha',
      body: {},
      expectStatus: 422,
      expectCode: 'invalid_timeline',
      check: async (res, e) => {
        assert.deepEqual(res.json.details.clips.map((c: any) => `${c.track}:${c.index}`), ['V1:1']);
        await sameAsPlan('junk')(res, e);
      },
    },
    ...[192000, 47000].map((hz) => ({
      name: `target.sample_rate ${hz}, which AAC cannot carry: 422 naming the rate`,
      method: 'POST',
      path: path(`rate${hz / 1000}k`),
      as: 'alpha',
      body: {},
      expectStatus: 422,
      expectCode: 'invalid_timeline',
      check: async (res: HttpResponse, e: ScenarioEnv) => {
        assert.ok(res.json.message.includes(String(hz)), res.json.message);
        assert.deepEqual(await exportsOf(e.ids![`rate${hz / 1000}k`]!), []);
      },
    })),
  ]);

  test('a clip whose asset was reclaimed: 422 naming it, as the plan does', async () => {
    // A live sequence holds its assets against reclaim, so the API cannot get here; the row is marked as reclaim marks it.
    const db = new Database(join(svc.dataDir, 'backlot.db'));
    try {
      db.prepare('UPDATE assets SET reclaimed_at = ? WHERE id = ?').run(new Date().toISOString(), assets.doomed!.id);
    } finally {
      db.close();
    }
    const res = await exportOf(env.ids.reclaimed!);
    assert.equal(res.status, 422, res.text);
    assert.equal(res.json.code, 'invalid_timeline');
    assert.deepEqual(res.json.details.clips.map((c: any) => `${c.track}:${c.index}`), ['V1:1']);
    assert.ok(res.json.details.clips[0].reason.includes(assets.doomed!.id), res.text);
    await sameAsPlan('reclaimed')(res, env);
  });
});

describe('the exports list: refusals', () => {
  const list = (seq: string, query = '') => (e: ScenarioEnv) => `/timeline/${e.ids![seq]}/exports${query}`;
  runScenarios(() => env, [
    { name: 'no timeline capability: 403', path: list('copy'), as: 'noTimeline', expectStatus: 403, expectCode: 'capability_required' },
    { name: 'another studio’s sequence: 404', path: list('copy'), as: 'beta', expectStatus: 404, expectCode: 'not_found' },
    { name: 'a deleted sequence: 404', path: list('deleted'), as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'an unknown sequence: 404', path: '/timeline/01JZZZZZZZZZZZZZZZZZZZZZZZ/exports', as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'limit 0: 400', path: list('copy', '?limit=0'), as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'limit 501: 400', path: list('copy', '?limit=501'), as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'limit x: 400', path: list('copy', '?limit=x'), as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'a garbage cursor: 400 bad_cursor', path: list('copy', '?cursor=garbage'), as: 'alpha', expectStatus: 400, expectCode: 'bad_cursor' },
    { name: 'alpha on beta’s sequence: 404', path: list('beta'), as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
  ]);

  test('a cursor from another sequence’s list: 400 bad_cursor', async () => {
    const page = await alpha.get(`/timeline/${env.ids.copy}/exports?limit=1`);
    assert.equal(page.status, 200, page.text);
    assert.ok(page.json.next_cursor, page.text);
    const res = await alpha.get(`/timeline/${env.ids.whole}/exports?limit=1&cursor=${encodeURIComponent(page.json.next_cursor)}`);
    assert.equal(res.status, 400, res.text);
    assert.equal(res.json.code, 'bad_cursor');
  });
});

describe('while an export runs', () => {
  test('409 already_exporting for the same sequence (before a plan refusal); another sequence exports meanwhile; again once it ended', async () => {
    writeFileSync(wrapper.gate, '');
    try {
      const first = await startExport(env.ids.trimmed!);
      const again = await exportOf(env.ids.trimmed!);
      assert.equal(again.status, 409, again.text);
      assert.equal(again.json.code, 'already_exporting');
      // Copy is refused for this sequence (trimmed); the running export answers first.
      const copy = await exportOf(env.ids.trimmed!, { preset: 'copy' });
      assert.equal(copy.status, 409, copy.text);
      assert.equal(copy.json.code, 'already_exporting');
      const other = await startExport(env.ids.whole!);
      assert.deepEqual((await exportsOf(env.ids.trimmed!)).map((j) => [j.id, j.state]), [[first.id, 'running']]);
      unlinkSync(wrapper.gate);
      await succeeded(first.id);
      await succeeded(other.id);
      const third = await succeeded((await startExport(env.ids.trimmed!)).id);
      assert.deepEqual((await exportsOf(env.ids.trimmed!)).map((j) => j.id), [third.id, first.id]);
    } finally {
      if (existsSync(wrapper.gate)) unlinkSync(wrapper.gate);
    }
  });

  test('a sequence deleted while its export runs (one without sound): the export completes, its item keeps timeline_id, its sound is silence', async () => {
    writeFileSync(wrapper.gate, '');
    let job: any;
    try {
      job = await startExport(env.ids.doomed!);
      assert.equal((await alpha.delete(`/timeline/${env.ids.doomed}`)).status, 204);
      assert.equal((await exportOf(env.ids.doomed!)).status, 404);
    } finally {
      if (existsSync(wrapper.gate)) unlinkSync(wrapper.gate);
    }
    const done = await succeeded(job.id);
    assert.equal(done.timeline_id, env.ids.doomed);
    const item = await alpha.get(`/gallery/items/${done.data.item_id}`);
    assert.equal(item.json.timeline_id, env.ids.doomed);
    assert.equal(item.json.title, 'deleted while running');
    assert.equal((await alpha.get(`/timeline/${env.ids.doomed}/exports`)).status, 404);
    const out = await output(done, 'doomed');
    assertOutput(out, timelines.doomed);
    const sound = loudness(out.file, 0, timelines.doomed.duration);
    assert.ok(sound.max < -80, `a sequence without sound exports silence: ${JSON.stringify(sound)}`);
  });
});

describe('progress: the picture written, on the output’s timeline, rising steadily to the end', () => {
  // Half-minute clips, tiny and copyable: a copy export of minutes takes seconds, and ffmpeg
  // reports progress every half second, so there are many reports to look at.
  const SMALL = { fps: 25, width: 160, height: 90 };
  const ids: Record<string, string> = {};

  before(async () => {
    const file = join(dir, 'half-minute.mp4');
    ffmpeg([
      ...['-f', 'lavfi', '-i', 'testsrc=size=160x90:rate=25:duration=30', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000:duration=30.2'],
      ...['-map', '0:v', '-map', '1:a', '-c:a', 'aac', '-b:a', '32k', ...X264, '-crf', '35', file],
    ]);
    const res = await upload(svc.port, env.tokens.alpha!, readFileSync(file), 'kind=video&filename=half-minute.mp4');
    assert.equal(res.status, 201, res.body.toString());
    const clips = (n: number) => Array.from({ length: n }, () => ({ asset_id: res.json.id }));
    ids.copy = (await createSequence(env.tokens.alpha!, { name: 'two minutes', target: SMALL, clips: clips(4) })).id;
    ids.conform = (await createSequence(env.tokens.alpha!, { name: 'one minute', target: SMALL, clips: clips(2) })).id;
  });

  /**
   * Runs an export with ffmpeg's `-progress` output copied aside (the wrapper's `tee` mode);
   * returns the finished job, every state of it its events carried in order, and the frame
   * count of each of ffmpeg's progress reports in order (the last is `progress=end`'s).
   */
  async function recordExport(seq: string, body: Record<string, unknown>) {
    writeFileSync(wrapper.progress, '');
    writeFileSync(wrapper.mode, 'tee');
    const events = await openSse(svc.port, '/events', env.tokens.alpha);
    try {
      const job = await succeeded((await startExport(seq, body)).id);
      await events.waitFor((m) => m.event === 'job' && JSON.parse(m.data).id === job.id && JSON.parse(m.data).state === 'succeeded');
      const seen = events.events
        .filter((m) => m.event === 'job')
        .map((m) => JSON.parse(m.data))
        .filter((j) => j.id === job.id);
      // ffmpeg's frame count at each of its reports, in order (the last one is `progress=end`'s).
      const reports: number[] = [];
      let frames = 0;
      let ended = false;
      for (const line of readFileSync(wrapper.progress, 'utf8').split('\n')) {
        const m = /^frame=(\d+)$/.exec(line);
        if (m) frames = Number(m[1]);
        if (line === 'progress=continue' || line === 'progress=end') reports.push(frames);
        if (line === 'progress=end') ended = true;
      }
      assert.ok(ended, 'ffmpeg ended its progress output');
      return { job, seen, reports };
    } finally {
      events.close();
      writeFileSync(wrapper.mode, 'normal');
    }
  }

  /**
   * The rule (docs/api.md §Export, Progress): progress_num is the picture ffmpeg has handed to
   * the output, in milliseconds from the output's start, of progress_den, the sequence's
   * length; it never falls and ends at progress_den.
   */
  async function checkProgress(name: string, r: Awaited<ReturnType<typeof recordExport>>, seconds: number) {
    const den = seconds * 1000;
    const trail = r.seen.map((j) => `${j.progress_num}/${j.progress_den}`).join(' ');
    assert.equal(r.job.progress_den, den);
    assert.equal(r.job.progress_num, den, 'the success holds progress_num = progress_den');
    let last = 0;
    for (const j of r.seen) {
      if (j.progress_den !== 0) assert.equal(j.progress_den, den, trail);
      assert.ok(j.progress_num >= last, `it never falls: ${trail}`);
      assert.ok(j.progress_num <= den, `never above den: ${trail}`);
      last = j.progress_num;
    }
    assert.equal(last, den, `the last report is 100 %: ${trail}`);

    // The output's timeline: it starts at 0 and lasts the sequence; ffmpeg's final frame count is its picture.
    const out = await output(r.job, `progress-${name}`);
    assert.equal(Number(out.probe.format.start_time), 0);
    assert.ok(Math.abs(Number(out.probe.format.duration) * 1000 - den) <= 40, `the file lasts ${out.probe.format.duration} s`);
    assert.equal(r.reports[r.reports.length - 1], seconds * SMALL.fps, 'ffmpeg handed every frame of the picture to the output');

    // The job shows each position ffmpeg reports, as it reports it: the frames it has handed to
    // the output at 40 ms a frame, never its out_time (under -copyts that counts from wherever the
    // output was when ffmpeg first reported, not from the output's start).
    const values = r.seen.map((j) => j.progress_num);
    const reports = r.reports.join(' ');
    assert.ok(r.reports.length >= 4, `ffmpeg reported progress ${r.reports.length} times: ${reports}`);
    const changes = (xs: number[]) => xs.filter((x, i) => i === 0 || x !== xs[i - 1]);
    assert.deepEqual(
      changes(values),
      changes([0, ...r.reports.map((frames) => Math.min(frames * 40, den)), den]),
      `the job's progress (${trail}) is ffmpeg's frame count (${reports}) at 40 ms a frame`,
    );
    // Steady: several values in between, one of them in the middle part.
    const between = [...new Set(values.filter((v) => v > 0 && v < den))];
    assert.ok(between.length >= 3, `intermediate values: ${trail}`);
    assert.ok(between.some((v) => v >= 0.3 * den && v <= 0.7 * den), `a value between 30 % and 70 %: ${trail}`);
  }

  test('copy (concat demuxer, stream copy, -copyts): two minutes', async () => {
    const r = await recordExport(ids.copy!, { preset: 'copy' });
    await checkProgress('copy', r, 120);
  });

  test('conform (encoded): one minute', async () => {
    const r = await recordExport(ids.conform!, { preset: 'h264' });
    await checkProgress('conform', r, 60);
  });
});
