import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { client } from './helpers/http';
import { propSeed, rng } from './helpers/prng';
import { startService, type TestService } from './helpers/service';
import { assertTimeline, clip, createTimeline, DEFAULT_TARGET, newAsset, where, type Client } from './helpers/timeline';

/**
 * Snapping as the API shows it (docs/api.md "Snapping"): V tracks to the
 * nearest frame (1/fps; 29.97 and 23.976 mean 30000/1001 and 24000/1001), A
 * tracks to the nearest sample; halves round up; responses show the snapped
 * values; a document read and written back does not move; a target change
 * re-snaps the clips.
 */

let svc: TestService;
let alpha: Client;
const ids: Record<string, string> = {};

before(async () => {
  svc = await startService();
  const token = svc.studio('alpha', ['timeline', 'assets']);
  alpha = client(svc.port, token);
  ids.video = (await newAsset(svc.port, token, 'video', { duration_s: 100 })).id;
  ids.audio = (await newAsset(svc.port, token, 'audio', { duration_s: 100 })).id;
  ids.image = (await newAsset(svc.port, token, 'image')).id;
});

after(async () => {
  await svc?.stop();
});

/** One clip on V1 (or A1) at `start`, read back snapped. */
async function snapped(track: 'V1' | 'A1', target: Record<string, number>, c: { start: number; in?: number; duration: number }) {
  const asset_id = track === 'V1' ? ids.video : ids.audio;
  const t = await createTimeline(alpha, { name: 'snap', target, tracks: { [track]: [{ asset_id, ...c }] } });
  const [only] = t.tracks[track];
  return { start: only.start, in: only.in, duration: only.duration, total: t.duration };
}

describe('V tracks snap to the nearest frame', () => {
  const rows: [string, number, { start: number; in?: number; duration: number }, { start: number; in: number; duration: number }][] = [
    ['30 fps: 1.01 → 1', 30, { start: 1.01, duration: 1 }, { start: 1, in: 0, duration: 1 }],
    ['30 fps: 0.02 → one frame', 30, { start: 0.02, duration: 0.1 }, { start: 1 / 30, in: 0, duration: 0.1 }],
    ['30 fps: 0.016 → 0 (under half a frame)', 30, { start: 0.016, duration: 0.51 }, { start: 0, in: 0, duration: 0.5 }],
    ['30 fps: 0.05 is 1.5 frames, a half: rounds up to 2 frames', 30, { start: 0.05, in: 0.05, duration: 0.05 }, { start: 2 / 30, in: 2 / 30, duration: 2 / 30 }],
    ['30 fps: 1/3 written as a decimal → 10 frames', 30, { start: 1 / 3, duration: 2 / 3 }, { start: 1 / 3, in: 0, duration: 2 / 3 }],
    ['25 fps: 0.02 is half a frame: rounds up to 0.04', 25, { start: 0.02, in: 0.06, duration: 0.1 }, { start: 0.04, in: 0.08, duration: 0.12 }],
    ['25 fps: 0.0199 → 0', 25, { start: 0.0199, duration: 1.01 }, { start: 0, in: 0, duration: 1 }],
    ['29.97 fps: 1 s is 29.97 frames → 30 frames = 1.001 s', 29.97, { start: 1, in: 0.5, duration: 10 }, { start: 1.001, in: 0.5005, duration: 10.01 }],
    ['29.97 fps: 0.0167 s (half a frame is 0.016683…) → one frame', 29.97, { start: 0.0167, duration: 1.001 }, { start: 1001 / 30000, in: 0, duration: 1.001 }],
    ['29.97 fps: 0.0166 → 0', 29.97, { start: 0.0166, duration: 2.002 }, { start: 0, in: 0, duration: 2.002 }],
    ['23.976 fps: 1 s → 24 frames = 1.001 s', 23.976, { start: 1, in: 2, duration: 2 }, { start: 1.001, in: 2.002, duration: 2.002 }],
    ['23.976 fps: 0.0209 (half a frame is 0.020854…) → one frame', 23.976, { start: 0.0209, duration: 0.5 }, { start: 1001 / 24000, in: 0, duration: (12 * 1001) / 24000 }],
  ];
  for (const [name, fps, given, expected] of rows) {
    test(name, async () => {
      const got = await snapped('V1', { fps }, given);
      assert.deepEqual({ start: got.start, in: got.in, duration: got.duration }, expected);
      // The sequence's duration is the snapped end.
      assert.equal(got.total, frameEnd(fps, expected.start, expected.duration));
    });
  }

  test('23.976 and 29.97 are kept as given in the target', async () => {
    for (const fps of [23.976, 29.97, 59.94]) {
      const t = await createTimeline(alpha, { name: 'ntsc', target: { fps } });
      assert.deepEqual(t.target, { ...DEFAULT_TARGET, fps });
    }
  });

  test('images snap like video; default 5 s stays 5 s at every rate', async () => {
    for (const fps of [30, 25, 29.97, 23.976]) {
      const t = await createTimeline(alpha, { name: 'image', target: { fps }, clips: [{ asset_id: ids.image }] });
      const expected = fps === 29.97 ? (150 * 1001) / 30000 : fps === 23.976 ? (120 * 1001) / 24000 : 5;
      assert.deepEqual(t.tracks.V1, [clip(ids.image!, 0, expected)], `fps ${fps}`);
    }
  });

  test('clips laid end to end at 29.97: each next clip starts at the snapped end of the one before', async () => {
    const t = await createTimeline(alpha, { name: 'laid', target: { fps: 29.97 }, clips: [{ asset_id: ids.video, duration: 1 }, { asset_id: ids.video, duration: 1 }, { asset_id: ids.video, duration: 1 }] });
    assert.deepEqual(t.tracks.V1.map((c: any) => c.start), [0, 1.001, 2.002]);
    assert.ok(t.tracks.V1.every((c: any) => c.duration === 1.001));
    assert.equal(t.duration, (90 * 1001) / 30000);
  });
});

describe('A tracks snap to the nearest sample', () => {
  const rows: [string, number, { start: number; in?: number; duration: number }, { start: number; in: number; duration: number }][] = [
    ['48000 Hz: 1.00001 → 1 (0.48 sample)', 48000, { start: 1.00001, duration: 1 }, { start: 1, in: 0, duration: 1 }],
    ['48000 Hz: 1.0000105 → 48001 samples (0.504 sample)', 48000, { start: 1.0000105, duration: 0.5 }, { start: 48001 / 48000, in: 0, duration: 0.5 }],
    ['48000 Hz: a frame-like time is not snapped to frames', 48000, { start: 0.01, in: 0.02, duration: 1.01 }, { start: 0.01, in: 0.02, duration: 1.01 }],
    ['44100 Hz: 0.1 → 4410 samples', 44100, { start: 0.1, duration: 0.25 }, { start: 0.1, in: 0, duration: 0.25 }],
    ['44100 Hz: 0.00001 → 0 (0.441 sample)', 44100, { start: 0.00001, in: 0.00002, duration: 1 }, { start: 0, in: 1 / 44100, duration: 1 }],
    ['44100 Hz: 1/3 as a decimal → 14700 samples', 44100, { start: 1 / 3, duration: 1 / 3 }, { start: 1 / 3, in: 0, duration: 1 / 3 }],
    ['8000 Hz: 0.0000625 is half a sample: rounds up', 8000, { start: 0.0000625, in: 0.0000625, duration: 0.0001 }, { start: 1 / 8000, in: 1 / 8000, duration: 1 / 8000 }],
    ['8000 Hz: 0.00006249 → 0', 8000, { start: 0.00006249, duration: 0.5 }, { start: 0, in: 0, duration: 0.5 }],
  ];
  for (const [name, sample_rate, given, expected] of rows) {
    test(name, async () => {
      const got = await snapped('A1', { sample_rate }, given);
      assert.deepEqual({ start: got.start, in: got.in, duration: got.duration }, expected);
    });
  }

  test('the fps does not touch A tracks, nor the sample rate V tracks', async () => {
    const t = await createTimeline(alpha, {
      name: 'independent',
      target: { fps: 25, sample_rate: 44100 },
      tracks: { V1: [{ asset_id: ids.video, start: 0.01, duration: 1 }], A1: [{ asset_id: ids.audio, start: 0.01, duration: 1 }] },
    });
    assert.deepEqual(t.tracks.V1, [clip(ids.video!, 0, 1)]);
    assert.deepEqual(t.tracks.A1, [clip(ids.audio!, 0.01, 1)]);
    assert.equal(t.duration, 1.01);
  });
});

describe('round trip: a document read and written back does not move', () => {
  const seed = propSeed();
  const rates: { fps: number; sample_rate: number }[] = [
    { fps: 30, sample_rate: 48000 },
    { fps: 25, sample_rate: 44100 },
    { fps: 29.97, sample_rate: 48000 },
    { fps: 23.976, sample_rate: 44100 },
    { fps: 59.94, sample_rate: 96000 },
    { fps: 12.5, sample_rate: 22050 },
  ];
  for (const target of rates) {
    test(`fps ${target.fps}, ${target.sample_rate} Hz (seed ${seed})`, async () => {
      const r = rng(seed + target.fps * 1000);
      const awkward = (max: number) => Math.round(r.next() * max * 1e6) / 1e6 + (r.chance(0.3) ? 1 / 3 : 0);
      const V1 = Array.from({ length: 20 }, (_, i) => ({ asset_id: ids.video, start: i * 3 + awkward(0.5), in: awkward(5), duration: 1 + awkward(0.5) }));
      const A1 = Array.from({ length: 20 }, (_, i) => ({ asset_id: ids.audio, start: i * 3 + awkward(0.5), in: awkward(5), duration: 1 + awkward(0.5) }));
      // A crossfade between two clips that touch at every rate: 10 + 1 and 11 snap to the same frame.
      const V2 = [
        { asset_id: ids.video, start: 10, duration: 1 },
        { asset_id: ids.video, start: 11, duration: 2, transition: { kind: 'crossfade', duration: 0.3 } },
        { asset_id: ids.image, start: 20, duration: 1 / 3 },
      ];
      const first = await createTimeline(alpha, { name: 'round trip', target, tracks: { V1, A1, V2 } });
      const read = assertTimeline(await alpha.get(`/timeline/${first.id}`), 200);
      let current = read;
      for (let i = 0; i < 2; i++) {
        const written = assertTimeline(await alpha.patch(`/timeline/${first.id}`, { tracks: current.tracks }, { 'If-Match': String(current.revision) }), 200);
        assert.deepEqual(written.tracks, read.tracks, `write ${i + 1}`);
        assert.deepEqual(written.target, read.target);
        assert.equal(written.duration, read.duration);
        current = written;
      }
      // The whole document (target included) written back, and a new sequence made from it, match too.
      const whole = assertTimeline(
        await alpha.patch(`/timeline/${first.id}`, { name: current.name, target: current.target, tracks: current.tracks }, { 'If-Match': String(current.revision) }),
        200,
      );
      assert.deepEqual(whole.tracks, read.tracks);
      const copy = await createTimeline(alpha, { name: 'copy', target: read.target, tracks: read.tracks });
      assert.deepEqual(copy.tracks, read.tracks);
      assert.equal(copy.duration, read.duration);
      // Every shown time is a whole number of units.
      for (const [track, clips] of Object.entries(read.tracks) as [string, any[]][]) {
        const perSecond: [number, number] = track.startsWith('V') ? fpsRate(target.fps) : [target.sample_rate, 1];
        for (const c of clips) for (const v of [c.start, c.in, c.duration]) assertWhole(v, perSecond, `${track} ${v}`);
      }
    });
  }
});

describe('a target change re-snaps the clips', () => {
  test('fps 30 → 25 re-snaps V tracks only; sample rate 48000 → 8000 re-snaps A tracks only', async () => {
    const t = await createTimeline(alpha, {
      name: 'resnap',
      tracks: {
        V1: [{ asset_id: ids.video, start: 1 / 3, in: 0.1, duration: 0.1 }],
        A1: [{ asset_id: ids.audio, start: 0.00003, duration: 0.5 }],
      },
    });
    assert.deepEqual(t.tracks.V1, [clip(ids.video!, 1 / 3, 0.1, { in: 0.1 })]);
    assert.deepEqual(t.tracks.A1, [clip(ids.audio!, 1 / 48000, 0.5)]);
    const u = assertTimeline(await alpha.patch(`/timeline/${t.id}`, { target: { fps: 25 } }, { 'If-Match': '1' }), 200);
    // 1/3 s = 8.33 frames → 8 (0.32); 0.1 s = 2.5 frames → 3 (0.12).
    assert.deepEqual(u.tracks.V1, [clip(ids.video!, 0.32, 0.12, { in: 0.12 })]);
    assert.deepEqual(u.tracks.A1, t.tracks.A1);
    assert.equal(u.duration, 0.5 + 1 / 48000);
    const w = assertTimeline(await alpha.patch(`/timeline/${t.id}`, { target: { sample_rate: 8000 } }, { 'If-Match': '2' }), 200);
    // 1/48000 s = 0.17 sample at 8000 Hz → 0.
    assert.deepEqual(w.tracks.A1, [clip(ids.audio!, 0, 0.5)]);
    assert.deepEqual(w.tracks.V1, u.tracks.V1);
    assert.equal(w.duration, 0.5);
  });

  test('29.97 → 30 re-snaps from the shown value', async () => {
    const t = await createTimeline(alpha, { name: 'ntsc to 30', target: { fps: 29.97 }, tracks: { V1: [{ asset_id: ids.video, start: 10, duration: 10 }] } });
    assert.deepEqual(t.tracks.V1, [clip(ids.video!, 10.01, 10.01)]);
    const u = assertTimeline(await alpha.patch(`/timeline/${t.id}`, { target: { fps: 30 } }, { 'If-Match': '1' }), 200);
    // 10.01 s at 30 fps is 300.3 frames → 300.
    assert.deepEqual(u.tracks.V1, [clip(ids.video!, 10, 10)]);
    assert.equal(u.duration, 20);
  });

  test('a re-snap that leaves a clip under one frame is 422 naming it, and nothing changes', async () => {
    const t = await createTimeline(alpha, { name: 'too short later', target: { fps: 60 }, tracks: { V1: [{ asset_id: ids.video, start: 0, duration: 1 / 60 }] } });
    assert.deepEqual(where(await alpha.patch(`/timeline/${t.id}`, { target: { fps: 24 } }, { 'If-Match': '1' })), ['V1:0']);
    assert.deepEqual(assertTimeline(await alpha.get(`/timeline/${t.id}`), 200), t);
  });

  test('a re-snap that makes two clips overlap is 422 naming the later one', async () => {
    // At 100 fps: [4, 8) frames then 8: they touch. At 12.5 fps 0.04 s is half a frame (rounds up to 1):
    // the first is [1, 2), the second starts at 0.08 s = frame 1: overlap.
    const t = await createTimeline(alpha, {
      name: 'overlap later',
      target: { fps: 100 },
      tracks: { V1: [{ asset_id: ids.video, start: 0.04, duration: 0.04 }, { asset_id: ids.video, start: 0.08, duration: 1 }] },
    });
    assert.deepEqual(where(await alpha.patch(`/timeline/${t.id}`, { target: { fps: 12.5 } }, { 'If-Match': '1' })), ['V1:1']);
    assert.deepEqual(assertTimeline(await alpha.get(`/timeline/${t.id}`), 200), t);
    // At 25 fps both are one frame wide and still touch.
    assert.equal(assertTimeline(await alpha.patch(`/timeline/${t.id}`, { target: { fps: 25 } }, { 'If-Match': '1' }), 200).revision, 2);
  });
});

/** The end of a clip in seconds as the service shows it: (start + duration) in frames, as seconds. */
function frameEnd(fps: number, start: number, duration: number): number {
  const [num, den] = fpsRate(fps);
  const frames = Math.round((start * num) / den) + Math.round((duration * num) / den);
  return (frames * den) / num;
}

function fpsRate(fps: number): [number, number] {
  if (Number.isInteger(fps)) return [fps, 1];
  const ntsc = Math.round((fps * 1001) / 1000);
  if (Math.abs((ntsc * 1000) / 1001 - fps) < 0.0005) return [ntsc * 1000, 1001];
  return [fps * 1000, 1000];
}

function assertWhole(seconds: number, [num, den]: [number, number], what: string): void {
  const units = (seconds * num) / den;
  assert.ok(Math.abs(units - Math.round(units)) < 1e-6, `${what} is ${units} units`);
}
