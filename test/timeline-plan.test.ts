import assert from 'node:assert/strict';
import { chmodSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { toolPath } from '../service/media';
import { upload } from './helpers/assets';
import { send, type HttpResponse } from './helpers/http';
import { ffmpeg, makeAudio, makeImage, makeVideo, requireFfmpeg } from './helpers/media';
import { assertError, runScenarios, type ScenarioEnv } from './helpers/scenario';
import { startService, tempDir, type TestService } from './helpers/service';

/**
 * GET /timeline/{id}:plan, black box (docs/api.md "Export plan `GET
 * /timeline/{id}:plan`"): the real service probing files made by the real ffmpeg. Every
 * fixture is 320x180, 25 fps, 1 s, made once; the target matches them.
 * The service's ffprobe is a wrapper that logs each file it is run on and
 * execs the real one, so "each file probed once" is counted, not timed.
 */

const TARGET = { fps: 25, width: 320, height: 180 };

let svc: TestService;
let dir: string;
let probeLog: string;
let env: ScenarioEnv & { ids: Record<string, string> };
const assets: Record<string, { id: string; sha256: string }> = {};

/** x264 options shared by every H.264 fixture (makeVideo's defaults, spelled out for the testsrc2 clip). */
const X264 = ['-c:v', 'libx264', '-preset', 'superfast', '-crf', '28'];

function makeFixtures(): Record<string, { file: string; kind: 'video' | 'image' | 'audio' }> {
  const f = (name: string) => join(dir, name);
  makeVideo(f('a.mp4'), { seconds: 1, fps: 25, preset: 'superfast', crf: 28 });
  // Another picture (testsrc2), same size, rate, pixel format and x264 options.
  ffmpeg(['-f', 'lavfi', '-i', 'testsrc2=size=320x180:rate=25', '-t', '1', ...X264, '-pix_fmt', 'yuv420p', f('b.mp4')]);
  makeVideo(f('c.mp4'), { seconds: 1, fps: 25, crf: 30 });
  makeVideo(f('small.mp4'), { width: 256, height: 144 });
  makeVideo(f('fps30.mp4'), { fps: 30 });
  makeVideo(f('yuv444.mp4'), { pixFmt: 'yuv444p' });
  makeVideo(f('main.mp4'), { profile: 'main' });
  makeImage(f('still.png'), { width: 320, height: 180 });
  makeAudio(f('tone.wav'), { seconds: 2 });
  writeFileSync(f('junk.mp4'), 'this is not a video file at all\n');
  return {
    a: { file: f('a.mp4'), kind: 'video' },
    b: { file: f('b.mp4'), kind: 'video' },
    c: { file: f('c.mp4'), kind: 'video' },
    small: { file: f('small.mp4'), kind: 'video' },
    fps30: { file: f('fps30.mp4'), kind: 'video' },
    yuv444: { file: f('yuv444.mp4'), kind: 'video' },
    main: { file: f('main.mp4'), kind: 'video' },
    still: { file: f('still.png'), kind: 'image' },
    tone: { file: f('tone.wav'), kind: 'audio' },
    junk: { file: f('junk.mp4'), kind: 'video' },
  };
}

/** An ffprobe that notes the file it was asked about (its last argument), then is the real one. */
function countingFfprobe(): string {
  const real = toolPath('ffprobe');
  assert.ok(real, 'ffprobe is required');
  const script = join(dir, 'ffprobe-counting');
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  writeFileSync(script, `#!/bin/sh\nfor last in "$@"; do :; done\nprintf '%s\\n' "$last" >> ${quote(probeLog)}\nexec ${quote(real)} "$@"\n`);
  chmodSync(script, 0o755);
  return script;
}

/** sha256 → how many times ffprobe ran on its blob. */
function probeCounts(): Map<string, number> {
  const counts = new Map<string, number>();
  if (!existsSync(probeLog)) return counts;
  for (const line of readFileSync(probeLog, 'utf8').split('\n').filter(Boolean)) {
    const sha = basename(line).replace(/\..*$/, '');
    counts.set(sha, (counts.get(sha) ?? 0) + 1);
  }
  return counts;
}

async function uploadFile(port: number, token: string, file: string, kind: string) {
  const res = await upload(port, token, readFileSync(file), `kind=${kind}&filename=${encodeURIComponent(basename(file))}`);
  assert.equal(res.status, 201, res.body.toString());
  return res.json as { id: string; sha256: string };
}

async function createSequence(port: number, token: string, body: Record<string, unknown>): Promise<string> {
  const res = await send(port, { method: 'POST', path: '/api/v1/timeline', token, body: { name: 'plan test', target: TARGET, ...body } });
  assert.equal(res.status, 201, res.text);
  return res.json.id;
}

function planOf(id: string, preset?: string, token = env.tokens.alpha!): Promise<HttpResponse> {
  const query = preset === undefined ? '' : `?preset=${encodeURIComponent(preset)}`;
  return send(env.port, { path: `/api/v1/timeline/${id}:plan${query}`, token });
}

async function okPlan(id: string, preset?: string) {
  const res = await planOf(id, preset);
  assert.equal(res.status, 200, res.text);
  return res.json as { preset: string; path: string; clips: { track: string; index: number; asset_id: string; path: string; reason: string | null }[] };
}

before(async () => {
  requireFfmpeg();
  dir = tempDir('backlot-plan-');
  probeLog = join(dir, 'probes.log');
  const fixtures = makeFixtures();
  svc = await startService({ env: { BACKLOT_FFPROBE: countingFfprobe() } });
  const tokens: Record<string, string> = {
    alpha: svc.studio('alpha', ['timeline', 'assets']),
    beta: svc.studio('beta', ['timeline', 'assets']),
  };
  tokens.betaAll = svc.token('beta', ['timeline', 'gallery.read_all']);
  for (const [name, { file, kind }] of Object.entries(fixtures)) assets[name] = await uploadFile(svc.port, tokens.alpha!, file, kind);
  const id = (name: string) => assets[name]!.id;
  const clips = (...names: string[]) => ({ clips: names.map((n) => ({ asset_id: id(n) })) });

  const ids: Record<string, string> = {};
  env = { port: svc.port, tokens, ids };
  ids.copy = await createSequence(svc.port, tokens.alpha!, clips('a', 'b'));
  ids.size = await createSequence(svc.port, tokens.alpha!, clips('a', 'small'));
  ids.fps = await createSequence(svc.port, tokens.alpha!, clips('a', 'fps30'));
  ids.pixfmt = await createSequence(svc.port, tokens.alpha!, clips('a', 'yuv444'));
  ids.profile = await createSequence(svc.port, tokens.alpha!, clips('a', 'main'));
  ids.image = await createSequence(svc.port, tokens.alpha!, clips('a', 'still'));
  ids.trimIn = await createSequence(svc.port, tokens.alpha!, { clips: [{ asset_id: id('a') }, { asset_id: id('b'), in: 0.2, duration: 0.4 }] });
  ids.trimEnd = await createSequence(svc.port, tokens.alpha!, { clips: [{ asset_id: id('a') }, { asset_id: id('b'), duration: 0.6 }] });
  ids.hold = await createSequence(svc.port, tokens.alpha!, { clips: [{ asset_id: id('a') }, { asset_id: id('b'), duration: 1.6 }] });
  ids.crossfade = await createSequence(svc.port, tokens.alpha!, {
    tracks: { V1: [{ asset_id: id('a'), start: 0 }, { asset_id: id('b'), start: 1, transition: { kind: 'crossfade', duration: 0.2 } }] },
  });
  ids.withSound = await createSequence(svc.port, tokens.alpha!, clips('a', 'b', 'tone'));
  ids.empty = await createSequence(svc.port, tokens.alpha!, {});
  ids.soundOnly = await createSequence(svc.port, tokens.alpha!, clips('tone'));
  ids.junk = await createSequence(svc.port, tokens.alpha!, { tracks: { V1: [{ asset_id: id('a'), start: 0 }, { asset_id: id('junk'), start: 1, duration: 1 }] } });
  ids.reclaimed = await createSequence(svc.port, tokens.alpha!, clips('a', 'c'));
});

after(async () => {
  await svc?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('copy', () => {
  test('two different ffmpeg-made files with identical settings, used whole, at a matching target', async () => {
    assert.notEqual(assets.a!.sha256, assets.b!.sha256);
    const plan = await okPlan(env.ids.copy!);
    assert.deepEqual(plan, {
      preset: 'auto',
      path: 'copy',
      clips: [
        { track: 'V1', index: 0, asset_id: assets.a!.id, path: 'copy', reason: null },
        { track: 'V1', index: 1, asset_id: assets.b!.id, path: 'copy', reason: null },
      ],
    });
    assert.deepEqual(await okPlan(env.ids.copy!, 'copy'), { ...plan, preset: 'copy' });
  });

  test('sound on A1 does not decide the path (it is always encoded)', async () => {
    const plan = await okPlan(env.ids.withSound!);
    assert.equal(plan.path, 'copy', JSON.stringify(plan.clips));
    assert.equal(plan.clips.length, 2);
  });
});

describe('conform, with the reason naming the property', () => {
  const rows: [name: string, seq: string, reason: RegExp][] = [
    ['a different frame size', 'size', /frame size 256x144 differs from the target's 320x180/],
    ['a different frame rate', 'fps', /frame rate 30 fps differs from the target's 25 fps/],
    ['a different pixel format (yuv444p)', 'pixfmt', /pixel format yuv444p differs from yuv420p/],
    ['a different profile (Main vs High)', 'profile', /profile Main differs from High/],
    ['an image', 'image', /still image/],
    ['a trimmed start (in > 0, shorter)', 'trimIn', /trimmed: it starts 0\.2 s into its source/],
    ['a trimmed end (shorter than the source)', 'trimEnd', /trimmed: it ends 0\.4 s before the end of its 1 s source/],
    ['a hold (longer than the source)', 'hold', /holds its last frame for 0\.6 s past the end of its 1 s source/],
    ['a crossfade', 'crossfade', /crossfade/],
  ];
  for (const [name, seq, reason] of rows) {
    test(name, async () => {
      const plan = await okPlan(env.ids[seq]!);
      assert.equal(plan.path, 'conform');
      assert.equal(plan.clips.length, 2);
      assert.deepEqual(plan.clips[0], { track: 'V1', index: 0, asset_id: assets.a!.id, path: 'copy', reason: null });
      assert.equal(plan.clips[1]!.path, 'conform');
      assert.match(plan.clips[1]!.reason ?? '', reason);
    });
  }

  test('preset h264: every clip conforms, also on a copyable sequence', async () => {
    const plan = await okPlan(env.ids.copy!, 'h264');
    assert.equal(plan.preset, 'h264');
    assert.equal(plan.path, 'conform');
    assert.deepEqual(
      plan.clips.map((c) => [c.path, c.reason]),
      [
        ['conform', 'The h264 preset encodes every clip'],
        ['conform', 'The h264 preset encodes every clip'],
      ],
    );
  });
});

describe('refusals', () => {
  runScenarios(() => env, [
    {
      name: 'an empty sequence: 422 invalid_timeline',
      as: 'alpha',
      path: (e) => `/timeline/${e.ids!.empty}:plan`,
      expectStatus: 422,
      expectCode: 'invalid_timeline',
      check: (res) => assert.match(res.json.message, /no video clip/),
    },
    {
      name: 'sound only: 422 invalid_timeline',
      as: 'alpha',
      path: (e) => `/timeline/${e.ids!.soundOnly}:plan`,
      expectStatus: 422,
      expectCode: 'invalid_timeline',
      check: (res) => assert.match(res.json.message, /no video clip/),
    },
    {
      name: 'preset copy on a conform plan: 422 with the plan’s reasons in details.clips',
      as: 'alpha',
      path: (e) => `/timeline/${e.ids!.size}:plan?preset=copy`,
      expectStatus: 422,
      expectCode: 'invalid_timeline',
      check: (res) => {
        assert.equal(res.json.details.clips.length, 1);
        const [problem] = res.json.details.clips;
        assert.equal(problem.track, 'V1');
        assert.equal(problem.index, 1);
        assert.match(problem.reason, /frame size/);
        assert.match(res.json.message, /copy preset/);
      },
    },
    { name: 'preset bogus: 400', as: 'alpha', path: (e) => `/timeline/${e.ids!.copy}:plan?preset=bogus`, expectStatus: 400, expectCode: 'bad_request' },
    {
      name: 'a file uploaded as video that is not media: 422 naming the clip (could not be probed)',
      as: 'alpha',
      path: (e) => `/timeline/${e.ids!.junk}:plan`,
      expectStatus: 422,
      expectCode: 'invalid_timeline',
      check: (res) => {
        assert.equal(res.json.details.clips.length, 1);
        assert.equal(res.json.details.clips[0].track, 'V1');
        assert.equal(res.json.details.clips[0].index, 1);
        assert.match(res.json.details.clips[0].reason, /could not be probed/);
      },
    },
    { name: 'another studio’s sequence: 404', as: 'beta', path: (e) => `/timeline/${e.ids!.copy}:plan`, expectStatus: 404, expectCode: 'not_found' },
    {
      name: 'another studio’s sequence with gallery.read_all: 200',
      as: 'betaAll',
      path: (e) => `/timeline/${e.ids!.copy}:plan`,
      expectStatus: 200,
      expectJson: { preset: 'auto', path: 'copy' },
    },
    { name: 'an unknown sequence: 404', as: 'alpha', path: '/timeline/01JZZZZZZZZZZZZZZZZZZZZZZZ:plan', expectStatus: 404, expectCode: 'not_found' },
  ]);

  test('a clip whose asset was reclaimed: 422 naming the clip', async () => {
    // A live sequence holds its assets against reclaim, so the API cannot get here; the row is marked as reclaim marks it.
    const db = new Database(join(svc.dataDir, 'backlot.db'));
    try {
      db.prepare('UPDATE assets SET reclaimed_at = ? WHERE id = ?').run(new Date().toISOString(), assets.c!.id);
    } finally {
      db.close();
    }
    const res = await planOf(env.ids.reclaimed!);
    assertError(res, 422, 'invalid_timeline');
    assert.equal(res.json.details.clips.length, 1);
    const [problem] = res.json.details.clips;
    assert.equal(problem.track, 'V1');
    assert.equal(problem.index, 1);
    assert.ok(problem.reason.includes(assets.c!.id), problem.reason);
    assert.match(problem.reason, /cannot read/);
  });
});

describe('each file is probed once', () => {
  test('ffprobe ran once per file over every create and plan; the cache holds one row per file', async () => {
    // Plan the same sequences again: answered from the cache.
    for (const seq of ['copy', 'size', 'fps', 'pixfmt', 'profile', 'withSound']) assert.equal((await planOf(env.ids[seq]!)).status, 200);
    const counts = probeCounts();
    const probed = ['a', 'b', 'small', 'fps30', 'yuv444', 'main', 'tone'];
    for (const name of probed) assert.equal(counts.get(assets[name]!.sha256), 1, `${name}: ${JSON.stringify([...counts])}`);
    assert.equal(counts.get(assets.still!.sha256), undefined, 'images are not probed');

    const db = new Database(join(svc.dataDir, 'backlot.db'), { readonly: true });
    try {
      const rows = db.prepare('SELECT sha256, version FROM media_probes').all() as { sha256: string; version: number }[];
      const cached = new Set(rows.map((r) => r.sha256));
      for (const name of probed) assert.ok(cached.has(assets[name]!.sha256), `${name} is cached`);
      assert.ok(!cached.has(assets.junk!.sha256), 'a failed probe is not cached');
      assert.equal(rows.length, cached.size);
    } finally {
      db.close();
    }
  });
});

describe('without ffprobe', () => {
  let bare: TestService;
  before(async () => {
    bare = await startService({ env: { BACKLOT_FFPROBE: '/nonexistent' } });
  });
  after(async () => {
    await bare?.stop();
  });

  test('501 unsupported with details.tool = ffprobe', async () => {
    const token = bare.studio('alpha', ['timeline', 'assets']);
    const a = await uploadFile(bare.port, token, join(dir, 'a.mp4'), 'video');
    const id = await createSequence(bare.port, token, { tracks: { V1: [{ asset_id: a.id, start: 0, duration: 1 }] } });
    const res = await send(bare.port, { path: `/api/v1/timeline/${id}:plan`, token });
    assertError(res, 501, 'unsupported', { tool: 'ffprobe' });
    assert.match(res.json.message, /BACKLOT_FFPROBE/);
  });

  test('501 also when no clip needs a probe (images only); 422 first for a sequence with no video clip', async () => {
    const token = bare.studio('beta', ['timeline', 'assets']);
    const still = await uploadFile(bare.port, token, join(dir, 'still.png'), 'image');
    const images = await createSequence(bare.port, token, { tracks: { V1: [{ asset_id: still.id, start: 0 }] } });
    assertError(await send(bare.port, { path: `/api/v1/timeline/${images}:plan`, token }), 501, 'unsupported', { tool: 'ffprobe' });
    const empty = await createSequence(bare.port, token, {});
    assert.equal((await send(bare.port, { path: `/api/v1/timeline/${empty}:plan`, token })).json.code, 'invalid_timeline');
  });
});
