import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AudioStreamInfo, MediaProbe, VideoStreamInfo } from '../../service/media/types';
import type { ExpectedOutput } from '../../service/timeline/render';
import { isProgressLine, outputProblems, progressAfter } from '../../service/timeline/verify';

/**
 * What an export's ffmpeg run tells (service/timeline/verify.ts): progress
 * on the output's timeline from `-progress` lines, which stdout lines stay out of the log, and whether
 * the probed output is what the plan asked for.
 */

describe('progressAfter', () => {
  const TOTAL = 4000;
  const FPS25 = { num: 25n, den: 1n };
  const NTSC = { num: 30000n, den: 1001n };
  const rows: { shown?: number; line: string; ms: number; why: string }[] = [
    { line: 'frame=0', ms: 0, why: 'nothing written yet' },
    { line: 'frame=1', ms: 40, why: 'one frame at 25 fps is 40 ms' },
    { line: 'frame=37', ms: 1480, why: 'frames × 40 ms' },
    { line: 'frame=99', ms: 3960, why: 'never the total before the end' },
    { line: 'frame=100', ms: TOTAL, why: 'the whole picture is the total' },
    { line: 'frame=250', ms: TOTAL, why: 'beyond the total → the total' },
    { line: 'frame=999999999999999', ms: TOTAL, why: 'huge → the total' },
    { line: 'progress=end', ms: TOTAL, why: 'the last line of a finished run' },
    { shown: 2000, line: 'frame=10', ms: 2000, why: 'a lower count never takes the bar back' },
    { shown: 2000, line: 'progress=continue', ms: 2000, why: 'a block ends: what was shown stays' },
    { shown: 1000, line: 'out_time_us=3500000', ms: 1000, why: 'out_time is not read (under -copyts it is not on the output’s timeline)' },
    { line: 'out_time_ms=1500000', ms: 0, why: 'nor out_time_ms' },
    { line: 'out_time=00:00:01.500000', ms: 0, why: 'nor the clock form' },
    { line: 'frame=N/A', ms: 0, why: 'no count' },
    { line: 'frame=-3', ms: 0, why: 'not a count' },
    { line: 'frame=1e3', ms: 0, why: 'not a count' },
    { line: 'frame=9999999999999999', ms: 0, why: 'more digits than any run writes: ignored' },
    { line: 'frame=37 ', ms: 0, why: 'not the whole line' },
    { line: 'xframe=37', ms: 0, why: 'another key' },
    { line: 'fps=37.00', ms: 0, why: 'another key' },
    { line: '', ms: 0, why: 'empty' },
    { shown: -5, line: 'speed=   0x', ms: 0, why: 'a negative shown value is 0' },
    { shown: 9000, line: 'frame=1', ms: TOTAL, why: 'a shown value above the total is the total' },
  ];
  for (const row of rows) {
    test(`${row.shown ?? 0} then ${JSON.stringify(row.line)} → ${row.ms} (${row.why})`, () =>
      assert.equal(progressAfter(row.shown ?? 0, row.line, TOTAL, FPS25), row.ms));
  }

  test('rates that are not whole: 29.97 fps is exact and rounded down', () => {
    // 30000 frames at 30000/1001 fps last exactly 1001 s; 1 frame is 33.366… ms.
    assert.equal(progressAfter(0, 'frame=30000', 2_000_000, NTSC), 1_001_000);
    assert.equal(progressAfter(0, 'frame=1', 2_000_000, NTSC), 33);
    assert.equal(progressAfter(0, 'frame=3', 2_000_000, NTSC), 100);
  });

  test('a total of 0: everything is 0', () => {
    assert.equal(progressAfter(0, 'frame=50', 0, FPS25), 0);
    assert.equal(progressAfter(0, 'progress=end', 0, FPS25), 0);
  });

  test('a copy run with -copyts (ffmpeg 5.1, blocks of a real run, two minutes): the frames, not out_time', () => {
    // Some of ffmpeg's blocks (their other keys left out) for a 120 s sequence of four 30 s clips at
    // 25 fps. Its out_time counts from where the output was at its first report above 0 (about
    // 2.2 s here), so it ends 2.1 s short; the frames are the picture written from the output's start.
    const transcript = [
      [0, 0, 'continue'],
      [56, 34589, 'continue'],
      [145, 3597255, 'continue'],
      [254, 7949255, 'continue'],
      [1476, 56823922, 'continue'],
      [2953, 115917255, 'continue'],
      [3000, 117879922, 'end'],
    ] as const;
    const total = 120_000;
    let shown = 0;
    const seen: number[] = [];
    for (const [frames, us, state] of transcript) {
      for (const line of [`frame=${frames}`, 'fps=0.00', 'stream_0_0_q=-1.0', `out_time_us=${us}`, `out_time_ms=${us}`, 'speed=3.57x', `progress=${state}`]) {
        shown = progressAfter(shown, line, total, FPS25);
      }
      seen.push(shown);
    }
    assert.deepEqual(seen, [0, 2240, 5800, 10160, 59040, 118120, total]);
    // Reading out_time the bar would have shown 47.4 % instead of 49.2 % here, and 96.6 % instead
    // of 98.4 % just before the end.
  });
});

describe('isProgressLine', () => {
  // A block of `ffmpeg -nostats -progress pipe:1` as ffmpeg 5.1 writes it (bitrate and speed are padded).
  const block = [
    'frame=90', 'fps=0.00', 'stream_0_0_q=-1.0', 'bitrate= 123.8kbits/s', 'bitrate=N/A', 'total_size=46706',
    'out_time_us=3018594', 'out_time_ms=3018594', 'out_time=00:00:03.018594', 'dup_frames=0', 'drop_frames=0',
    'speed=9.49x', 'speed=   0x', 'speed= 27.4x', 'progress=continue', 'progress=end', 'out_time_us=N/A',
  ];
  for (const line of block) test(`${JSON.stringify(line)} is progress`, () => assert.equal(isProgressLine(line), true));
  const other = [
    '',
    'Error while decoding stream #0:1: Invalid data found when processing input',
    '[aac @ 0x55d0c1a2b3c0] Too many bits 8832 > 6144 per frame requested',
    'Input #0, mov,mp4,m4a,3gp,3g2,mj2, from \'file:/data/blobs/ab.mp4\':',
    '  Stream #0:0(und): Video: h264 (High) (avc1 / 0x31637661), yuv420p, 320x180',
    '=5',
    'Frame=5',
  ];
  for (const line of other) test(`${JSON.stringify(line)} is not progress`, () => assert.equal(isProgressLine(line), false));
});

// ---------------------------------------------------------------- outputProblems

const rate = (num: number, den = 1) => ({ num: BigInt(num), den: BigInt(den) });

const EXPECT: ExpectedOutput = { width: 320, height: 180, fps: rate(25), sampleRate: 48000, videoCodec: 'h264', videoSeconds: 4, seconds: 4 };

function videoOf(more: Partial<VideoStreamInfo> = {}): VideoStreamInfo {
  return {
    index: 0, codec: 'h264', codec_tag: 'avc1', profile: 'High', level: 13, width: 320, height: 180, sar: '1:1', dar: '16:9',
    field_order: 'progressive', pix_fmt: 'yuv420p', time_base: '1/12800', frame_rate: '25/1', avg_frame_rate: '25/1',
    color_range: null, color_space: null, color_transfer: null, color_primaries: null, extradata_hash: 'SHA256:00',
    rotation: 0, duration_s: 4, nb_frames: 100, still: false, ...more,
  };
}
const audioOf = (more: Partial<AudioStreamInfo> = {}): AudioStreamInfo => ({
  index: 1, codec: 'aac', sample_rate: 48000, channels: 2, channel_layout: 'stereo', duration_s: 4, ...more,
});
function probeOf(o: { video?: Partial<VideoStreamInfo> | null; audio?: Partial<AudioStreamInfo> | null; duration?: number | null } = {}): MediaProbe {
  return {
    version: 1,
    format: 'mov,mp4,m4a,3gp,3g2,mj2',
    duration_s: o.duration === undefined ? 4 : o.duration,
    video: o.video === null ? null : videoOf(o.video),
    audio: o.audio === null ? null : audioOf(o.audio),
  };
}

describe('outputProblems: one mismatch, one sentence naming it', () => {
  test('a matching probe: no problems', () => assert.deepEqual(outputProblems(probeOf(), EXPECT), []));

  const rows: { name: string; probe: MediaProbe; expect?: Partial<ExpectedOutput>; sentence: RegExp }[] = [
    { name: 'video codec', probe: probeOf({ video: { codec: 'hevc' } }), sentence: /video codec is hevc, not h264/ },
    { name: 'copy: the sources’ codec is expected', probe: probeOf(), expect: { videoCodec: 'hevc' }, sentence: /video codec is h264, not hevc/ },
    { name: 'frame size', probe: probeOf({ video: { width: 640, height: 360 } }), sentence: /frame size is 640x360, not 320x180/ },
    { name: 'frame height alone', probe: probeOf({ video: { height: 176 } }), sentence: /frame size is 320x176, not 320x180/ },
    { name: 'frame rate 30000/1001 at a 30 fps target', probe: probeOf({ video: { frame_rate: '30000/1001', duration_s: 4.004, nb_frames: 120 } }), expect: { fps: rate(30), videoSeconds: 4.004, seconds: 4.004 }, sentence: /frame rate is 29\.97 fps, not 30 fps/ },
    { name: 'frame rate 30 at a 29.97 target', probe: probeOf({ video: { frame_rate: '30/1' }, duration: 4 }), expect: { fps: rate(30000, 1001), videoSeconds: 4, seconds: 4 }, sentence: /frame rate is 30 fps, not 29\.97 fps/ },
    { name: 'unknown frame rate', probe: probeOf({ video: { frame_rate: '0/0' } }), sentence: /frame rate is unknown fps, not 25 fps/ },
    { name: 'video a frame short (100 → 99 frames at 25 fps)', probe: probeOf({ video: { duration_s: 3.96 } }), sentence: /picture lasts 3\.96 s, not 4 s/ },
    { name: 'video half a second long', probe: probeOf({ video: { duration_s: 4.5 } }), sentence: /picture lasts 4\.5 s, not 4 s/ },
    { name: 'video of unknown length', probe: probeOf({ video: { duration_s: null } }), sentence: /picture lasts an unknown time, not 4 s/ },
    { name: 'no video stream', probe: probeOf({ video: null }), sentence: /no video stream/ },
    { name: 'sound missing', probe: probeOf({ audio: null }), sentence: /no sound stream/ },
    { name: 'sound codec', probe: probeOf({ audio: { codec: 'mp3' } }), sentence: /sound codec is mp3, not aac/ },
    { name: 'sample rate', probe: probeOf({ audio: { sample_rate: 44100 } }), sentence: /sound is at 44100 Hz, not 48000 Hz/ },
    { name: 'sound a frame short', probe: probeOf({ audio: { duration_s: 3.96 } }), sentence: /sound lasts 3\.96 s, not 4 s/ },
    { name: 'sound of unknown length', probe: probeOf({ audio: { duration_s: null } }), sentence: /sound lasts an unknown time, not 4 s/ },
    { name: 'the file a frame long', probe: probeOf({ duration: 4.04 }), sentence: /^it lasts 4\.04 s, not 4 s$/ },
    { name: 'the file of unknown length', probe: probeOf({ duration: null }), sentence: /^it lasts an unknown time, not 4 s$/ },
  ];
  for (const row of rows) {
    test(row.name, () => {
      const problems = outputProblems(row.probe, { ...EXPECT, ...row.expect });
      assert.equal(problems.length, 1, JSON.stringify(problems));
      assert.match(problems[0]!, row.sentence);
    });
  }

  test('frame rates compare as fractions: 60/2 is 30, 50/2 is 25', () => {
    assert.deepEqual(outputProblems(probeOf({ video: { frame_rate: '50/2' } }), EXPECT), []);
    const ntsc = { ...EXPECT, fps: rate(30000, 1001), videoSeconds: 4.004, seconds: 4.004 };
    const probe = probeOf({ video: { frame_rate: '60000/2002', duration_s: 4.004 }, audio: { duration_s: 4.004 }, duration: 4.004 });
    assert.deepEqual(outputProblems(probe, ntsc), []);
  });

  test('several mismatches: one sentence each', () => {
    const problems = outputProblems(probeOf({ video: { codec: 'vp9', width: 640, height: 360 }, audio: { sample_rate: 44100 } }), EXPECT);
    assert.equal(problems.length, 3, JSON.stringify(problems));
  });
});

describe('outputProblems: lengths off by less than a frame are fine', () => {
  const rows: { name: string; probe: MediaProbe }[] = [
    { name: 'picture half a frame short', probe: probeOf({ video: { duration_s: 3.98 } }) },
    { name: 'picture just under a frame long', probe: probeOf({ video: { duration_s: 4.039 } }) },
    { name: 'sound one AAC frame long (1024 samples, 21.3 ms)', probe: probeOf({ audio: { duration_s: 4.021333 }, duration: 4.021333 }) },
    { name: 'sound just under a frame short', probe: probeOf({ audio: { duration_s: 3.961 } }) },
    { name: 'the container rounded', probe: probeOf({ duration: 4.000023 }) },
  ];
  for (const row of rows) test(row.name, () => assert.deepEqual(outputProblems(row.probe, EXPECT), []));
});

/**
 * A picture one whole frame short or long is a problem at every rate: the
 * sequence lost or gained a frame. The probe's length as ffprobe writes it
 * (6 decimals, as the media module reads it) and as the exact double.
 */
describe('outputProblems: a picture one frame off is a problem at every rate', () => {
  const FRAMES = 90;
  const fpsRows: [number, number][] = [[25, 1], [30, 1], [30000, 1001], [24, 1], [24000, 1001], [60, 1], [60000, 1001]];
  for (const [num, den] of fpsRows) {
    const fps = rate(num, den);
    const seconds = (FRAMES * den) / num;
    const expect: ExpectedOutput = { ...EXPECT, fps, videoSeconds: seconds, seconds };
    for (const off of [-1, 1]) {
      for (const form of ['ffprobe', 'exact'] as const) {
        const exact = ((FRAMES + off) * den) / num;
        const length = form === 'ffprobe' ? Number(exact.toFixed(6)) : exact;
        test(`${num}/${den} fps: ${FRAMES + off} frames for ${FRAMES} (${form}: ${length} s for ${seconds} s)`, () => {
          const probe = probeOf({ video: { frame_rate: `${num}/${den}`, duration_s: length }, audio: { duration_s: seconds }, duration: seconds });
          const problems = outputProblems(probe, expect);
          assert.equal(problems.length, 1, `one problem, got ${JSON.stringify(problems)}`);
          assert.match(problems[0]!, /picture lasts/);
        });
      }
    }
  }
});
