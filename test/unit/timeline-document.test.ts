import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  assetIdsOf,
  buildDocument,
  IMAGE_SECONDS,
  layOut,
  sortTracks,
  trackEnd,
  trackKind,
  UNREADABLE,
  withTargetDefaults,
  type AssetFacts,
  type AssetLookup,
  type ClipProblem,
} from '../../service/timeline/document';
import type { ClipIn, Target, TracksIn } from '../../service/timeline/schema';

/**
 * The whole-document checks and snapping of sequences (docs/api.md "Checks: 422
 * `invalid_timeline`", "Snapping"), table by table. The asset lookup is
 * input data: a plain object of facts per id.
 */

const T30: Target = { sample_rate: 48000, fps: 30, width: 1920, height: 1080 };
const T2997: Target = { ...T30, fps: 29.97 };
const T25_441: Target = { sample_rate: 44100, fps: 25, width: 320, height: 180 };

const video = (duration_s: number | null = 10): AssetFacts => ({ kind: 'video', duration_s });
const audio = (duration_s: number | null = 10): AssetFacts => ({ kind: 'audio', duration_s });
const image: AssetFacts = { kind: 'image', duration_s: null };
const other: AssetFacts = { kind: 'other', duration_s: null };

/** The assets of these tables: what the caller may read now, and what the current revision already names. */
const READABLE: Record<string, AssetFacts> = {
  v10: video(10),
  v2: video(2),
  v1: video(1),
  vUnknown: video(null),
  a10: audio(10),
  aUnknown: audio(null),
  img: image,
  oth: other,
};
const PRESENT_ONLY: Record<string, AssetFacts> = { vReclaimed: video(4) };

function lookup(readable = READABLE, present = PRESENT_ONLY): AssetLookup {
  return {
    readable: (id) => readable[id] ?? null,
    present: (id) => present[id] ?? readable[id] ?? null,
  };
}

function build(tracks: TracksIn, target: Target = T30, assets: AssetLookup = lookup()) {
  return buildDocument({ name: 'seq', target, tracks }, assets);
}

function problemsOf(tracks: TracksIn, target: Target = T30, assets: AssetLookup = lookup()): ClipProblem[] {
  const result = build(tracks, target, assets);
  assert.equal(result.ok, false, 'expected problems');
  return result.ok ? [] : result.problems;
}

function docOf(tracks: TracksIn, target: Target = T30, assets: AssetLookup = lookup()) {
  const result = build(tracks, target, assets);
  if (!result.ok) assert.fail(`unexpected problems: ${JSON.stringify(result.problems)}`);
  return result;
}

const clip = (asset_id: string, start: number, more: Partial<ClipIn> = {}): ClipIn => ({ asset_id, start, ...more });

describe('buildDocument: one reason per row', () => {
  const rows: { name: string; tracks: TracksIn; target?: Target; problem: ClipProblem }[] = [
    {
      name: 'an asset the caller cannot read (same words whether or not it exists)',
      tracks: { V1: [clip('v10', 0), clip('nope', 20)] },
      problem: { track: 'V1', index: 1, reason: `${UNREADABLE}: nope` },
    },
    {
      name: 'an asset of kind other',
      tracks: { V1: [clip('oth', 0, { duration: 1 })] },
      problem: { track: 'V1', index: 0, reason: 'names an asset of kind "other", which cannot go on a track' },
    },
    {
      name: 'a video on an A track',
      tracks: { A1: [clip('v10', 0)] },
      problem: { track: 'A1', index: 0, reason: 'puts a video asset on A1: video and images go on V tracks' },
    },
    {
      name: 'an image on an A track',
      tracks: { A2: [clip('img', 0)] },
      problem: { track: 'A2', index: 0, reason: 'puts an image asset on A2: video and images go on V tracks' },
    },
    {
      name: 'sound on a V track',
      tracks: { V3: [clip('a10', 0)] },
      problem: { track: 'V3', index: 0, reason: 'puts a sound asset on V3: sound goes on A tracks' },
    },
    {
      name: 'an image with in > 0',
      tracks: { V1: [clip('img', 0, { in: 1 })] },
      problem: { track: 'V1', index: 0, reason: 'has in > 0, but an image has no time to start into' },
    },
    {
      name: 'in at the end of the source',
      tracks: { V1: [clip('v2', 0, { in: 2, duration: 1 })] },
      problem: { track: 'V1', index: 0, reason: 'starts at in = 2 s, at or past the end of its 2 s source' },
    },
    {
      // 1.99 s is 59.7 frames: in snaps to frame 60, the end. Stored as in = 2, it would be refused when written back.
      name: 'in that snaps to the end of the source',
      tracks: { V1: [clip('v2', 0, { in: 1.99, duration: 1 })] },
      problem: { track: 'V1', index: 0, reason: 'starts at in = 2 s, at or past the end of its 2 s source' },
    },
    {
      name: 'in past the end of the source (sound)',
      tracks: { A1: [clip('a10', 0, { in: 12.5 })] },
      problem: { track: 'A1', index: 0, reason: 'starts at in = 12.5 s, at or past the end of its 10 s source' },
    },
    {
      name: 'no duration and an unknown length',
      tracks: { V1: [clip('vUnknown', 0)] },
      problem: {
        track: 'V1',
        index: 0,
        reason: "has no duration, and the asset's length is unknown (it has no duration_s and could not be measured): give duration",
      },
    },
    {
      name: 'a duration under half a frame snaps to 0 frames',
      tracks: { V1: [clip('v10', 0, { duration: 0.016 })] },
      problem: { track: 'V1', index: 0, reason: 'is shorter than one frame (1/30 s) after snapping' },
    },
    {
      name: 'a duration under half a sample snaps to 0 samples',
      tracks: { A1: [clip('a10', 0, { duration: 0.00001 })] },
      problem: { track: 'A1', index: 0, reason: 'is shorter than one sample (1/48000 s) after snapping' },
    },
    {
      name: 'the unit names the target’s rate',
      target: T25_441,
      tracks: { A1: [clip('a10', 0, { duration: 0.00001 })] },
      problem: { track: 'A1', index: 0, reason: 'is shorter than one sample (1/44100 s) after snapping' },
    },
    {
      name: 'a crossfade under half a frame',
      tracks: { V1: [clip('v1', 0), clip('v1', 1, { transition: { kind: 'crossfade', duration: 0.01 } })] },
      problem: { track: 'V1', index: 1, reason: 'has a crossfade shorter than one frame (1/30 s) after snapping' },
    },
    {
      name: 'an overlap after snapping (0.98 s is frame 29.4 → 29, before the 1 s clip ends)',
      tracks: { V1: [clip('v1', 0), clip('v1', 0.98)] },
      problem: { track: 'V1', index: 1, reason: 'overlaps the clip before it on the track, which ends at 1 s' },
    },
    {
      name: 'a crossfade on the first clip of a track',
      tracks: { V1: [clip('v1', 0, { transition: { kind: 'crossfade', duration: 0.5 } })] },
      problem: { track: 'V1', index: 0, reason: 'has a crossfade but no clip ends where it starts on the track' },
    },
    {
      name: 'a crossfade after a gap',
      tracks: { V1: [clip('v1', 0), clip('v1', 2, { transition: { kind: 'crossfade', duration: 0.5 } })] },
      problem: { track: 'V1', index: 1, reason: 'has a crossfade but no clip ends where it starts on the track' },
    },
    {
      name: 'a crossfade longer than the clip itself',
      tracks: { V1: [clip('v2', 0), clip('v10', 2, { duration: 1, transition: { kind: 'crossfade', duration: 1.5 } })] },
      problem: { track: 'V1', index: 1, reason: 'has a crossfade longer than itself or than the clip before it' },
    },
    {
      name: 'a crossfade longer than the clip before it',
      tracks: { V1: [clip('v1', 0), clip('v10', 1, { transition: { kind: 'crossfade', duration: 1.5 } })] },
      problem: { track: 'V1', index: 1, reason: 'has a crossfade longer than itself or than the clip before it' },
    },
  ];
  for (const row of rows) {
    test(row.name, () => {
      assert.deepEqual(problemsOf(row.tracks, row.target), [row.problem]);
    });
  }
});

describe('buildDocument: what is accepted, snapped', () => {
  test('an empty document', () => {
    assert.deepEqual(build({}), { ok: true, doc: { name: 'seq', target: T30, tracks: {} }, duration: 0 });
    assert.deepEqual(build({ V1: [] }), { ok: true, doc: { name: 'seq', target: T30, tracks: { V1: [] } }, duration: 0 });
  });

  test('times snap to frames on V tracks and samples on A tracks; in defaults to 0', () => {
    const { doc, duration } = docOf({
      V1: [clip('v10', 0.05, { in: 0.05, duration: 1.01 })],
      A1: [clip('a10', 1.00001, { duration: 0.01 })],
    });
    assert.deepEqual(doc.tracks.V1, [{ asset_id: 'v10', start: 2 / 30, in: 2 / 30, duration: 30 / 30 }]);
    assert.deepEqual(doc.tracks.A1, [{ asset_id: 'a10', start: 1, in: 0, duration: 0.01 }]);
    assert.equal(duration, 32 / 30);
  });

  test('the default duration is the source length minus in', () => {
    const { doc } = docOf({ V1: [clip('v10', 0, { in: 2.5 })], A1: [clip('a10', 0)] });
    assert.equal(doc.tracks.V1![0]!.duration, 7.5);
    assert.equal(doc.tracks.A1![0]!.duration, 10);
  });

  test('the default duration is source length minus in exactly, as decimals: a half unit rounds up', () => {
    // In doubles 2.05 - 1 is 1.0499999999999998 and 0.35 - 0.2 is 0.14999999999999997: 31 and 4 frames, not 32 and 5.
    const assets = lookup({ v205: video(2.05), v035: video(0.35), a1: audio(1.00003125) });
    const { doc } = docOf({ V1: [clip('v205', 0, { in: 1 }), clip('v035', 2, { in: 0.2 })], A1: [clip('a1', 0, { in: 1 })] }, T30, assets);
    assert.deepEqual(doc.tracks.V1!.map((c) => c.duration), [32 / 30, 5 / 30]);
    assert.equal(doc.tracks.A1![0]!.duration, 2 / 48000); // 0.00003125 s = 1.5 samples
    const laid = layOut([{ asset_id: 'v205', in: 1 }, { asset_id: 'v035', in: 0.2 }], T30, assets);
    assert.ok(laid.ok);
    assert.deepEqual(laid.tracks.V1!.map((c) => [c.start, c.duration]), [[0, 32 / 30], [32 / 30, 5 / 30]]);
  });

  test(`an image lasts ${IMAGE_SECONDS} s unless told otherwise`, () => {
    const { doc } = docOf({ V1: [clip('img', 0), clip('img', 5, { duration: 2 })] });
    assert.deepEqual(
      doc.tracks.V1!.map((c) => c.duration),
      [IMAGE_SECONDS, 2],
    );
  });

  test('an unknown length is fine with a duration, and may run past anything (a hold)', () => {
    const { doc } = docOf({ V1: [clip('vUnknown', 0, { in: 30, duration: 2 }), clip('v1', 2, { duration: 4 })] });
    assert.deepEqual(
      doc.tracks.V1!.map((c) => [c.in, c.duration]),
      [
        [30, 2],
        [0, 4],
      ],
    );
  });

  test('an asset the current revision already names may stay though it is no longer readable (present)', () => {
    const { doc } = docOf({ V1: [clip('vReclaimed', 0)] });
    assert.deepEqual(doc.tracks.V1, [{ asset_id: 'vReclaimed', start: 0, in: 0, duration: 4 }]);
  });

  test('readable facts win over present ones', () => {
    const assets = lookup({ x: video(3) }, { x: video(7) });
    assert.equal(docOf({ V1: [clip('x', 0)] }, T30, assets).doc.tracks.V1![0]!.duration, 3);
  });

  test('without present facts, the same clip is unreadable', () => {
    assert.deepEqual(problemsOf({ V1: [clip('vReclaimed', 0)] }, T30, lookup(READABLE, {})), [
      { track: 'V1', index: 0, reason: `${UNREADABLE}: vReclaimed` },
    ]);
  });

  test('clips are stored by start; clips given at one start keep their given order (the later one overlaps)', () => {
    const { doc } = docOf({ V1: [clip('v1', 2), clip('v2', 0), clip('img', 3, { duration: 1 })] });
    assert.deepEqual(
      doc.tracks.V1!.map((c) => [c.asset_id, c.start]),
      [
        ['v2', 0],
        ['v1', 2],
        ['img', 3],
      ],
    );
    assert.deepEqual(problemsOf({ V1: [clip('v1', 20), clip('v2', 1), clip('v10', 1)] }), [
      { track: 'V1', index: 2, reason: 'overlaps the clip before it on the track, which ends at 3 s' },
    ]);
    assert.deepEqual(problemsOf({ V1: [clip('v10', 1), clip('v2', 1), clip('v1', 20)] }), [
      { track: 'V1', index: 1, reason: 'overlaps the clip before it on the track, which ends at 11 s' },
    ]);
  });

  test('an overlap is with the furthest-reaching clip before it, not the nearest one', () => {
    assert.deepEqual(problemsOf({ V1: [clip('v10', 0, { duration: 3 }), clip('v1', 1), clip('v1', 2.5)] }), [
      { track: 'V1', index: 1, reason: 'overlaps the clip before it on the track, which ends at 3 s' },
      { track: 'V1', index: 2, reason: 'overlaps the clip before it on the track, which ends at 3 s' },
    ]);
  });

  test('clips that only touch do not overlap, also after snapping', () => {
    // 0.99 s is 29.7 frames → 30: exactly the end of the 1 s clip.
    const { doc } = docOf({ V1: [clip('v1', 0), clip('v1', 0.99)] });
    assert.deepEqual(
      doc.tracks.V1!.map((c) => c.start),
      [0, 1],
    );
  });

  test('a crossfade from the clip that ends where it starts, up to the length of either', () => {
    const { doc } = docOf({
      V1: [clip('v2', 0), clip('v1', 2, { transition: { kind: 'crossfade', duration: 1 } }), clip('v2', 3, { transition: { kind: 'crossfade', duration: 0.51 } })],
      A1: [clip('a10', 0, { duration: 1 }), clip('a10', 1, { transition: { kind: 'crossfade', duration: 0.50001 } })],
    });
    assert.deepEqual(doc.tracks.V1![1]!.transition, { kind: 'crossfade', duration: 1 });
    assert.deepEqual(doc.tracks.V1![2]!.transition, { kind: 'crossfade', duration: 15 / 30 });
    assert.deepEqual(doc.tracks.A1![1]!.transition, { kind: 'crossfade', duration: 0.5 });
  });

  test('the duration is the end of the last clip on any track, each in its own rate', () => {
    // V1 at 30 fps ends at 1 s; A1 at 48 kHz ends at 48001 samples.
    assert.equal(docOf({ V1: [clip('v1', 0)], A1: [clip('a10', 0, { duration: 1.00002 })] }).duration, 48001 / 48000);
    // 29.97: 1 s of video is 30 frames = 1.001 s, longer than 1 s of sound.
    assert.equal(docOf({ V1: [clip('v10', 0, { duration: 1 })], A1: [clip('a10', 0, { duration: 1 })] }, T2997).duration, 1.001);
    // The latest end, not the last clip's: V2 ends later than V1's last clip.
    assert.equal(docOf({ V1: [clip('v1', 0), clip('v1', 1)], V2: [clip('v10', 0.5)] }).duration, 10.5);
    // 25 fps and 44.1 kHz.
    assert.equal(docOf({ V1: [clip('v1', 0)], A2: [clip('a10', 0.5, { duration: 0.6 })] }, T25_441).duration, 1.1);
  });

  test('the document keeps the name and target it was given, tracks in V1..V9, A1..A9 order', () => {
    const { doc } = docOf({ A2: [clip('a10', 0)], V2: [clip('v1', 0)], A1: [clip('a10', 0)], V1: [clip('v1', 0)] }, T25_441);
    assert.equal(doc.name, 'seq');
    assert.deepEqual(doc.target, T25_441);
    assert.deepEqual(Object.keys(doc.tracks), ['V1', 'V2', 'A1', 'A2']);
  });
});

describe('buildDocument: several problems at once', () => {
  test('every bad clip is named once, with its index in the given array, tracks in order', () => {
    const problems = problemsOf({
      A1: [clip('v10', 0), clip('a10', 0), clip('a10', 5)],
      V2: [clip('nope', 0)],
      V1: [clip('v1', 0), clip('img', 0.5, { in: 1 }), clip('v1', 0.5), clip('oth', 9)],
    });
    assert.deepEqual(problems, [
      { track: 'V1', index: 1, reason: 'has in > 0, but an image has no time to start into' },
      { track: 'V1', index: 3, reason: 'names an asset of kind "other", which cannot go on a track' },
      { track: 'V1', index: 2, reason: 'overlaps the clip before it on the track, which ends at 1 s' },
      { track: 'V2', index: 0, reason: `${UNREADABLE}: nope` },
      { track: 'A1', index: 0, reason: 'puts a video asset on A1: video and images go on V tracks' },
      { track: 'A1', index: 2, reason: 'overlaps the clip before it on the track, which ends at 10 s' },
    ]);
  });

  test('a clip with its own problem is reported once and is not a neighbour for overlaps', () => {
    // The unreadable clip at 0 would overlap the one at 0.5; only its own problem is named.
    assert.deepEqual(problemsOf({ V1: [clip('nope', 0, { duration: 5 }), clip('v1', 0.5)] }), [
      { track: 'V1', index: 0, reason: `${UNREADABLE}: nope` },
    ]);
  });
});

describe('layOut: TimelineCreate clips end to end', () => {
  test('video and images on V1 from 0, sound on A1 from 0, each on its own; origin maps back to clips', () => {
    const laid = layOut(
      [{ asset_id: 'v2' }, { asset_id: 'a10', duration: 3 }, { asset_id: 'img' }, { asset_id: 'v10', in: 9 }, { asset_id: 'a10', in: 9.5 }],
      T30,
      lookup(),
    );
    assert.ok(laid.ok);
    assert.deepEqual(laid.tracks, {
      V1: [
        { asset_id: 'v2', start: 0, duration: 2 },
        { asset_id: 'img', start: 2, duration: 5 },
        { asset_id: 'v10', in: 9, start: 7, duration: 1 },
      ],
      A1: [
        { asset_id: 'a10', start: 0, duration: 3 },
        { asset_id: 'a10', in: 9.5, start: 3, duration: 0.5 },
      ],
    });
    assert.deepEqual([...laid.origin.entries()], [
      ['V1', [0, 2, 3]],
      ['A1', [1, 4]],
    ]);
    // What layOut gives builds as is.
    assert.equal(docOf(laid.tracks).duration, 8);
  });

  test('durations are snapped so each next start is exactly the previous end', () => {
    const laid = layOut([{ asset_id: 'v10', duration: 0.05005 }, { asset_id: 'v10', duration: 0.05005 }, { asset_id: 'v10', duration: 1 / 3 }], T2997, lookup());
    assert.ok(laid.ok);
    const v1 = laid.tracks.V1!;
    assert.deepEqual(
      v1.map((c) => [c.start, c.duration]),
      [
        [0, 2002 / 30000],
        [2002 / 30000, 2002 / 30000],
        [4004 / 30000, 10010 / 30000],
      ],
    );
    const { doc } = docOf(laid.tracks, T2997);
    assert.deepEqual(doc.tracks.V1!.map((c) => c.start), v1.map((c) => c.start));
  });

  test('problems name the place in clips (track null before a track is known)', () => {
    const laid = layOut(
      [{ asset_id: 'v1' }, { asset_id: 'nope' }, { asset_id: 'oth' }, { asset_id: 'img', in: 1 }, { asset_id: 'aUnknown' }, { asset_id: 'vReclaimed' }],
      T30,
      lookup(),
    );
    assert.equal(laid.ok, false);
    assert.deepEqual(laid.ok ? [] : laid.problems, [
      { track: null, index: 1, reason: `${UNREADABLE}: nope` },
      { track: null, index: 2, reason: 'names an asset of kind "other", which cannot go on a track' },
      { track: 'V1', index: 3, reason: 'has in > 0, but an image has no time to start into' },
      {
        track: 'A1',
        index: 4,
        reason: "has no duration, and the asset's length is unknown (it has no duration_s and could not be measured): give duration",
      },
      // A new sequence has no present clips: only what is readable now counts.
      { track: null, index: 5, reason: `${UNREADABLE}: vReclaimed` },
    ]);
  });

  test('no clips: no tracks', () => {
    const laid = layOut([], T30, lookup());
    assert.ok(laid.ok);
    assert.deepEqual(laid.tracks, {});
  });
});

describe('trackEnd', () => {
  const rows: [name: string, clips: { start: number; duration: number }[] | undefined, track: string, target: Target, end: number][] = [
    ['no track', undefined, 'V1', T30, 0],
    ['an empty track', [], 'A1', T30, 0],
    ['one clip', [{ start: 1, duration: 2 }], 'V1', T30, 3],
    ['the furthest end, not the last clip’s', [{ start: 0, duration: 5 }, { start: 1, duration: 1 }], 'V2', T30, 5],
    ['29.97 fps, snapped values add exactly', [{ start: 1.001, duration: 1.001 }], 'V1', T2997, 2.002],
    ['29.97 fps, one frame after 10 frames', [{ start: 10010 / 30000, duration: 1001 / 30000 }], 'V1', T2997, 11011 / 30000],
    ['an A track counts samples', [{ start: 0.5, duration: 1 / 48000 }], 'A1', T30, 24001 / 48000],
    ['44.1 kHz', [{ start: 0, duration: 0.1 }, { start: 0.1, duration: 221 / 44100 }], 'A3', T25_441, 4631 / 44100],
  ];
  for (const [name, clips, track, target, end] of rows) {
    test(name, () => {
      const full = clips?.map((c) => ({ asset_id: 'x', in: 0, ...c }));
      assert.equal(trackEnd(full, track, target), end);
    });
  }
});

describe('assetIdsOf, withTargetDefaults, sortTracks, trackKind', () => {
  test('assetIdsOf: distinct ids in first-use order over the tracks', () => {
    assert.deepEqual(assetIdsOf({}), []);
    assert.deepEqual(
      assetIdsOf({ V1: [clip('b', 0), clip('a', 1), clip('b', 2)], A1: [clip('c', 0), clip('a', 1)], V2: [] }),
      ['b', 'a', 'c'],
    );
  });

  const targets: [given: Partial<Target> | undefined, expected: Target][] = [
    [undefined, { sample_rate: 48000, fps: 30, width: 1920, height: 1080 }],
    [{}, { sample_rate: 48000, fps: 30, width: 1920, height: 1080 }],
    [{ fps: 25 }, { sample_rate: 48000, fps: 25, width: 1920, height: 1080 }],
    [{ sample_rate: 44100, width: 320, height: 180 }, { sample_rate: 44100, fps: 30, width: 320, height: 180 }],
    [T2997, T2997],
  ];
  for (const [given, expected] of targets) {
    test(`withTargetDefaults(${JSON.stringify(given)})`, () => {
      assert.deepEqual(withTargetDefaults(given), expected);
    });
  }

  test('sortTracks: V1..V9 then A1..A9, a copy', () => {
    const given = ['A2', 'V9', 'A1', 'V1', 'A9', 'V2'];
    assert.deepEqual(sortTracks(given), ['V1', 'V2', 'V9', 'A1', 'A2', 'A9']);
    assert.deepEqual(given, ['A2', 'V9', 'A1', 'V1', 'A9', 'V2']);
    assert.deepEqual(sortTracks([]), []);
  });

  test('trackKind', () => {
    assert.equal(trackKind('video'), 'V');
    assert.equal(trackKind('image'), 'V');
    assert.equal(trackKind('audio'), 'A');
    assert.equal(trackKind('other'), null);
  });
});
