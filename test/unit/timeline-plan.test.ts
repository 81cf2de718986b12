import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { MediaProbe, VideoStreamInfo } from '../../service/media/types';
import type { TimelineDoc } from '../../service/timeline/document';
import { COPYABLE_CODECS, planExport, videoClips, type ClipSource, type ExportPlan } from '../../service/timeline/plan';
import type { Clip, ExportPreset, Target, Tracks } from '../../service/timeline/schema';

/**
 * The export plan (docs/api.md "Export plan `GET /timeline/{id}:plan`") on
 * synthetic probes: copy when every video clip matches the target and the
 * first video clip and is used whole; otherwise conform, with a reason per
 * clip. Real ffprobe output is covered by test/timeline-plan.test.ts.
 */

const TARGET: Target = { sample_rate: 48000, fps: 25, width: 320, height: 180 };

/** A 1 s 320x180 25 fps H.264 High stream, as ffprobe shows an x264 MP4. */
function stream(more: Partial<VideoStreamInfo> = {}): VideoStreamInfo {
  return {
    index: 0,
    codec: 'h264',
    codec_tag: 'avc1',
    profile: 'High',
    level: 12,
    width: 320,
    height: 180,
    sar: '1:1',
    dar: '16:9',
    field_order: 'progressive',
    pix_fmt: 'yuv420p',
    time_base: '1/12800',
    frame_rate: '25/1',
    avg_frame_rate: '25/1',
    color_range: 'tv',
    color_space: 'bt709',
    color_transfer: 'bt709',
    color_primaries: 'bt709',
    extradata_hash: 'SHA256:d4cb019f',
    rotation: 0,
    duration_s: 1,
    nb_frames: 25,
    still: false,
    ...more,
  };
}

function probe(video: VideoStreamInfo | null): MediaProbe {
  return { version: 1, format: 'mov,mp4,m4a,3gp,3g2,mj2', duration_s: video?.duration_s ?? 1, video, audio: null };
}

const videoSource = (more: Partial<VideoStreamInfo> = {}): ClipSource => ({ kind: 'video', probe: probe(stream(more)) });
const IMAGE: ClipSource = { kind: 'image', probe: null };
const SOUND: ClipSource = { kind: 'audio', probe: null };

const at = (asset_id: string, start: number, duration = 1, more: Partial<Clip> = {}): Clip => ({ asset_id, start, in: 0, duration, ...more });

function plan(tracks: Tracks, sources: Record<string, ClipSource>, preset: ExportPreset = 'auto', target = TARGET): ExportPlan {
  const doc: TimelineDoc = { name: 'seq', target, tracks };
  return planExport(doc, (id) => {
    const source = sources[id];
    if (!source) throw new Error(`no source for ${id}`);
    return source;
  }, preset);
}

describe('planExport: copy', () => {
  test('two different files with identical settings, used whole, at a matching target', () => {
    const result = plan({ V1: [at('a', 0), at('b', 1)], A1: [at('s', 0, 2)] }, { a: videoSource(), b: videoSource(), s: SOUND });
    assert.deepEqual(result, {
      preset: 'auto',
      path: 'copy',
      clips: [
        { track: 'V1', index: 0, asset_id: 'a', path: 'copy', reason: null },
        { track: 'V1', index: 1, asset_id: 'b', path: 'copy', reason: null },
      ],
    });
  });

  test('one file used twice; sound never decides the path (shorter than the video, other rate)', () => {
    const result = plan({ V1: [at('a', 0), at('a', 1)], A1: [at('s', 0, 0.5)], A2: [at('s', 1.5, 0.52)] }, { a: videoSource(), s: SOUND });
    assert.equal(result.path, 'copy');
    assert.equal(result.clips.length, 2);
  });

  test('29.97 fps: 30000/1001 streams at a 29.97 target', () => {
    const ntsc = videoSource({ frame_rate: '30000/1001', avg_frame_rate: '30000/1001', time_base: '1/30000', duration_s: 1.001 });
    const result = plan({ V1: [at('a', 0, 1.001), at('b', 1.001, 1.001)] }, { a: ntsc, b: videoSource({ frame_rate: '30000/1001', time_base: '1/30000', duration_s: 1.001 }) }, 'auto', { ...TARGET, fps: 29.97 });
    assert.equal(result.path, 'copy', JSON.stringify(result.clips));
  });

  test('HEVC is copyable too; unknown colour tags and SAR on both sides match', () => {
    assert.ok(COPYABLE_CODECS.has('hevc') && COPYABLE_CODECS.has('h264') && !COPYABLE_CODECS.has('vp9'));
    const hevc = { codec: 'hevc', codec_tag: 'hvc1', profile: 'Main', sar: null, color_range: null, color_space: null, color_transfer: null, color_primaries: null };
    const result = plan({ V1: [at('a', 0), at('b', 1)] }, { a: videoSource(hevc), b: videoSource(hevc) });
    assert.equal(result.path, 'copy', JSON.stringify(result.clips));
  });

  test('used whole within half a frame: a stream a little shorter or longer than the clip', () => {
    // Half a frame at 25 fps is 0.02 s.
    const result = plan({ V1: [at('a', 0), at('b', 1), at('c', 2)] }, { a: videoSource({ duration_s: 0.99 }), b: videoSource({ duration_s: 1.019 }), c: videoSource({ duration_s: 0.981 }) });
    assert.equal(result.path, 'copy', JSON.stringify(result.clips));
  });
});

describe('planExport: one reason per row (the second clip differs from the first, or from the target)', () => {
  const REF = '(V1 #1)';
  const rows: { name: string; b?: Partial<VideoStreamInfo>; source?: ClipSource; clip?: Partial<Clip>; start?: number; reason: string }[] = [
    { name: 'frame size', b: { width: 256, height: 144 }, reason: "Its frame size 256x144 differs from the target's 320x180" },
    { name: 'frame rate', b: { frame_rate: '30/1' }, reason: "Its frame rate 30 fps differs from the target's 25 fps" },
    { name: 'a 23.976 stream at a 25 fps target', b: { frame_rate: '24000/1001' }, reason: "Its frame rate 23.976 fps differs from the target's 25 fps" },
    { name: 'unknown frame rate', b: { frame_rate: '0/0' }, reason: "Its frame rate unknown fps differs from the target's 25 fps" },
    { name: 'pixel format', b: { pix_fmt: 'yuv444p' }, reason: `Its pixel format yuv444p differs from yuv420p in the first video clip ${REF}` },
    { name: 'profile', b: { profile: 'Main' }, reason: `Its profile Main differs from High in the first video clip ${REF}` },
    { name: 'level', b: { level: 13 }, reason: `Its level 13 differs from 12 in the first video clip ${REF}` },
    { name: 'codec tag avc3 vs avc1', b: { codec_tag: 'avc3' }, reason: `Its codec tag avc3 differs from avc1 in the first video clip ${REF}` },
    { name: 'parameter sets (extradata hash)', b: { extradata_hash: 'SHA256:0ther' }, reason: `Its parameter sets (SPS/PPS) differ from those of the first video clip ${REF}` },
    { name: 'no extradata where the first clip has some', b: { extradata_hash: null }, reason: `Its parameter sets (SPS/PPS) differ from those of the first video clip ${REF}` },
    { name: 'time base', b: { time_base: '1/25' }, reason: `Its time base 1/25 differs from 1/12800 in the first video clip ${REF}` },
    { name: 'field order', b: { field_order: 'tt' }, reason: `Its field order tt differs from progressive in the first video clip ${REF}` },
    { name: 'unknown field order', b: { field_order: null }, reason: `Its field order unset differs from progressive in the first video clip ${REF}` },
    { name: 'colour range', b: { color_range: 'pc' }, reason: `Its colour range pc differs from tv in the first video clip ${REF}` },
    { name: 'colour space', b: { color_space: 'bt470bg' }, reason: `Its colour space bt470bg differs from bt709 in the first video clip ${REF}` },
    { name: 'colour transfer', b: { color_transfer: 'smpte2084' }, reason: `Its colour transfer smpte2084 differs from bt709 in the first video clip ${REF}` },
    { name: 'colour primaries', b: { color_primaries: 'bt2020' }, reason: `Its colour primaries bt2020 differs from bt709 in the first video clip ${REF}` },
    { name: 'display aspect ratio', b: { dar: '4:3' }, reason: `Its display aspect ratio 4:3 differs from 16:9 in the first video clip ${REF}` },
    { name: 'rotation', b: { rotation: 90 }, reason: 'It is rotated by 90°, which a copy cannot apply' },
    { name: 'an image', source: IMAGE, reason: 'It is a still image: it becomes a video clip by encoding' },
    { name: 'a still video stream (a PNG uploaded as video)', b: { still: true, codec: 'png' }, reason: 'It is a still image: it becomes a video clip by encoding' },
    { name: 'trimmed start (in > 0, to the end)', clip: { in: 0.2, duration: 0.8 }, reason: 'It is trimmed: it starts 0.2 s into its source' },
    { name: 'trimmed end', clip: { duration: 0.6 }, reason: 'It is trimmed: it ends 0.4 s before the end of its 1 s source' },
    { name: 'trimmed end by one frame (more than half a frame)', clip: { duration: 0.96 }, reason: 'It is trimmed: it ends 0.04 s before the end of its 1 s source' },
    { name: 'a hold past the end, beyond half a frame', clip: { duration: 1.04 }, reason: 'It holds its last frame for 0.04 s past the end of its 1 s source' },
    { name: 'a hold of a source shorter than the clip by more than half a frame', b: { duration_s: 0.97 }, reason: 'It holds its last frame for 0.03 s past the end of its 0.97 s source' },
    { name: 'a source of unknown length', b: { duration_s: null }, reason: "Its source's length could not be measured, so whole use cannot be shown" },
    { name: 'a crossfade', clip: { transition: { kind: 'crossfade', duration: 0.2 } }, reason: 'It has a crossfade, which needs encoding' },
    { name: 'a gap before the clip', start: 1.2, reason: 'It starts after a gap of 0.2 s, which is filled with black by encoding' },
  ];
  for (const row of rows) {
    test(row.name, () => {
      const b = row.source ?? videoSource(row.b);
      const second = at('b', row.start ?? 1, 1, row.clip);
      const result = plan({ V1: [at('a', 0), second] }, { a: videoSource(), b });
      assert.equal(result.path, 'conform');
      assert.deepEqual(result.clips, [
        { track: 'V1', index: 0, asset_id: 'a', path: 'copy', reason: null },
        { track: 'V1', index: 1, asset_id: 'b', path: 'conform', reason: row.reason },
      ]);
    });
  }

  test('vp9: not copyable into MP4, and not the first clip’s codec (parameter sets are compared only within one codec)', () => {
    const result = plan({ V1: [at('a', 0), at('b', 1)] }, { a: videoSource(), b: videoSource({ codec: 'vp9', codec_tag: null, profile: 'Profile 0', extradata_hash: null }) });
    assert.equal(
      result.clips[1]!.reason,
      'Its codec vp9 cannot be stream-copied into MP4 (H.264 and HEVC can); ' +
        `its codec vp9 differs from h264 in the first video clip ${REF}; ` +
        `its profile Profile 0 differs from High in the first video clip ${REF}; ` +
        `its codec tag unset differs from avc1 in the first video clip ${REF}`,
    );
  });

  test('a vp9 sequence of one clip is conform: the target is checked on the first clip too', () => {
    const result = plan({ V1: [at('a', 0)] }, { a: videoSource({ codec: 'vp9' }) });
    assert.deepEqual(result.clips, [
      { track: 'V1', index: 0, asset_id: 'a', path: 'conform', reason: 'Its codec vp9 cannot be stream-copied into MP4 (H.264 and HEVC can)' },
    ]);
  });

  test('non-square pixels: against the target, and against the first clip', () => {
    const result = plan({ V1: [at('a', 0), at('b', 1)] }, { a: videoSource(), b: videoSource({ sar: '4:3' }) });
    assert.equal(
      result.clips[1]!.reason,
      `Its pixels are not square (sample aspect ratio 4:3); its sample aspect ratio 4:3 differs from 1:1 in the first video clip ${REF}`,
    );
    const first = plan({ V1: [at('a', 0)] }, { a: videoSource({ sar: '64:45', dar: '256:135' }) });
    assert.equal(first.clips[0]!.reason, 'Its pixels are not square (sample aspect ratio 64:45)');
  });

  test('the first clip not at 0', () => {
    const result = plan({ V1: [at('a', 0.48)] }, { a: videoSource() });
    assert.deepEqual(result.clips, [
      { track: 'V1', index: 0, asset_id: 'a', path: 'conform', reason: 'It starts after a gap of 0.48 s, which is filled with black by encoding' },
    ]);
  });

  test('sound running past the last video clip (beyond half a frame)', () => {
    const result = plan({ V1: [at('a', 0), at('b', 1)], A1: [at('s', 0, 3)] }, { a: videoSource(), b: videoSource(), s: SOUND });
    assert.deepEqual(
      result.clips.map((c) => c.reason),
      [null, 'It is the last clip on V1, but the sequence runs on 1 s after it (sound), which needs black video by encoding'],
    );
  });

  test('a V2 clip running past the end of V1 is named as what runs on (not sound)', () => {
    const result = plan({ V1: [at('a', 0)], V2: [at('c', 0, 3)], A1: [at('s', 0, 2)] }, { a: videoSource(), c: videoSource({ duration_s: 3 }), s: SOUND });
    assert.deepEqual(
      result.clips.map((c) => c.reason),
      [
        'It is the last clip on V1, but the sequence runs on 2 s after it (on V2), which needs black video by encoding',
        'It is on V2: tracks above V1 are composited over it, which needs encoding',
      ],
    );
  });

  test('sound ending within half a frame of the video is not a reason', () => {
    const result = plan({ V1: [at('a', 0), at('b', 1)], A1: [at('s', 0, 2.019)] }, { a: videoSource(), b: videoSource(), s: SOUND });
    assert.equal(result.path, 'copy', JSON.stringify(result.clips));
  });

  test('a clip on V2 (composited over V1)', () => {
    const result = plan({ V1: [at('a', 0), at('b', 1)], V2: [at('c', 0.5)] }, { a: videoSource(), b: videoSource(), c: videoSource() });
    assert.deepEqual(result.clips, [
      { track: 'V1', index: 0, asset_id: 'a', path: 'copy', reason: null },
      { track: 'V1', index: 1, asset_id: 'b', path: 'copy', reason: null },
      { track: 'V2', index: 0, asset_id: 'c', path: 'conform', reason: 'It is on V2: tracks above V1 are composited over it, which needs encoding' },
    ]);
  });

  test('several reasons of one clip, in one sentence', () => {
    const result = plan({ V1: [at('a', 0), at('b', 1.2, 1, { in: 0.5 })] }, { a: videoSource(), b: videoSource({ profile: 'Main', width: 640, height: 360 }) });
    assert.equal(
      result.clips[1]!.reason,
      'It starts after a gap of 0.2 s, which is filled with black by encoding; ' +
        'it is trimmed: it starts 0.5 s into its source; ' +
        'it holds its last frame for 0.5 s past the end of its 1 s source; ' +
        "its frame size 640x360 differs from the target's 320x180; " +
        `its profile Main differs from High in the first video clip ${REF}`,
    );
  });
});

describe('planExport: the reference is the first non-still V1 video clip', () => {
  test('an image and a still video before it are skipped; reasons name the reference by its place', () => {
    const result = plan(
      { V1: [at('img', 0), at('still', 1), at('a', 2), at('b', 3)] },
      { img: IMAGE, still: videoSource({ still: true, codec: 'png', profile: null }), a: videoSource({ profile: 'Main' }), b: videoSource() },
    );
    assert.deepEqual(
      result.clips.map((c) => c.reason),
      [
        'It is a still image: it becomes a video clip by encoding',
        'It is a still image: it becomes a video clip by encoding',
        null,
        'Its profile High differs from Main in the first video clip (V1 #3)',
      ],
    );
  });

  test('the first clip is the reference even when it cannot be copied itself', () => {
    const result = plan({ V1: [at('a', 0, 0.5), at('b', 0.5)] }, { a: videoSource({ profile: 'Main' }), b: videoSource() });
    assert.deepEqual(
      result.clips.map((c) => c.reason),
      ['It is trimmed: it ends 0.5 s before the end of its 1 s source', 'Its profile High differs from Main in the first video clip (V1 #1)'],
    );
  });

  test('a V2 clip is compared with the V1 reference; with no V1 video, nothing is compared', () => {
    const withRef = plan({ V1: [at('a', 0)], V2: [at('b', 0)] }, { a: videoSource(), b: videoSource({ pix_fmt: 'yuv422p' }) });
    assert.equal(
      withRef.clips[1]!.reason,
      'It is on V2: tracks above V1 are composited over it, which needs encoding; ' +
        'its pixel format yuv422p differs from yuv420p in the first video clip (V1 #1)',
    );
    const noRef = plan({ V1: [at('img', 0)], V2: [at('b', 0)] }, { img: IMAGE, b: videoSource({ pix_fmt: 'yuv422p' }) });
    assert.deepEqual(
      noRef.clips.map((c) => c.reason),
      ['It is a still image: it becomes a video clip by encoding', 'It is on V2: tracks above V1 are composited over it, which needs encoding'],
    );
  });

  test('clips are listed V1 first, then V2..V9, each by index; A tracks never', () => {
    const doc: TimelineDoc = { name: 's', target: TARGET, tracks: { A1: [at('s', 0)], V3: [at('a', 0)], V1: [at('a', 0), at('a', 1)], V2: [at('a', 0)] } };
    assert.deepEqual(
      videoClips(doc).map((c) => `${c.track}#${c.index}`),
      ['V1#0', 'V1#1', 'V2#0', 'V3#0'],
    );
  });
});

describe('planExport: presets', () => {
  const tracks = { V1: [at('a', 0), at('b', 1)] };
  const copyable = { a: videoSource(), b: videoSource() };
  const mixed = { a: videoSource(), b: videoSource({ width: 640, height: 360 }) };

  test('h264: every clip conforms; a clip’s own reason is kept, else the preset is the reason', () => {
    assert.deepEqual(plan(tracks, copyable, 'h264'), {
      preset: 'h264',
      path: 'conform',
      clips: [
        { track: 'V1', index: 0, asset_id: 'a', path: 'conform', reason: 'The h264 preset encodes every clip' },
        { track: 'V1', index: 1, asset_id: 'b', path: 'conform', reason: 'The h264 preset encodes every clip' },
      ],
    });
    assert.deepEqual(
      plan(tracks, mixed, 'h264').clips.map((c) => c.reason),
      ['The h264 preset encodes every clip', "Its frame size 640x360 differs from the target's 320x180"],
    );
  });

  test('copy and auto plan alike (the route refuses a copy preset with a conform plan)', () => {
    for (const preset of ['copy', 'auto'] as const) {
      const ok = plan(tracks, copyable, preset);
      assert.equal(ok.preset, preset);
      assert.equal(ok.path, 'copy');
      const no = plan(tracks, mixed, preset);
      assert.equal(no.path, 'conform');
      assert.deepEqual(
        no.clips.map((c) => c.path),
        ['copy', 'conform'],
      );
    }
  });
});
