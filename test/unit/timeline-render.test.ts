import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { MediaProbe, VideoStreamInfo } from '../../service/media/types';
import { buildDocument, type AssetFacts, type TimelineDoc } from '../../service/timeline/document';
import {
  AAC_SAMPLE_RATES,
  concatQuote,
  convertUnits,
  decimalSeconds,
  fitScale,
  planRender,
  type RenderPlan,
  type RenderSource,
} from '../../service/timeline/render';
import type { Clip, Target, Tracks, TracksIn } from '../../service/timeline/schema';
import { frameRate, sampleRate, toSeconds, type Rate } from '../../service/timeline/snap';
import { propSeed, rng, type Rng } from '../helpers/prng';

/**
 * The ffmpeg invocation of an export (service/timeline/render.ts) on
 * synthetic sources: the helpers' exact arithmetic, the copy path's concat
 * list, the conform path's filter graph (whole frames and samples, gaps,
 * crossfades, layers, sound), the argument array, and a seeded property:
 * every track of the graph adds up to the sequence's length.
 */

const r = (num: number, den = 1): Rate => ({ num: BigInt(num), den: BigInt(den) });
const NTSC30 = r(30000, 1001);
const NTSC24 = r(24000, 1001);

// ---------------------------------------------------------------- helpers

describe('concatQuote', () => {
  const rows: { name: string; text: string; quoted: string }[] = [
    { name: 'plain', text: '/data/blobs/ab/cd.mp4', quoted: "'/data/blobs/ab/cd.mp4'" },
    { name: 'spaces', text: '/my media/a clip.mp4', quoted: "'/my media/a clip.mp4'" },
    { name: 'a single quote', text: "/media/it's.mp4", quoted: "'/media/it'\\''s.mp4'" },
    { name: 'two single quotes in a row', text: "a''b", quoted: "'a'\\'''\\''b'" },
    { name: 'only a quote', text: "'", quoted: "''\\'''" },
    { name: 'unicode', text: '/médias/été 🎬 映像.mp4', quoted: "'/médias/été 🎬 映像.mp4'" },
    { name: 'shell and ffmpeg specials stay literal', text: '/m/$(x) `y` "z" \\ # ; %d.mp4', quoted: "'/m/$(x) `y` \"z\" \\ # ; %d.mp4'" },
    { name: 'empty', text: '', quoted: "''" },
  ];
  for (const row of rows) {
    test(row.name, () => assert.equal(concatQuote(row.text), row.quoted));
  }
  for (const [name, text] of [['a newline', '/m/a\nb.mp4'], ['a carriage return', '/m/a\rb.mp4'], ['a NUL', '/m/a\0b.mp4']] as const) {
    test(`${name} is refused`, () => assert.throws(() => concatQuote(text), RangeError));
  }
});

describe('decimalSeconds', () => {
  const rows: { units: number | bigint; rate: Rate; text: string }[] = [
    { units: 0, rate: r(30), text: '0.000000' },
    { units: 1, rate: r(30), text: '0.033333' },
    { units: 2, rate: r(30), text: '0.066667' },
    { units: 30, rate: r(30), text: '1.000000' },
    { units: 1, rate: r(25), text: '0.040000' },
    { units: 3, rate: r(25), text: '0.120000' },
    { units: 2_499_975, rate: r(25), text: '99999.000000' },
    { units: 1, rate: NTSC30, text: '0.033367' },
    { units: 30, rate: NTSC30, text: '1.001000' },
    { units: 1000, rate: NTSC30, text: '33.366667' },
    { units: 1, rate: NTSC24, text: '0.041708' },
    { units: 5, rate: NTSC24, text: '0.208542' },
    { units: 24, rate: NTSC24, text: '1.001000' },
    { units: 1, rate: r(48000), text: '0.000021' },
    // 62.5 µs: half up.
    { units: 3, rate: r(48000), text: '0.000063' },
    { units: 48000, rate: r(48000), text: '1.000000' },
    { units: 1, rate: r(44100), text: '0.000023' },
    { units: 441, rate: r(44100), text: '0.010000' },
    { units: 1, rate: r(2_000_000), text: '0.000001' },
    { units: 1, rate: r(2_000_001), text: '0.000000' },
    { units: 5n, rate: r(25), text: '0.200000' },
    // No exponent, however small or large the value (String(1e21) is "1e+21").
    { units: 1, rate: r(1_000_000_000_000), text: '0.000000' },
    { units: 1e21, rate: r(1), text: '1000000000000000000000.000000' },
    { units: 1, rate: r(1, 10_000_000), text: '10000000.000000' },
  ];
  for (const row of rows) {
    test(`${row.units} at ${row.rate.num}/${row.rate.den} → ${row.text}`, () => {
      const text = decimalSeconds(row.units, row.rate);
      assert.equal(text, row.text);
      assert.match(text, /^\d+\.\d{6}$/);
    });
  }
});

describe('convertUnits', () => {
  const rows: { units: number; from: Rate; to: Rate; expect: number; why: string }[] = [
    { units: 0, from: NTSC30, to: r(48000), expect: 0, why: 'zero' },
    { units: 1, from: NTSC30, to: r(48000), expect: 1602, why: '1601.6 rounds up' },
    { units: 2, from: NTSC30, to: r(48000), expect: 3203, why: '3203.2 rounds down' },
    { units: 5, from: NTSC30, to: r(48000), expect: 8008, why: 'exact' },
    { units: 30, from: NTSC30, to: r(48000), expect: 48048, why: '1.001 s' },
    { units: 1, from: NTSC30, to: r(44100), expect: 1471, why: '1471.47' },
    { units: 1, from: NTSC24, to: r(48000), expect: 2002, why: 'exact' },
    { units: 1, from: NTSC24, to: r(44100), expect: 1839, why: '1839.3375' },
    { units: 1, from: r(24), to: r(44100), expect: 1838, why: '1837.5: half up' },
    { units: 3, from: r(24), to: r(44100), expect: 5513, why: '5512.5: half up' },
    { units: 735, from: r(44100), to: r(30), expect: 1, why: 'half a frame: up' },
    { units: 734, from: r(44100), to: r(30), expect: 0, why: 'just under half a frame' },
    { units: 1602, from: r(48000), to: NTSC30, expect: 1, why: 'back from samples' },
    { units: 10_799_989, from: NTSC30, to: r(192000), expect: 69_189_049_530, why: 'about 100 hours at 192 kHz, exact in integers (…529.6 up)' },
  ];
  for (const row of rows) {
    test(`${row.units} at ${row.from.num}/${row.from.den} → ${row.to.num}/${row.to.den}: ${row.expect} (${row.why})`, () => {
      assert.equal(convertUnits(row.units, row.from, row.to), row.expect);
    });
  }
});

test('AAC_SAMPLE_RATES: the 13 sampling frequencies of ISO/IEC 14496-3', () => {
  assert.deepEqual([...AAC_SAMPLE_RATES].sort((a, b) => a - b), [7350, 8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000]);
  assert.ok(!AAC_SAMPLE_RATES.includes(192000));
});

// ---------------------------------------------------------------- sources and plans

const TARGET: Target = { sample_rate: 48000, fps: 25, width: 320, height: 180 };
const OUTPUT = '/data/tmp/out put.mp4';
const LIST = '/data/tmp/render 1.ffconcat';
const GRAPH = '/data/tmp/render 1.graph';

function stream(more: Partial<VideoStreamInfo> = {}): VideoStreamInfo {
  return {
    index: 0, codec: 'h264', codec_tag: 'avc1', profile: 'High', level: 12, width: 320, height: 180, sar: '1:1', dar: '16:9',
    field_order: 'progressive', pix_fmt: 'yuv420p', time_base: '1/12800', frame_rate: '25/1', avg_frame_rate: '25/1',
    color_range: 'tv', color_space: 'bt709', color_transfer: 'bt709', color_primaries: 'bt709', extradata_hash: 'SHA256:d4cb019f',
    rotation: 0, duration_s: 100_000, nb_frames: 2_500_000, still: false, ...more,
  };
}

const AUDIO = { index: 1, codec: 'aac', sample_rate: 48000, channels: 2, channel_layout: 'stereo', duration_s: 100_000 };

function video(file: string, o: { sound?: boolean; more?: Partial<VideoStreamInfo> } = {}): RenderSource {
  const probe: MediaProbe = { version: 1, format: 'mov,mp4,m4a,3gp,3g2,mj2', duration_s: 100_000, video: stream(o.more), audio: o.sound === false ? null : AUDIO };
  return { kind: 'video', file, mime: 'video/mp4', probe };
}
const image = (file: string, mime = 'image/png'): RenderSource => ({ kind: 'image', file, mime, probe: null });
const sound = (file: string): RenderSource => ({
  kind: 'audio', file, mime: 'audio/wav', probe: { version: 1, format: 'wav', duration_s: 100_000, video: null, audio: { ...AUDIO, index: 0, codec: 'pcm_s16le' } },
});

const at = (asset_id: string, start: number, duration: number, more: Partial<Clip> = {}): Clip => ({ asset_id, start, in: 0, duration, ...more });
const fade = (duration: number) => ({ transition: { kind: 'crossfade' as const, duration } });

const SOURCES: Record<string, RenderSource> = {
  a: video('/media/a.mp4'),
  b: video('/media/b.mp4'),
  c: video('/media/c.mp4'),
  mute: video('/media/mute.mp4', { sound: false }),
  mute2: video('/media/mute2.mp4', { sound: false }),
  hevc: video('/media/hevc.mp4', { more: { codec: 'hevc', codec_tag: 'hvc1' } }),
  png: image('/media/p.png'),
  jpg: image('/media/j.jpg', 'image/jpeg'),
  webp: image('/media/w.webp', 'image/webp'),
  odd: image('/media/o.xyz', 'image/x-unknown'),
  still: video('/media/still.png', { sound: false, more: { codec: 'png', still: true } }),
  s: sound('/media/s.wav'),
  t: sound('/media/t.wav'),
  quote: video("/media/it's a clip.mp4"),
};

function render(tracks: Tracks, o: { path?: 'copy' | 'conform'; target?: Target; sources?: Record<string, RenderSource> } = {}): RenderPlan {
  const doc: TimelineDoc = { name: 'seq', target: o.target ?? TARGET, tracks };
  const sources = o.sources ?? SOURCES;
  return planRender({
    doc,
    path: o.path ?? 'conform',
    output: OUTPUT,
    listFile: LIST,
    graphFile: GRAPH,
    sourceOf(id) {
      const s = sources[id];
      if (!s) throw new Error(`no source for ${id}`);
      return s;
    },
  });
}

const graphOf = (plan: RenderPlan) => plan.files.find((f) => f.path === GRAPH)!.text;
const listOf = (plan: RenderPlan) => plan.files.find((f) => f.path === LIST)?.text;

interface Input {
  opts: string[];
  file: string;
}

/** The inputs of an argument array: the options before each `-i`, and its file. */
function inputsOf(args: string[]): Input[] {
  let i = args.indexOf('pipe:1') + 1;
  if (args[i] === '-copyts') i++;
  const inputs: Input[] = [];
  let opts: string[] = [];
  for (; i < args.length && args[i] !== '-filter_complex_script'; i++) {
    if (args[i] === '-i') {
      inputs.push({ opts, file: args[++i]! });
      opts = [];
    } else {
      opts.push(args[i]!);
    }
  }
  assert.deepEqual(opts, [], 'no options after the last input');
  return inputs;
}

const optValue = (input: Input, flag: string): string | undefined => {
  const i = input.opts.indexOf(flag);
  return i === -1 ? undefined : input.opts[i + 1];
};

interface Stmt {
  ins: string[];
  /** The filters, split at unescaped commas (an expression's own commas are written `\,`). */
  chain: string[];
  /** The first output; `outs` has them all (only split has more than one). */
  out: string;
  outs: string[];
  text: string;
}

const labels = (text: string) => [...text.matchAll(/\[([^\]]+)\]/g)].map((x) => x[1]!);

/** One statement per `;\n`: `[in][in]filter,filter[out]` (`[in]split[out][out]`). */
function statements(graph: string): Stmt[] {
  assert.ok(graph.endsWith('\n'));
  return graph
    .trimEnd()
    .split(';\n')
    .map((text) => {
      const m = /^((?:\[[^\]]+\])*)([^[\]]+)((?:\[[^\]]+\])+)$/.exec(text);
      assert.ok(m, `a statement of the form [in]filters[out]: ${text}`);
      const outs = labels(m[3]!);
      assert.ok(outs.length === 1 || m[2] === 'split' || m[2] === 'asplit', `only split has more than one output: ${text}`);
      return { ins: labels(m[1]!), chain: m[2]!.split(/(?<!\\),/), out: outs[0]!, outs, text };
    });
}

/** The statement that reads input `index`'s `v` or `a` stream. */
function readerOf(graph: string, index: number, kind: 'v' | 'a'): Stmt {
  const found = statements(graph).filter((s) => s.ins.includes(`${index}:${kind}:0`));
  assert.equal(found.length, 1, `one reader of ${index}:${kind}:0`);
  return found[0]!;
}

const param = (s: Stmt, re: RegExp): number => {
  const m = re.exec(s.text);
  assert.ok(m, `${re} in ${s.text}`);
  return Number(m[1]);
};
const trimFrames = (s: Stmt) => param(s, /trim=end_frame=(\d+)/);
const trimSamples = (s: Stmt) => param(s, /atrim=end_sample=(\d+)/);

/** Whole units at `rate` of a `S.ffffff` decimal (half up), exactly. */
function unitsOf(text: string, rate: Rate): number {
  const m = /^(\d+)\.(\d{6})$/.exec(text);
  assert.ok(m, `a plain 6-place decimal: ${text}`);
  const micro = BigInt(m[1]!) * 1_000_000n + BigInt(m[2]!);
  const c = 1_000_000n * rate.den;
  return Number((2n * micro * rate.num + c) / (2n * c));
}

/** Every number written into a graph or a list is a plain integer or decimal: no exponent, no decimal comma. */
function assertPlainNumbers(text: string): void {
  assert.doesNotMatch(text, /\d[eE][+-]?\d/, 'no exponent');
  assert.doesNotMatch(text, /\d,\d/, 'no decimal comma');
  for (const m of text.matchAll(/(?:duration|offset)[= ](\d[^:,\n[]*)/g)) assert.match(m[1]!, /^\d+\.\d{6}$/, `times are written with 6 places: ${m[0]}`);
}

/** Arguments are separate strings: no element holds a flag and its value, paths are passed whole. */
function assertArgv(args: string[]): void {
  for (const a of args) {
    assert.equal(typeof a, 'string');
    assert.doesNotMatch(a, /^-\S*\s/, `a flag joined with its value: ${JSON.stringify(a)}`);
  }
  for (const flag of ['-ss', '-t']) {
    args.forEach((a, i) => {
      if (a === flag) assert.match(args[i + 1]!, /^\d+\.\d{6}$/, `${flag} ${args[i + 1]}`);
    });
  }
  assert.deepEqual(args.slice(-5), ['-movflags', '+faststart', '-f', 'mp4', `file:${OUTPUT}`]);
  assert.equal(args.indexOf('-filter_complex_script') + 1, args.indexOf(GRAPH));
}

// ---------------------------------------------------------------- copy

describe('planRender: copy', () => {
  test('V1 joined by the concat demuxer and stream-copied; the list names each file, inpoint 0 and its length', () => {
    const plan = render({ V1: [at('a', 0, 1), at('b', 1, 1.2), at('a', 2.2, 1)] }, { path: 'copy' });
    const args = plan.args;
    assertArgv(args);
    const inputs = inputsOf(args);
    assert.deepEqual(inputs[0], { opts: ['-f', 'concat', '-safe', '0'], file: `file:${LIST}` });
    assert.ok(args.includes('-copyts'));
    assert.ok(args.indexOf('-copyts') < args.indexOf('-i'), '-copyts is a global option, before the inputs');
    assert.deepEqual(args.slice(args.indexOf('-c:v'), args.indexOf('-c:v') + 2), ['-c:v', 'copy']);
    assert.ok(!args.includes('libx264') && !args.includes('-r') && !args.includes('-pix_fmt'));
    assert.deepEqual(args.slice(args.indexOf('-map'), args.indexOf('-map') + 2), ['-map', '0:v:0']);
    assert.equal(
      listOf(plan),
      [
        'ffconcat version 1.0',
        "file '/media/a.mp4'", 'inpoint 0', 'duration 1.000000',
        "file '/media/b.mp4'", 'inpoint 0', 'duration 1.200000',
        "file '/media/a.mp4'", 'inpoint 0', 'duration 1.000000',
      ].join('\n') + '\n',
    );
    assert.deepEqual(plan.files.map((f) => f.path).sort(), [GRAPH, LIST].sort());
    // Each clip's own sound, sample-exact, from an input without its picture.
    assert.deepEqual(inputs.slice(1).map((i) => [i.opts.includes('-vn'), i.file]), [
      [true, 'file:/media/a.mp4'], [true, 'file:/media/b.mp4'], [true, 'file:/media/a.mp4'],
    ]);
    const graph = graphOf(plan);
    assert.deepEqual([1, 2, 3].map((i) => trimSamples(readerOf(graph, i, 'a'))), [48000, 57600, 48000]);
    assert.doesNotMatch(graph, /:v:0|blend|split|overlay|color=/, 'no picture in the graph');
    assertPlainNumbers(graph);
    assertPlainNumbers(listOf(plan)!);
    assert.equal(plan.durationMs, 3200);
    assert.deepEqual(plan.expect, { width: 320, height: 180, fps: r(25), sampleRate: 48000, videoCodec: 'h264', videoSeconds: 3.2, seconds: 3.2 });
  });

  test('the expected codec is the sources’ own (hevc stays hevc)', () => {
    const plan = render({ V1: [at('hevc', 0, 1), at('hevc', 1, 1)] }, { path: 'copy' });
    assert.equal(plan.expect.videoCodec, 'hevc');
  });

  test('a path with a quote and spaces: quoted in the list, passed whole as an argument', () => {
    const plan = render({ V1: [at('quote', 0, 1)] }, { path: 'copy' });
    assert.match(listOf(plan)!, /^file '\/media\/it'\\''s a clip\.mp4'$/m);
    assert.ok(plan.args.includes("file:/media/it's a clip.mp4"));
    assertArgv(plan.args);
  });

  test('a path with a line break cannot go into a concat list', () => {
    const sources = { ...SOURCES, nl: video('/media/a\nb.mp4') };
    assert.throws(() => render({ V1: [at('nl', 0, 1)] }, { path: 'copy', sources }), RangeError);
  });

  test('29.97: list durations are the clips’ frame counts over 30000/1001', () => {
    const plan = render({ V1: [at('a', 0, 1.001), at('b', 1.001, 0.033367)] }, { path: 'copy', target: { ...TARGET, fps: 29.97 } });
    assert.match(listOf(plan)!, /duration 1\.001000\n.*\ninpoint 0\nduration 0\.033367\n$/);
    assert.equal(plan.expect.videoSeconds, 31 * 1001 / 30000);
  });

  test('sound that runs on past V1 by less than half a frame (a copy plan) does not lengthen the expected picture', () => {
    // planExport keeps this sequence on the copy path (sound ending within half a frame of the
    // video is not a reason), and the concat copy holds exactly V1's 50 frames. Expecting 51 frames
    // (the sound's end rounded up to a frame) fails outputProblems on a correct file: 'its picture
    // lasts 2 s, not 2.04 s'.
    const plan = render({ V1: [at('a', 0, 1), at('b', 1, 1)], A1: [at('s', 0, 2.019)] }, { path: 'copy' });
    assert.equal(plan.expect.videoSeconds, 2, 'the picture the concat demuxer copies: 50 frames');
    assert.ok(Math.abs(plan.expect.seconds - 2.019) < 0.04, `the sequence lasts 2.019 s, within a frame: ${plan.expect.seconds}`);
  });
});

// ---------------------------------------------------------------- conform

describe('planRender: conform inputs', () => {
  test('one input per clip; -ss only when in > 0; -t at least the clip', () => {
    const plan = render({ V1: [at('a', 0, 2), at('b', 2, 2, { in: 1 })], A1: [at('s', 0.5, 1, { in: 0.25 })] });
    assertArgv(plan.args);
    const inputs = inputsOf(plan.args);
    assert.deepEqual(inputs.map((i) => i.file), ['file:/media/a.mp4', 'file:/media/b.mp4', 'file:/media/s.wav']);
    assert.equal(optValue(inputs[0]!, '-ss'), undefined);
    assert.equal(optValue(inputs[1]!, '-ss'), '1.000000');
    assert.equal(optValue(inputs[2]!, '-ss'), '0.250000');
    assert.ok(unitsOf(optValue(inputs[0]!, '-t')!, r(25)) >= 50);
    assert.ok(unitsOf(optValue(inputs[1]!, '-t')!, r(25)) >= 50);
    assert.ok(unitsOf(optValue(inputs[2]!, '-t')!, r(48000)) >= 48000);
    assert.ok(inputs[2]!.opts.includes('-vn'), 'an A clip is read without picture');
    assert.ok(!inputs[0]!.opts.includes('-vn') && !inputs[1]!.opts.includes('-vn'));
    assert.ok(!plan.args.includes('-copyts'));
    assert.deepEqual(plan.args.slice(plan.args.indexOf('-c:v'), plan.args.indexOf('-c:v') + 2), ['-c:v', 'libx264']);
    assert.deepEqual(plan.args.slice(plan.args.indexOf('-r'), plan.args.indexOf('-r') + 2), ['-r', '25/1']);
    assert.deepEqual(plan.args.slice(plan.args.indexOf('-ar'), plan.args.indexOf('-ar') + 2), ['-ar', '48000']);
    assert.equal(listOf(plan), undefined, 'no concat list on the conform path');
  });

  test('a clip used twice is two inputs (each seeked to its own in)', () => {
    const inputs = inputsOf(render({ V1: [at('a', 0, 1), at('a', 1, 1, { in: 3 })] }).args);
    assert.deepEqual(inputs.map((i) => [optValue(i, '-ss'), i.file]), [[undefined, 'file:/media/a.mp4'], ['3.000000', 'file:/media/a.mp4']]);
  });

  const imageRows: { id: string; opts: string[] }[] = [
    { id: 'png', opts: ['-f', 'image2', '-pattern_type', 'none', '-c:v', 'png'] },
    { id: 'jpg', opts: ['-f', 'image2', '-pattern_type', 'none', '-c:v', 'mjpeg'] },
    { id: 'webp', opts: ['-f', 'image2', '-pattern_type', 'none', '-c:v', 'webp'] },
    { id: 'odd', opts: ['-f', 'image2', '-pattern_type', 'none'] },
    { id: 'still', opts: [] },
  ];
  for (const row of imageRows) {
    test(`a still (${row.id}): ${row.opts.join(' ') || 'no options'}, no -ss or -t; looped to its frame count`, () => {
      const plan = render({ V1: [at(row.id, 0, 5)] });
      const inputs = inputsOf(plan.args);
      assert.deepEqual(inputs, [{ opts: row.opts, file: `file:${SOURCES[row.id]!.file}` }]);
      const reader = readerOf(graphOf(plan), 0, 'v');
      // One frame more than the 125 (ffmpeg 4.1's fps drops the last), then cut to 125.
      assert.match(reader.text, /loop=loop=125:size=1:start=0/);
      assert.equal(trimFrames(reader), 125);
      assert.doesNotMatch(graphOf(plan), /0:a:0/, 'an image has no sound');
    });
  }
});

describe('planRender: conform graph', () => {
  test('trims are whole frames and samples', () => {
    const plan = render({ V1: [at('a', 0, 2), at('b', 2, 0.04)], A1: [at('s', 0, 0.000021)] });
    const graph = graphOf(plan);
    assert.equal(trimFrames(readerOf(graph, 0, 'v')), 50);
    assert.equal(trimFrames(readerOf(graph, 1, 'v')), 1);
    assert.equal(trimSamples(readerOf(graph, 0, 'a')), 96000);
    assert.equal(trimSamples(readerOf(graph, 1, 'a')), 1920);
    assert.equal(trimSamples(readerOf(graph, 2, 'a')), 1);
    assert.match(readerOf(graph, 0, 'v').text, /fps=25\/1/);
    assert.ok(readerOf(graph, 0, 'v').chain.includes(fitScale(320, 180)), 'fitted by the even-size scale');
    assert.equal(fitScale(320, 180), 'scale=w=trunc(min(320\\,round(180*iw/ih/2)*2)/2)*2:h=trunc(min(180\\,round(320*ih/iw/2)*2)/2)*2:flags=bicubic');
    assert.match(readerOf(graph, 0, 'v').text, /pad=320:180:/);
    assert.match(readerOf(graph, 0, 'a').text, /aresample=48000/);
    assertPlainNumbers(graph);
  });

  test('gaps: black pieces of the gap’s frames on V1, silence of its samples', () => {
    const plan = render({ V1: [at('a', 1, 1)], A1: [at('s', 0, 3)] });
    const graph = graphOf(plan);
    const black = statements(graph).filter((s) => s.text.startsWith('color='));
    assert.deepEqual(black.map(trimFrames), [25, 25], 'before the clip, and after it to the end of A1');
    for (const s of black) {
      assert.match(s.text, /^color=c=black:s=320x180:r=25\/1,format=yuv420p,/);
      assert.doesNotMatch(s.text, /@/);
    }
    const silence = statements(graph).filter((s) => s.text.startsWith('anullsrc'));
    assert.deepEqual(silence.map(trimSamples), [48000, 48000], 'the V1 clip’s sound track: before and after');
    for (const s of silence) assert.match(s.chain.join(','), /^anullsrc=r=48000:cl=stereo,atrim=end_sample=\d+$/);
    assert.equal(trimSamples(readerOf(graph, 1, 'a')), 144000);
    assert.equal(plan.durationMs, 3000);
    assert.deepEqual(plan.expect, { width: 320, height: 180, fps: r(25), sampleRate: 48000, videoCodec: 'h264', videoSeconds: 3, seconds: 3 });
  });

  test('gaps at 29.97 fps: frames of 30000/1001, silence of the converted samples', () => {
    const plan = render({ V1: [at('a', 1.001, 1.001)] }, { target: { ...TARGET, fps: 29.97 } });
    const graph = graphOf(plan);
    const black = statements(graph).filter((s) => s.text.startsWith('color='));
    assert.deepEqual(black.map(trimFrames), [30]);
    assert.match(black[0]!.text, /r=30000\/1001/);
    const silence = statements(graph).filter((s) => s.text.startsWith('anullsrc'));
    assert.deepEqual(silence.map(trimSamples), [48048]);
    assert.equal(trimSamples(readerOf(graph, 0, 'a')), 48048);
    assert.equal(plan.durationMs, 2002);
    assert.equal(plan.expect.videoSeconds, 60 * 1001 / 30000);
  });

  test('a crossfade: a blend of the last d frames before it and the first d of the clip, after the previous clips’ length; the previous clip reads and runs d longer', () => {
    const plain = render({ V1: [at('a', 1, 2), at('b', 3, 2)] });
    const faded = render({ V1: [at('a', 1, 2), at('b', 3, 2, fade(0.4))] });
    const graph = graphOf(faded);
    const fadeOf = crossfadeOf(graph);
    assert.equal(fadeOf.length, 1);
    assert.deepEqual(fadeOf[0], { offset: 75, d: 10, by: 'overlay' }, 'offset: the gap and clip a, 75 frames');
    // Frame k of 10 is (10 − k)/10 of the one before, k/10 of the clip: its alpha, from 0 at the first.
    assert.match(graph, /\]format=yuva420p,fade=t=in:s=0:n=10:alpha=1\[/);
    // d = 10 frames longer: the input's -t and its trim.
    const tPlain = unitsOf(optValue(inputsOf(plain.args)[0]!, '-t')!, r(25));
    const tFaded = unitsOf(optValue(inputsOf(faded.args)[0]!, '-t')!, r(25));
    assert.equal(tFaded - tPlain, 10);
    assert.equal(trimFrames(readerOf(graphOf(plain), 0, 'v')), 50);
    assert.equal(trimFrames(readerOf(graph, 0, 'v')), 60);
    assert.equal(trimFrames(readerOf(graph, 1, 'v')), 50);
    assert.equal(optValue(inputsOf(faded.args)[1]!, '-t'), optValue(inputsOf(plain.args)[1]!, '-t'), 'the next clip reads as before');
    // Sound: the same overlap in samples.
    assert.equal(trimSamples(readerOf(graph, 0, 'a')), 96000 + 19200);
    assert.equal(trimSamples(readerOf(graph, 1, 'a')), 96000);
    assert.deepEqual(soundCrossfadeOf(graph), [{ offset: 144000, d: 19200 }], 'the gap and clip a’s sound, 3 s; 0.4 s of fade');
    assert.equal(faded.durationMs, 5000);
    assert.equal(faded.expect.videoSeconds, 5);
  });

  test('a crossfade at 29.97: 3 frames, 4805 samples', () => {
    const t = { ...TARGET, fps: 29.97 };
    const plan = render({ V1: [at('a', 0, 1.001), at('b', 1.001, 1.001, fade(0.1001))] }, { target: t });
    const graph = graphOf(plan);
    assert.deepEqual(crossfadeOf(graph), [{ offset: 30, d: 3, by: 'overlay' }]);
    assert.equal(trimFrames(readerOf(graph, 0, 'v')), 33);
    // 33 frames = 52852.8 → 52853 samples; the fade is 52853 − 48048.
    assert.equal(trimSamples(readerOf(graph, 0, 'a')), 52853);
    assert.deepEqual(soundCrossfadeOf(graph), [{ offset: 48048, d: 4805 }]);
  });

  test('a crossfade from an image: the image loops d frames longer', () => {
    const graph = graphOf(render({ V1: [at('png', 0, 1), at('a', 1, 1, fade(0.2))] }));
    const reader = readerOf(graph, 0, 'v');
    assert.equal(trimFrames(reader), 30);
    assert.match(reader.text, /loop=loop=30:/);
    // The image has no sound: silence runs on under the fade.
    const silence = statements(graph).filter((s) => s.text.startsWith('anullsrc'));
    assert.deepEqual(silence.map(trimSamples), [57600]);
    assert.deepEqual(soundCrossfadeOf(graph), [{ offset: 48000, d: 9600 }]);
  });

  test('V2 is laid over V1, with transparent gaps (black@0.0, yuva420p)', () => {
    const plan = render({ V1: [at('a', 0, 2)], V2: [at('mute', 0.4, 1)] });
    const graph = graphOf(plan);
    const v2 = readerOf(graph, 1, 'v');
    assert.match(v2.text, /color=black@0\.0/);
    assert.match(v2.text, /format=yuva420p/);
    assert.equal(trimFrames(v2), 25);
    const gaps = statements(graph).filter((s) => s.text.startsWith('color='));
    assert.deepEqual(gaps.map(trimFrames), [10, 15]);
    for (const g of gaps) assert.match(g.text, /^color=c=black@0\.0:s=320x180:r=25\/1,format=yuva420p,/);
    const over = statements(graph).filter((s) => s.text.includes('overlay='));
    assert.equal(over.length, 1);
    // V1 (base) first, V2 on top.
    const base = statements(graph).find((s) => s.out === over[0]!.ins[0]);
    assert.deepEqual(base, readerOf(graph, 0, 'v'));
    const vout = statements(graph).find((s) => s.ins[0] === over[0]!.out)!;
    assert.match(vout.text, /format=yuv420p/);
    assert.ok(plan.args.includes(`[${vout.out}]`));
    assert.doesNotMatch(readerOf(graph, 0, 'v').text, /@0\.0|yuva/, 'V1 stays opaque');
  });

  test('a crossfade above V1: a blend of every plane (alpha too), k/d from the timestamp at the target’s rate', () => {
    const graph = graphOf(render({ V1: [at('a', 0, 3)], V2: [at('mute', 0, 1), at('b', 1, 1, fade(0.2))] }, { target: { ...TARGET, fps: 29.97 } }));
    // mute runs on 6 frames: 30 + 6, the fade after its 30.
    assert.deepEqual(crossfadeOf(graph), [{ offset: 30, d: 6, by: 'blend' }]);
    assert.match(graph, /\]blend=all_expr=A\+\(B-A\)\*T\*30000\/1001\/6\[/);
    assert.equal(statements(graph).filter(isLayer).length, 1, 'one overlay: V2 on V1');
  });

  test('V1, V2, V3: two overlays, in track order', () => {
    const graph = graphOf(render({ V3: [at('mute', 0, 1)], V1: [at('a', 0, 1)], V2: [at('b', 0, 1)] }));
    const over = statements(graph).filter((s) => s.text.includes('overlay='));
    assert.equal(over.length, 2);
    const byOut = new Map(statements(graph).map((s) => [s.out, s]));
    assert.deepEqual(byOut.get(over[0]!.ins[0]!), readerOf(graph, 0, 'v'));
    assert.deepEqual(byOut.get(over[0]!.ins[1]!), readerOf(graph, 1, 'v'));
    assert.equal(over[1]!.ins[0], over[0]!.out);
    assert.deepEqual(byOut.get(over[1]!.ins[1]!), readerOf(graph, 2, 'v'));
  });

  test('two A tracks (V1 silent): amix of 2 without level scaling', () => {
    const plan = render({ V1: [at('mute', 0, 2)], A1: [at('s', 0, 2)], A2: [at('t', 0.5, 1.5)] });
    const graph = graphOf(plan);
    const mix = statements(graph).filter((s) => s.text.includes('amix'));
    assert.equal(mix.length, 1);
    // amix divides by its input count; volume multiplies it back: a plain sum.
    assert.match(mix[0]!.text, /amix=inputs=2:duration=longest,volume=2\[/);
    assert.ok(plan.args.includes(`[${mix[0]!.out}]`));
  });

  test('V1 sound and two A tracks: amix of 3', () => {
    const graph = graphOf(render({ V1: [at('a', 0, 2)], A1: [at('s', 0, 2)], A2: [at('t', 0, 2)] }));
    assert.match(graph, /amix=inputs=3:duration=longest,volume=3\[/);
  });

  const silentRows: { name: string; fps: number; sr: number; tracks: Tracks; samples: number; ms: number }[] = [
    { name: '25 fps, 48 kHz', fps: 25, sr: 48000, tracks: { V1: [at('mute', 0, 2)] }, samples: 96000, ms: 2000 },
    { name: '29.97 fps, 44.1 kHz (88288.2 samples)', fps: 29.97, sr: 44100, tracks: { V1: [at('mute', 0, 2.002)] }, samples: 88288, ms: 2002 },
    { name: 'an image and a gap', fps: 25, sr: 48000, tracks: { V1: [at('png', 0, 1), at('mute2', 1.6, 0.4)] }, samples: 96000, ms: 2000 },
  ];
  for (const row of silentRows) {
    test(`a sequence without sound gets one silent track of its length: ${row.name}`, () => {
      const plan = render(row.tracks, { target: { ...TARGET, fps: row.fps, sample_rate: row.sr } });
      const graph = graphOf(plan);
      assert.doesNotMatch(graph, /:a:0|amix|afade/);
      const silence = statements(graph).filter((s) => s.text.startsWith('anullsrc'));
      assert.equal(silence.length, 1);
      assert.equal(silence[0]!.chain.join(','), `anullsrc=r=${row.sr}:cl=stereo,atrim=end_sample=${row.samples}`);
      const audioMap = plan.args[plan.args.lastIndexOf('-map') + 1];
      assert.equal(audioMap, `[${silence[0]!.out}]`);
      assert.equal(plan.durationMs, row.ms);
      assert.equal(plan.expect.sampleRate, row.sr);
    });
  }

  test('expect: sound past the last frame covers one more frame of black on conform', () => {
    const plan = render({ V1: [at('a', 0, 2)], A1: [at('s', 0, 2.019)] });
    const black = statements(graphOf(plan)).filter((s) => s.text.startsWith('color='));
    assert.deepEqual(black.map(trimFrames), [1]);
    assert.deepEqual(plan.expect, { width: 320, height: 180, fps: r(25), sampleRate: 48000, videoCodec: 'h264', videoSeconds: 2.04, seconds: 2.04 });
    assert.equal(plan.durationMs, 2040);
  });

  test('every argument a string, nothing joined, the output last (both paths)', () => {
    for (const path of ['copy', 'conform'] as const) {
      const plan = render({ V1: [at('a', 0, 1), at('quote', 1, 1)], A1: [at('s', 0.3, 1, { in: 0.5 })] }, { path });
      assertArgv(plan.args);
      assert.deepEqual(plan.args.slice(0, 6), ['-hide_banner', '-nostdin', '-y', '-nostats', '-progress', 'pipe:1']);
      assert.ok(plan.args.includes("file:/media/it's a clip.mp4"));
    }
  });
});

describe('planRender: numbers are plain decimals, however small or large', () => {
  test('a clip at 0.000001 s, a sample-sized in, clips and crossfades near 100 000 s', () => {
    const tracks: Tracks = {
      V1: [at('a', 0.000001, 1), at('b', 99998, 1, { in: 12345.6 }), at('c', 99999, 1, { in: 99999, ...fade(0.04) })],
      V2: [at('png', 99999.2, 0.4)],
      A1: [at('s', 0.000001, 0.5, { in: 0.000011 }), at('t', 99999.5, 2, { in: 0.000001 })],
    };
    for (const fps of [25, 29.97, 23.976]) {
      for (const path of ['conform', 'copy'] as const) {
        const plan = render(tracks, { path, target: { ...TARGET, fps } });
        assertArgv(plan.args);
        assertPlainNumbers(graphOf(plan));
        if (path === 'copy') assertPlainNumbers(listOf(plan)!);
        assert.ok(Number.isSafeInteger(plan.durationMs));
        assert.ok(plan.durationMs >= 100_001_000 && plan.durationMs <= 100_001_600, String(plan.durationMs));
      }
    }
    const plan = render(tracks);
    const inputs = inputsOf(plan.args);
    // 0.000001 s rounds to frame 0 (no gap, no seek); 0.000011 s is one sample (20.8 µs).
    assert.equal(optValue(inputs[0]!, '-ss'), undefined);
    assert.equal(inputs.find((i) => i.file === 'file:/media/s.wav')!.opts[1], '0.000021');
    assert.equal(optValue(inputs.find((i) => i.file === 'file:/media/t.wav')!, '-ss'), undefined, '0.000001 s is 0 samples');
    assert.equal(optValue(inputs[1]!, '-ss'), '12345.600000');
    assert.equal(optValue(inputs[2]!, '-ss'), '99999.000000');
    const graph = graphOf(plan);
    assert.deepEqual(crossfadeOf(graph), [{ offset: 2499975, d: 1, by: 'overlay' }]);
    assert.match(graph, /trim=end_frame=2499925\[/, 'the gap from 1 s to 99998 s');
    assert.match(graph, /atrim=end_sample=4799952000\[/, 'silence from 0.5 s to 99999.5 s');
  });
});

// ---------------------------------------------------------------- property

/**
 * Evaluates a graph's lengths (frames or samples) from its text: trims cut,
 * loops and concat add, trims from a start take away, overlay, blend, amerge and amix need
 * equal inputs; a crossfade's blend takes d frames of each side.
 */
function graphLengths(graph: string, fps: Rate, stillInputs: Set<number>) {
  const stmts = statements(graph);
  const byOut = new Map<string, Stmt>();
  for (const s of stmts) {
    for (const out of s.outs) {
      assert.ok(!byOut.has(out), `label ${out} defined once`);
      byOut.set(out, s);
    }
  }
  const uses = new Map<string, number>();
  for (const s of stmts) for (const i of s.ins) uses.set(i, (uses.get(i) ?? 0) + 1);
  for (const [label, n] of uses) assert.equal(n, 1, `label ${label} used once`);
  const memo = new Map<string, number>();
  const lengthOf = (label: string): number => {
    const pad = /^(\d+):[va]:0$/.exec(label);
    if (pad) return stillInputs.has(Number(pad[1])) ? 1 : Infinity;
    const known = memo.get(label);
    if (known !== undefined) return known;
    const s = byOut.get(label);
    assert.ok(s, `label ${label} is defined`);
    const ins = s.ins.map(lengthOf);
    let len: number;
    const head = s.chain[0]!;
    if (head.startsWith('concat=')) {
      assert.equal(Number(/n=(\d+)/.exec(head)![1]), ins.length);
      len = ins.reduce((a, b) => a + b, 0);
    } else if (head.startsWith('blend=')) {
      const m = /^blend=all_expr=A\+\(B-A\)\*T\*(\d+)\/(\d+)\/(\d+)$/.exec(head);
      assert.ok(m, `a crossfade blend: ${s.text}`);
      assert.deepEqual([BigInt(m[1]!), BigInt(m[2]!)], [fps.num, fps.den], `k from the timestamp at the target's rate: ${s.text}`);
      const d = Number(m[3]);
      assert.ok(d >= 1 && ins[0] === d && ins[1] === d, `a blend of ${d} frames of each side (${ins}): ${s.text}`);
      len = d;
    } else if (head.startsWith('overlay=')) {
      assert.equal(ins[1], ins[0], `an upper track as long as the base: ${s.text}`);
      len = ins[0]!;
    } else if (head.startsWith('amerge=')) {
      assert.ok(ins.length === 2 && ins[0] === ins[1], `a sound crossfade sums two pieces of one length: ${ins}`);
      len = ins[0]!;
    } else if (head.startsWith('amix=')) {
      assert.ok(ins.every((l) => l === ins[0]), `sound tracks of one length: ${ins}`);
      len = ins[0]!;
    } else if (head.startsWith('color=') || head.startsWith('anullsrc=')) {
      len = Infinity;
    } else {
      assert.equal(ins.length, 1, s.text);
      len = ins[0]!;
    }
    for (const f of s.chain) {
      const trim = /^a?trim=end_(?:frame|sample)=(\d+)$/.exec(f);
      const from = /^a?trim=start_(?:frame|sample)=(\d+)$/.exec(f);
      if (from) {
        assert.ok(len > Number(from[1]), `frames left after ${from[1]}: ${len} in ${s.text}`);
        len -= Number(from[1]);
      }
      const loop = /^loop=loop=(\d+):/.exec(f);
      const tpad = /^tpad=stop=(\d+):/.exec(f);
      const apad = /^apad=whole_len=(\d+)$/.exec(f);
      if (trim) {
        assert.ok(len >= Number(trim[1]), `enough to trim: ${len} >= ${trim[1]} in ${s.text}`);
        len = Number(trim[1]);
      } else if (loop) len += Number(loop[1]);
      else if (tpad) len += Number(tpad[1]);
      else if (apad) len = Math.max(len, Number(apad[1]));
    }
    memo.set(label, len);
    return len;
  };
  return { stmts, lengthOf };
}

/** An overlay that lays a track over the ones below (not a crossfade's). */
const isLayer = (s: Stmt) => /^overlay=x=0:y=0:eof_action=pass:/.test(s.chain[0]!);

/**
 * Each picture crossfade of a graph, its shape checked: what comes before it
 * is split after `offset` frames (those kept, the rest mixed), what follows
 * is split after d (those mixed, the rest kept), and the parts are joined in
 * that order and renumbered on the target's grid. Without anything before or
 * after the overlap there is no split on that side. The mix is `overlay` on
 * V1 (the incoming frames faded in by alpha over d frames from the first),
 * `blend` above it (every plane mixed by k/d, k from the timestamp).
 */
function crossfadeOf(graph: string): { offset: number; d: number; by: 'overlay' | 'blend' }[] {
  const stmts = statements(graph);
  const byOut = new Map(stmts.flatMap((s) => s.outs.map((o) => [o, s] as const)));
  const byIn = new Map(stmts.flatMap((s) => s.ins.map((i) => [i, s] as const)));
  const splitOf = (label: string, side: 0 | 1): Stmt | null => {
    const split = byOut.get(label);
    if (!split || split.chain[0] !== 'split') return null;
    assert.equal(split.outs.length, 2, split.text);
    assert.equal(split.outs[side], label, `the ${side === 0 ? 'first' : 'second'} output of ${split.text}`);
    return split;
  };
  return stmts
    .filter((s) => s.chain[0]!.startsWith('blend=') || (s.chain[0]!.startsWith('overlay=') && !isLayer(s)))
    .map((mix) => {
      assert.equal(mix.chain.length, 1, mix.text);
      const by = mix.chain[0]!.startsWith('blend=') ? 'blend' : 'overlay';
      let d: number;
      let incoming: string;
      if (by === 'blend') {
        d = Number(/\/(\d+)$/.exec(mix.chain[0]!)![1]);
        incoming = mix.ins[1]!;
      } else {
        assert.equal(mix.chain[0], 'overlay=x=0:y=0:format=yuv420', mix.text);
        const fade = byOut.get(mix.ins[1]!)!;
        const m = /^format=yuva420p,fade=t=in:s=0:n=(\d+):alpha=1$/.exec(fade.chain.join(','));
        assert.ok(m, `the incoming frames faded in by alpha from the first: ${fade.text}`);
        d = Number(m[1]);
        incoming = fade.ins[0]!;
      }
      const parts = [mix.out];
      let offset = 0;
      const tail = byOut.get(mix.ins[0]!);
      const tailFrom = tail ? /^trim=start_frame=(\d+)$/.exec(tail.chain[0]!) : null;
      if (tail && tailFrom) {
        offset = Number(tailFrom[1]);
        assert.deepEqual(tail.chain.slice(1), ['setpts=N'], tail.text);
        const split = splitOf(tail.ins[0]!, 1);
        assert.ok(split, `the mixed frames are the end of a split: ${tail.text}`);
        const kept = byIn.get(split.outs[0]!)!;
        assert.deepEqual(kept.chain, [`trim=end_frame=${offset}`], 'the frames before the overlap');
        parts.unshift(kept.out);
      }
      const head = byOut.get(incoming);
      const split = head && head.chain.length === 1 && head.chain[0] === `trim=end_frame=${d}` ? splitOf(head.ins[0]!, 0) : null;
      if (split) {
        const rest = byIn.get(split.outs[1]!)!;
        assert.deepEqual(rest.chain, [`trim=start_frame=${d}`, 'setpts=N'], 'the frames after the overlap');
        parts.push(rest.out);
      }
      if (parts.length > 1) {
        const join = byIn.get(mix.out)!;
        assert.deepEqual(join.ins, parts, `before, overlap, after, in order: ${join.text}`);
        assert.match(join.chain.join(','), new RegExp(`^concat=n=${parts.length}:v=1:a=0,settb=\\d+/\\d+,setpts=N$`));
      }
      return { offset, d, by };
    });
}

/**
 * Each sound crossfade, its shape checked like the picture's: the d samples
 * after `offset` fade out, the first d of what follows fade in, the two are
 * summed (amerge, then pan adds the two left and the two right channels), and the parts are joined
 * in order.
 */
function soundCrossfadeOf(graph: string): { offset: number; d: number }[] {
  const stmts = statements(graph);
  const byOut = new Map(stmts.flatMap((s) => s.outs.map((o) => [o, s] as const)));
  const byIn = new Map(stmts.flatMap((s) => s.ins.map((i) => [i, s] as const)));
  return stmts
    .filter((s) => s.ins.length === 2 && s.chain.join(',') === 'amerge=inputs=2,pan=stereo|c0=c0+c2|c1=c1+c3')
    .filter((s) => s.ins.every((i) => byOut.get(i)?.chain.some((f) => f.startsWith('afade='))))
    .map((mix) => {
      const [outgoing, incoming] = mix.ins.map((i) => byOut.get(i)!);
      const fadeOut = /^afade=t=out:ns=(\d+):curve=tri$/.exec(outgoing!.chain.at(-1)!);
      const fadeIn = /^afade=t=in:ns=(\d+):curve=tri$/.exec(incoming!.chain.at(-1)!);
      assert.ok(fadeOut && fadeIn, `a linear fade out, then in: ${outgoing!.text} / ${incoming!.text}`);
      const d = Number(fadeOut[1]);
      assert.equal(Number(fadeIn[1]), d);
      const parts = [mix.out];
      let offset = 0;
      const from = /^atrim=start_sample=(\d+)$/.exec(outgoing!.chain[0]!);
      if (from) {
        offset = Number(from[1]);
        assert.deepEqual(outgoing!.chain.slice(1, -1), ['asetpts=N/SR/TB']);
        const split = byOut.get(outgoing!.ins[0]!)!;
        assert.deepEqual([split.chain, split.outs[1]], [['asplit'], outgoing!.ins[0]]);
        const kept = byIn.get(split.outs[0]!)!;
        assert.deepEqual(kept.chain, [`atrim=end_sample=${offset}`], 'the samples before the overlap');
        parts.unshift(kept.out);
      }
      if (incoming!.chain.length === 2) {
        assert.equal(incoming!.chain[0], `atrim=end_sample=${d}`);
        const split = byOut.get(incoming!.ins[0]!)!;
        assert.deepEqual([split.chain, split.outs[0]], [['asplit'], incoming!.ins[0]]);
        const rest = byIn.get(split.outs[1]!)!;
        assert.deepEqual(rest.chain, [`atrim=start_sample=${d}`, 'asetpts=N/SR/TB'], 'the samples after the overlap');
        parts.push(rest.out);
      }
      if (parts.length > 1) {
        const join = byIn.get(mix.out)!;
        assert.deepEqual(join.ins, parts, `before, overlap, after, in order: ${join.text}`);
        assert.equal(join.chain.join(','), `concat=n=${parts.length}:v=0:a=1`);
      }
      return { offset, d };
    });
}

interface GenClip {
  asset: string;
  start: number;
  offset: number;
  length: number;
  fade: number;
}

const GEN_SOURCES: Record<string, { source: RenderSource; facts: AssetFacts; still: boolean; kind: 'V' | 'A' }> = {
  vs: { source: video('/g/vs.mp4'), facts: { kind: 'video', duration_s: 100_000 }, still: false, kind: 'V' },
  vn: { source: video('/g/vn.mp4', { sound: false }), facts: { kind: 'video', duration_s: 100_000 }, still: false, kind: 'V' },
  img: { source: image('/g/img.png'), facts: { kind: 'image', duration_s: null }, still: true, kind: 'V' },
  still: { source: video('/g/still.png', { sound: false, more: { codec: 'png', still: true } }), facts: { kind: 'video', duration_s: 100_000 }, still: true, kind: 'V' },
  au: { source: sound('/g/au.wav'), facts: { kind: 'audio', duration_s: 100_000 }, still: false, kind: 'A' },
};

function genTrack(g: Rng, video: boolean, sr: number, maxClips: number): GenClip[] {
  const clips: GenClip[] = [];
  let pos = 0;
  const n = g.int(maxClips + 1);
  for (let k = 0; k < n; k++) {
    const unit = video ? 1 : Math.round(sr / 25);
    const gap = g.chance(0.4) ? g.int(20 * unit) + (g.chance(0.5) ? 0 : 1) : 0;
    const length = 1 + g.int(video ? 60 : 3 * sr);
    const prev = clips[clips.length - 1];
    const fade = prev && gap === 0 && g.chance(0.5) ? 1 + g.int(Math.min(length, prev.length)) : 0;
    const asset = video ? g.pick(['vs', 'vs', 'vn', 'img', 'still']) : 'au';
    const offset = GEN_SOURCES[asset]!.still ? 0 : g.chance(0.5) ? 0 : g.int(video ? 100 : 5 * sr);
    clips.push({ asset, start: pos + gap, offset, length, fade });
    pos += gap + length;
  }
  return clips;
}

describe('planRender: property (seeded)', () => {
  const seed = propSeed();
  test(`every V track sums to the sequence's frames, every sound track to its samples (seed ${seed})`, () => {
    const g = rng(seed);
    for (let round = 0; round < 300; round++) {
      const fpsValue = g.pick([25, 30, 24, 60, 12.5, 29.97, 23.976, 59.94]);
      const sr = g.pick([48000, 44100, 32000, 22050, 8000]);
      const target: Target = { fps: fpsValue, sample_rate: sr, width: 64, height: 36 };
      const fps = frameRate(fpsValue);
      const srRate = sampleRate(sr);
      const gen: Record<string, GenClip[]> = {};
      for (const [track, p, max] of [['V1', 0.9, 6], ['V2', 0.4, 4], ['V3', 0.15, 3], ['A1', 0.6, 5], ['A2', 0.3, 4]] as const) {
        if (g.chance(p)) gen[track] = genTrack(g, track.startsWith('V'), sr, max);
      }
      if (!Object.values(gen).some((t) => t.length > 0)) gen.V1 = [{ asset: 'vs', start: 0, offset: 0, length: 1 + g.int(30), fade: 0 }];
      const tracksIn: TracksIn = {};
      for (const [track, clips] of Object.entries(gen)) {
        const rate = track.startsWith('V') ? fps : srRate;
        tracksIn[track] = clips.map((c) => ({
          asset_id: c.asset,
          start: toSeconds(c.start, rate),
          in: toSeconds(c.offset, rate),
          duration: toSeconds(c.length, rate),
          ...(c.fade ? { transition: { kind: 'crossfade' as const, duration: toSeconds(c.fade, rate) } } : {}),
        }));
      }
      const lookup = (id: string) => GEN_SOURCES[id]?.facts ?? null;
      const built = buildDocument({ name: 'p', target, tracks: tracksIn }, { readable: lookup, present: lookup });
      const context = `seed ${seed} round ${round}: ${JSON.stringify({ target, gen })}`;
      assert.ok(built.ok, `${context}: ${JSON.stringify(!built.ok && built.problems)}`);

      // The oracle: the sequence's end in frames (sound covered) and in samples (frames converted, half up).
      let frames = 0;
      let samples = 0;
      for (const [track, clips] of Object.entries(gen)) {
        for (const c of clips) {
          const end = BigInt(c.start + c.length);
          if (track.startsWith('V')) {
            frames = Math.max(frames, Number(end));
            const a = end * fps.den * srRate.num;
            samples = Math.max(samples, Number((2n * a + fps.num) / (2n * fps.num)));
          } else {
            samples = Math.max(samples, Number(end));
            const a = end * fps.num;
            const c2 = srRate.num * fps.den;
            frames = Math.max(frames, Number((a + c2 - 1n) / c2));
          }
        }
      }

      // The sound runs to the end of the last frame (MP4 cuts AAC to whole milliseconds).
      samples = Math.max(samples, Number((2n * BigInt(frames) * fps.den * srRate.num + fps.num) / (2n * fps.num)));

      for (const path of ['conform', 'copy'] as const) {
        const plan = planRender({ doc: built.doc, path, output: OUTPUT, listFile: LIST, graphFile: GRAPH, sourceOf: (id) => GEN_SOURCES[id]!.source });
        const graph = graphOf(plan);
        const inputs = inputsOf(plan.args);
        assertArgv(plan.args);
        assertPlainNumbers(graph);
        const stills = new Set(inputs.flatMap((inp, i) => (/\/(img|still)\./.test(inp.file) ? [i] : [])));
        const { stmts, lengthOf } = graphLengths(graph, fps, stills);
        const where = `${context} (${path})\n${graph}`;

        // Sound tracks: amix inputs, else the mapped sound; each is the sequence's samples.
        const audioMap = /^\[(.+)\]$/.exec(plan.args[plan.args.lastIndexOf('-map') + 1]!)![1]!;
        const mix = stmts.find((s) => s.out === audioMap && s.text.includes('amix='));
        const soundTracks = mix ? mix.ins : [audioMap];
        const expectedSoundTracks = Object.entries(gen).filter(([t, clips]) => (t.startsWith('A') ? clips.length > 0 : clips.some((c) => c.asset === 'vs'))).length;
        assert.equal(soundTracks.length, Math.max(1, expectedSoundTracks), where);
        for (const t of soundTracks) assert.equal(lengthOf(t), samples, `sound track ${t}: ${where}`);

        // Each clip's input reads at least what its piece needs (the run-on under the next crossfade included).
        for (const s of stmts) {
          const pad = /^(\d+):([va]):0$/.exec(s.ins[0] ?? '');
          if (!pad || stills.has(Number(pad[1]))) continue;
          const t = optValue(inputs[Number(pad[1])]!, '-t');
          assert.ok(t, `a clip's input has -t: ${where}`);
          const need = lengthOf(s.out);
          const have = pad[2] === 'v' ? unitsOf(t, fps) : unitsOf(t, srRate);
          assert.ok(have >= need, `input ${pad[1]} reads ${have} units, its piece needs ${need}: ${where}`);
        }

        if (path === 'conform') {
          // V tracks: overlay inputs, else the one layer under the output; each is the sequence's frames.
          const videoMap = /^\[(.+)\]$/.exec(plan.args[plan.args.indexOf('-map') + 1]!)![1]!;
          assert.equal(lengthOf(videoMap), frames, where);
          const overlays = stmts.filter(isLayer);
          const layers = overlays.length > 0 ? [overlays[0]!.ins[0]!, ...overlays.map((o) => o.ins[1]!)] : [byOutOf(stmts, videoMap).ins[0]!];
          const vTracks = Object.entries(gen).filter(([t, c]) => t.startsWith('V') && c.length > 0).length;
          assert.equal(layers.length, Math.max(1, vTracks), where);
          for (const l of layers) assert.equal(lengthOf(l), frames, `V track ${l}: ${where}`);
          const fadesOnV = Object.entries(gen).filter(([t]) => t.startsWith('V')).flatMap(([, c]) => c).filter((c) => c.fade > 0).length;
          assert.equal(crossfadeOf(graph).length, fadesOnV, where);
        } else {
          assertPlainNumbers(listOf(plan)!);
          const v1 = gen.V1 ?? [];
          assert.equal((listOf(plan)!.match(/^file /gm) ?? []).length, v1.length);
        }
        const seconds = Math.max((frames * Number(fps.den)) / Number(fps.num), samples / sr);
        assert.equal(plan.durationMs, Math.round(seconds * 1000), where);
        if (path === 'conform') assert.equal(plan.expect.videoSeconds, (frames * Number(fps.den)) / Number(fps.num), where);
      }
    }
  });
});

function byOutOf(stmts: Stmt[], label: string): Stmt {
  const s = stmts.find((x) => x.out === label);
  assert.ok(s, `label ${label}`);
  return s;
}
