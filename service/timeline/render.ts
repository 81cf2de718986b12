import type { AssetKind } from '../assets';
import type { MediaProbe } from '../media/types';
import { sortTracks, type TimelineDoc } from './document';
import type { Clip } from './schema';
import { frameRate, parseRate, sampleRate, toUnits, type Rate } from './snap';

/**
 * The ffmpeg invocation that renders a sequence (docs/api.md "Export
 * `POST /timeline/{id}:export`"). Pure: the sources' files and probes come in,
 * an argument array, the files ffmpeg reads (a concat list, the filter graph)
 * and what the output must be come out. Nothing here is ever joined into a
 * shell string; every number written into a graph or a list is an integer or
 * a decimal formatted here, never by the locale.
 *
 * Times are whole units throughout: frames of the target's fps for video,
 * samples of its sample rate for sound. Each clip's edges are converted from
 * its track's units once, from the exact position, so nothing drifts over a
 * long sequence.
 *
 * Conform: one filter graph. Each clip is one input, seeked to `in` and read
 * for just the length it needs. A video clip is rate-converted, scaled to fit
 * and padded (aspect kept), held on its last frame past its source's end and
 * cut to its exact frame count; an image is looped for its frame count; gaps
 * are black on V1 and transparent above it; V2..V9 are laid over V1. A
 * crossfade of d blends the previous clip, run on for d past its out point
 * (held when its source ends), into the first d of this clip. Every filter
 * and option is one ffmpeg 4.1 has, the version Backlot ships, and the same
 * graph gives the same frames on 5.x (docs/design.md "The conform graph runs
 * on ffmpeg 4.1").
 *
 * Copy: the V1 clips' video is joined by the concat demuxer and stream-copied.
 *
 * Sound (both paths): every A track and the own sound of every V track's
 * clips is laid out sample-exact (silence in gaps and for clips with no
 * sound), crossfaded like the picture, summed without level scaling and
 * encoded once as one continuous AAC track at the target's rate: there is no
 * join for encoder priming to click at. The output always carries sound
 * (silence when the sequence has none).
 */

export interface RenderSource {
  kind: AssetKind;
  /** Absolute path of the asset's blob. */
  file: string;
  mime: string;
  /** ffprobe's view of the file; null for images (never probed). */
  probe: MediaProbe | null;
}

export interface RenderRequest {
  doc: TimelineDoc;
  sourceOf(assetId: string): RenderSource;
  path: 'copy' | 'conform';
  /** Absolute paths: the output file, and where the concat list and the graph are written. */
  output: string;
  listFile: string;
  graphFile: string;
}

export interface RenderPlan {
  /** ffmpeg's arguments (after the program). */
  args: string[];
  /** Files to write before ffmpeg starts: the filter graph, and the concat list on the copy path. */
  files: { path: string; text: string }[];
  /** The sequence's length in milliseconds: the progress denominator. */
  durationMs: number;
  expect: ExpectedOutput;
}

export interface ExpectedOutput {
  width: number;
  height: number;
  fps: Rate;
  sampleRate: number;
  /** h264 when encoded; the sources' codec on the copy path. */
  videoCodec: string;
  /** Seconds: the video's frame count over the rate, and the sequence's length. */
  videoSeconds: number;
  seconds: number;
}

/** Sample rates the AAC encoder takes (ISO/IEC 14496-3 sampling frequency index). */
export const AAC_SAMPLE_RATES: readonly number[] = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350];

/** x264 and AAC settings of the conform path. */
export const ENCODE = { preset: 'veryfast', crf: '18', audioBitrate: '192k' } as const;

/** Extra source read past what a clip needs, so a seek's rounding never cuts its last frame short. */
const READ_MARGIN_FRAMES = 2;

/** ffmpeg's own quoting for a concat list entry: inside '...' everything is literal; a ' is written '\''. */
export function concatQuote(text: string): string {
  if (/[\n\r\0]/.test(text)) throw new RangeError('a concat list entry cannot hold a line break or NUL');
  return `'${text.replace(/'/g, "'\\''")}'`;
}

/** `units / rate` seconds as a plain decimal with 6 places (half up), whatever the locale: `12.033367`. */
export function decimalSeconds(units: bigint | number, rate: Rate): string {
  const micro = (2n * BigInt(units) * rate.den * 1_000_000n + rate.num) / (2n * rate.num);
  const whole = micro / 1_000_000n;
  const fraction = (micro % 1_000_000n).toString().padStart(6, '0');
  return `${whole}.${fraction}`;
}

/** Whole units at `to` nearest to `units` at `from` (halves up). */
export function convertUnits(units: number, from: Rate, to: Rate): number {
  const a = BigInt(units) * from.den * to.num;
  const c = from.num * to.den;
  return Number((2n * a + c) / (2n * c));
}

/** The same, rounded up (a length that must cover a time). */
function coverUnits(units: number, from: Rate, to: Rate): number {
  const a = BigInt(units) * from.den * to.num;
  const c = from.num * to.den;
  return Number((a + c - 1n) / c);
}

/** A clip in whole units of its track: start, in, length on the track, run-on for the next clip's crossfade. */
interface Span {
  clip: Clip;
  start: number;
  offset: number;
  length: number;
  /** Units this clip runs on past its end, under the next clip's crossfade. */
  runOn: number;
  /** Units of this clip's own crossfade from the previous clip (0: none). */
  fadeIn: number;
}

function spansOf(clips: readonly Clip[], rate: Rate): Span[] {
  const spans = clips.map((clip) => ({
    clip,
    start: toUnits(clip.start, rate),
    offset: toUnits(clip.in, rate),
    length: toUnits(clip.duration, rate),
    runOn: 0,
    fadeIn: clip.transition ? toUnits(clip.transition.duration, rate) : 0,
  }));
  for (let i = 1; i < spans.length; i++) spans[i - 1]!.runOn = spans[i]!.fadeIn;
  return spans;
}

export function planRender(req: RenderRequest): RenderPlan {
  const { doc } = req;
  const fps = frameRate(doc.target.fps);
  const sr = sampleRate(doc.target.sample_rate);
  const { width: W, height: H } = doc.target;
  const tracks = sortTracks(Object.keys(doc.tracks)).filter((t) => doc.tracks[t]!.length > 0);

  // The sequence's end, in frames (covering) and in samples.
  let frames = 0;
  let samples = 0;
  for (const track of tracks) {
    const video = track.startsWith('V');
    for (const s of spansOf(doc.tracks[track]!, video ? fps : sr)) {
      const end = s.start + s.length;
      frames = Math.max(frames, video ? end : coverUnits(end, sr, fps));
      samples = Math.max(samples, video ? convertUnits(end, fps, sr) : end);
    }
  }

  // The picture: every frame the sequence covers, or on the copy path exactly V1's clips (the plan
  // lets sound run on past them by less than half a frame).
  const videoFrames =
    req.path === 'copy' ? (doc.tracks.V1 ?? []).reduce((end, c) => Math.max(end, toUnits(c.start, fps) + toUnits(c.duration, fps)), 0) : frames;
  // The sound runs to the end of the last frame: MP4 (ffmpeg 5.1) cuts an AAC track to whole
  // milliseconds, and sound ending up to a frame before the picture would then fail the check.
  samples = Math.max(samples, convertUnits(frames, fps, sr));

  const inputs: string[][] = [];
  const graph: string[] = [];
  /** Length of each piece of a track (frames or samples), for crossfade offsets. */
  const lengths = new Map<string, number>();
  let label = 0;
  const next = (prefix: string) => `${prefix}${label++}`;
  const addInput = (args: string[]) => inputs.push(args) - 1;

  // One input per clip (video and images: their picture and their sound; A clips: their sound).
  const clipInput = new Map<Clip, number>();
  /** Samples of sound to skip at the start of a clip's input whose picture seek was pulled back. */
  const soundSkip = new Map<Clip, number>();
  const inputFor = (clip: Clip, rate: Rate, span: Span, withPicture: boolean): number => {
    const known = clipInput.get(clip);
    if (known !== undefined) return known;
    const source = req.sourceOf(clip.asset_id);
    let index: number;
    if (isStill(source)) {
      index = addInput(imageInput(source));
    } else {
      const margin = rate === fps ? READ_MARGIN_FRAMES : convertUnits(READ_MARGIN_FRAMES, fps, sr);
      // A seek past the start of the source's last frame finds no frame (there would be nothing to
      // hold, and a crossfade into it never ends): the picture is sought to that frame instead and
      // the sound skips the difference.
      let seekText = decimalSeconds(span.offset, rate);
      const last = lastFrameStart(source);
      if (last !== null && Number(seekText) > last) {
        seekText = last.toFixed(6);
        soundSkip.set(clip, Math.round((Number(decimalSeconds(span.offset, rate)) - last) * Number(sr.num)));
      }
      const seek = span.offset > 0 ? ['-ss', seekText] : [];
      const read = ['-t', decimalSeconds(span.length + span.runOn + margin, rate)];
      index = addInput([...seek, ...read, ...(withPicture ? [] : ['-vn']), '-i', `file:${source.file}`]);
    }
    clipInput.set(clip, index);
    return index;
  };

  const copy = req.path === 'copy';

  // ---- Picture ----
  let videoOut: string;
  const listLines: string[] = [];
  if (req.path === 'copy') {
    listLines.push('ffconcat version 1.0');
    // inpoint 0: the file's picture starts at its offset in the output (not shifted by a container start
    // time that its sound's encoder priming moved below 0); duration: the next file starts exactly one
    // clip later (a copied clip's length is its stream's, in whole frames of the target's rate).
    for (const span of spansOf(doc.tracks.V1 ?? [], fps)) {
      listLines.push(`file ${concatQuote(req.sourceOf(span.clip.asset_id).file)}`, 'inpoint 0', `duration ${decimalSeconds(span.length, fps)}`);
    }
    addInput(['-f', 'concat', '-safe', '0', '-i', `file:${req.listFile}`]);
    videoOut = '0:v:0';
  } else {
    const layers = tracks.filter((t) => t.startsWith('V')).map((track, i) => videoTrack(track, i === 0));
    let base = layers[0] ?? blackFrames(frames);
    for (const layer of layers.slice(1)) {
      const out = next('ov');
      graph.push(`[${base}][${layer}]overlay=x=0:y=0:eof_action=pass:format=auto[${out}]`);
      base = out;
    }
    videoOut = next('vout');
    graph.push(`[${base}]format=yuv420p,setpts=N*${fps.den}/(${fps.num}*TB)[${videoOut}]`);
  }

  function blackFrames(count: number, transparent = false): string {
    const out = next('gap');
    const color = transparent ? 'black@0.0' : 'black';
    const format = transparent ? 'yuva420p' : 'yuv420p';
    graph.push(`color=c=${color}:s=${W}x${H}:r=${fps.num}/${fps.den},format=${format},setsar=1,trim=end_frame=${count}[${out}]`);
    lengths.set(out, count);
    return out;
  }

  function videoTrack(track: string, isBase: boolean): string {
    const format = isBase ? 'yuv420p' : 'yuva420p';
    const padColor = isBase ? 'black' : 'black@0.0';
    const pieces: { label: string; fadeIn: number }[] = [];
    let position = 0;
    for (const span of spansOf(doc.tracks[track]!, fps)) {
      if (span.start > position) pieces.push({ label: blackFrames(span.start - position, !isBase), fadeIn: 0 });
      const count = span.length + span.runOn;
      const source = req.sourceOf(span.clip.asset_id);
      const index = inputFor(span.clip, fps, span, true);
      const fit = `${fitScale(W, H)},pad=${W}:${H}:(ow-iw)/2:(oh-ih)/2:color=${padColor},setsar=1,format=${format}`;
      const out = next('v');
      if (isStill(source)) {
        // The time base of every piece is 1/fps (the fps filter's, the color source's): a crossfade's
        // timing expression reads it, and an image comes with its demuxer's (1/25). One frame more than
        // the piece needs is looped: ffmpeg 4.1's fps drops the last frame at the end of its input.
        graph.push(`[${index}:v:0]${fit},loop=loop=${count}:size=1:start=0,settb=${fps.den}/${fps.num},setpts=N,fps=${fps.num}/${fps.den},trim=end_frame=${count}[${out}]`);
      } else {
        graph.push(
          `[${index}:v:0]setpts=PTS-STARTPTS,${prepare(source)}fps=${fps.num}/${fps.den}:eof_action=pass,${fit},` +
            `tpad=stop=${count}:stop_mode=clone,trim=end_frame=${count},setpts=PTS-STARTPTS[${out}]`,
        );
      }
      lengths.set(out, count);
      pieces.push({ label: out, fadeIn: span.fadeIn });
      position = span.start + span.length;
    }
    if (frames > position) pieces.push({ label: blackFrames(frames - position, !isBase), fadeIn: 0 });
    return join(pieces, 'v', isBase);
  }

  /**
   * Joins pieces end to end; a piece with fadeIn d is crossfaded over the last
   * d units of what comes before it (which ran on by d for it). `opaque`: the
   * pieces are V1's (no alpha).
   */
  function join(pieces: { label: string; fadeIn: number }[], kind: 'v' | 'a', opaque = false): string {
    // Runs of pieces without a crossfade are one concat; runs are crossfaded into each other.
    const runs: { labels: string[]; fadeIn: number }[] = [];
    for (const p of pieces) {
      if (runs.length === 0 || p.fadeIn > 0) runs.push({ labels: [p.label], fadeIn: p.fadeIn });
      else runs[runs.length - 1]!.labels.push(p.label);
    }
    const concat = (labels: string[]) => {
      if (labels.length === 1) return labels[0]!;
      const out = next(`${kind}c`);
      const streams = kind === 'v' ? 'v=1:a=0' : 'v=0:a=1';
      // concat hands out a 1/1000000 time base and takes a segment's length from its first two
      // frames (a one-frame piece counts as none): frames are renumbered on the target's grid.
      const retime = kind === 'v' ? `,settb=${fps.den}/${fps.num},setpts=N` : '';
      graph.push(`${labels.map((l) => `[${l}]`).join('')}concat=n=${labels.length}:${streams}${retime}[${out}]`);
      return out;
    };
    let current = concat(runs[0]!.labels);
    let length = lengthOf(runs[0]!.labels);
    for (const run of runs.slice(1)) {
      const joined = concat(run.labels);
      if (kind === 'v') {
        current = crossfade(current, length, joined, lengthOf(run.labels), run.fadeIn, opaque);
      } else {
        current = soundCrossfade(current, length, joined, lengthOf(run.labels), run.fadeIn);
      }
      length = length - run.fadeIn + lengthOf(run.labels);
    }
    return current;
  }

  /**
   * The picture crossfade: `before` (frames, its last d the run-on) and
   * `after` overlap by d frames. Each is split at the overlap; the overlap is
   * mixed frame by frame, and the three parts are joined. Frame k of the d
   * (from 0) is before·(1 − k/d) + after·k/d: what xfade's fade does, written
   * with filters ffmpeg 4.1 has (docs/design.md "The conform graph runs on
   * ffmpeg 4.1").
   *
   * On V1 (opaque) the incoming frames get an alpha of k/d (fade) and are laid
   * over the outgoing ones: cheap. Above V1 a picture may be transparent (gaps,
   * bars), and every plane, alpha too, must mix linearly so the track fades
   * out where the incoming picture is transparent: a blend expression, read
   * from the timestamp (both sides restart at 0 on the 1/fps time base), which
   * costs about ten times the overlay.
   */
  function crossfade(before: string, beforeLength: number, after: string, afterLength: number, d: number, opaque: boolean): string {
    const parts: string[] = [];
    const head = beforeLength - d;
    let tail = before;
    if (head > 0) {
      const [keep, rest] = [next('vk'), next('vr')];
      const out = next('vp');
      graph.push(`[${before}]split[${keep}][${rest}]`);
      graph.push(`[${keep}]trim=end_frame=${head}[${out}]`);
      tail = next('vt');
      graph.push(`[${rest}]trim=start_frame=${head},setpts=N[${tail}]`);
      parts.push(out);
    }
    let into = after;
    let remainder: string | null = null;
    if (afterLength > d) {
      const [first, rest] = [next('vk'), next('vr')];
      into = next('vh');
      remainder = next('vt');
      graph.push(`[${after}]split[${first}][${rest}]`);
      graph.push(`[${first}]trim=end_frame=${d}[${into}]`);
      graph.push(`[${rest}]trim=start_frame=${d},setpts=N[${remainder}]`);
    }
    const mixed = next('vx');
    if (opaque) {
      const faded = next('vf');
      graph.push(`[${into}]format=yuva420p,fade=t=in:s=0:n=${d}:alpha=1[${faded}]`);
      graph.push(`[${tail}][${faded}]overlay=x=0:y=0:format=yuv420[${mixed}]`);
    } else {
      // T·num/den is k. No commas: they would end the filter.
      graph.push(`[${tail}][${into}]blend=all_expr=A+(B-A)*T*${fps.num}/${fps.den}/${d}[${mixed}]`);
    }
    parts.push(mixed);
    if (remainder !== null) parts.push(remainder);
    if (parts.length === 1) return mixed;
    const out = next('vc');
    graph.push(`${parts.map((l) => `[${l}]`).join('')}concat=n=${parts.length}:v=1:a=0,settb=${fps.den}/${fps.num},setpts=N[${out}]`);
    return out;
  }

  /**
   * The sound crossfade, shaped like the picture's: the last d samples before
   * it fade out and the first d after it fade in (linear), summed. Not
   * acrossfade: ffmpeg 4.1's takes its inputs strictly one after the other
   * and crashes when the second's samples arrive first, as they do when the
   * same file's picture is read ahead (docs/design.md "The conform graph runs
   * on ffmpeg 4.1").
   */
  function soundCrossfade(before: string, beforeLength: number, after: string, afterLength: number, d: number): string {
    const parts: string[] = [];
    const head = beforeLength - d;
    const outgoing = next('at');
    if (head > 0) {
      const [keep, rest, kept] = [next('ak'), next('ar'), next('ap')];
      graph.push(`[${before}]asplit[${keep}][${rest}]`);
      graph.push(`[${keep}]atrim=end_sample=${head}[${kept}]`);
      graph.push(`[${rest}]atrim=start_sample=${head},asetpts=N/SR/TB,afade=t=out:ns=${d}:curve=tri[${outgoing}]`);
      parts.push(kept);
    } else {
      graph.push(`[${before}]afade=t=out:ns=${d}:curve=tri[${outgoing}]`);
    }
    const incoming = next('ah');
    let remainder: string | null = null;
    if (afterLength > d) {
      const [first, rest] = [next('ak'), next('ar')];
      remainder = next('at');
      graph.push(`[${after}]asplit[${first}][${rest}]`);
      graph.push(`[${first}]atrim=end_sample=${d},afade=t=in:ns=${d}:curve=tri[${incoming}]`);
      graph.push(`[${rest}]atrim=start_sample=${d},asetpts=N/SR/TB[${remainder}]`);
    } else {
      graph.push(`[${after}]afade=t=in:ns=${d}:curve=tri[${incoming}]`);
    }
    const mixed = next('ax');
    // A plain sum of the two stereo pieces. Not amix: ffmpeg 5's refuses pieces of a few samples
    // ("Invalid data found").
    graph.push(`[${outgoing}][${incoming}]amerge=inputs=2,pan=stereo|c0=c0+c2|c1=c1+c3[${mixed}]`);
    parts.push(mixed);
    if (remainder !== null) parts.push(remainder);
    if (parts.length === 1) return mixed;
    const out = next('ac');
    graph.push(`${parts.map((l) => `[${l}]`).join('')}concat=n=${parts.length}:v=0:a=1[${out}]`);
    return out;
  }

  function lengthOf(labels: string[]): number {
    return labels.reduce((sum, l) => sum + lengths.get(l)!, 0);
  }

  // ---- Sound ----
  const soundTracks: string[] = [];
  for (const track of tracks) {
    const video = track.startsWith('V');
    const rate = video ? fps : sr;
    const spans = spansOf(doc.tracks[track]!, rate);
    if (video && !spans.some((s) => hasSound(req.sourceOf(s.clip.asset_id)))) continue;
    const toSamples = (units: number) => (video ? convertUnits(units, fps, sr) : units);
    const pieces: { label: string; fadeIn: number }[] = [];
    let position = 0;
    for (const span of spans) {
      const start = toSamples(span.start);
      const end = toSamples(span.start + span.length);
      if (start > position) pieces.push({ label: silence(start - position), fadeIn: 0 });
      const count = end - start + (toSamples(span.start + span.length + span.runOn) - end);
      const fadeIn = span.fadeIn > 0 ? toSamples(span.start + span.fadeIn) - start : 0;
      const source = req.sourceOf(span.clip.asset_id);
      if (hasSound(source)) {
        const index = inputFor(span.clip, rate, span, req.path === 'conform' && video);
        const out = next('a');
        graph.push(
          `[${index}:a:0]asetpts=PTS-STARTPTS,aresample=${sr.num},aformat=sample_fmts=fltp:channel_layouts=stereo,` +
            skip(span.clip) +
            // Timestamps from the sample count: a piece that got no samples (a seek past its sound) is
            // then pure padding, not frames without timestamps that stall the graph.
            `asetpts=N/SR/TB,apad=whole_len=${count},atrim=end_sample=${count},asetpts=N/SR/TB[${out}]`,
        );
        lengths.set(out, count);
        pieces.push({ label: out, fadeIn });
      } else {
        pieces.push({ label: silence(count), fadeIn });
      }
      position = end;
    }
    if (samples > position) pieces.push({ label: silence(samples - position), fadeIn: 0 });
    soundTracks.push(join(pieces, 'a'));
  }

  function skip(clip: Clip): string {
    const samplesToSkip = soundSkip.get(clip) ?? 0;
    return samplesToSkip > 0 ? `atrim=start_sample=${samplesToSkip},` : '';
  }

  function silence(count: number): string {
    const out = next('s');
    graph.push(`anullsrc=r=${sr.num}:cl=stereo,atrim=end_sample=${count}[${out}]`);
    lengths.set(out, count);
    return out;
  }

  let audioOut: string;
  if (soundTracks.length === 0) {
    audioOut = silence(samples);
  } else if (soundTracks.length === 1) {
    audioOut = soundTracks[0]!;
  } else {
    audioOut = next('mix');
    // amix divides by its input count (ffmpeg 4.1 has no `normalize=0`); volume undoes it: a plain sum.
    graph.push(`${soundTracks.map((l) => `[${l}]`).join('')}amix=inputs=${soundTracks.length}:duration=longest,volume=${soundTracks.length}[${audioOut}]`);
  }

  const firstVideo = (doc.tracks.V1 ?? []).map((c) => req.sourceOf(c.asset_id).probe?.video).find((v) => v);
  const args = [
    '-hide_banner', '-nostdin', '-y', '-nostats', '-progress', 'pipe:1',
    // Copy: the joined picture keeps its own timestamps. Without this ffmpeg shifts it by the concat
    // input's start time, which the first file's sound (AAC priming, below 0) sets: a 21 ms offset.
    ...(copy ? ['-copyts'] : []),
    ...inputs.flat(),
    '-filter_complex_script', req.graphFile,
    '-map', copy ? videoOut : `[${videoOut}]`,
    '-map', `[${audioOut}]`,
    ...(copy
      ? ['-c:v', 'copy']
      : ['-c:v', 'libx264', '-preset', ENCODE.preset, '-crf', ENCODE.crf, '-pix_fmt', 'yuv420p', '-r', `${fps.num}/${fps.den}`]),
    '-c:a', 'aac', '-b:a', ENCODE.audioBitrate, '-ar', String(sr.num), '-ac', '2',
    '-map_metadata', '-1', '-map_chapters', '-1',
    '-movflags', '+faststart', '-f', 'mp4', `file:${req.output}`,
  ];
  const secondsOf = (videoUnits: number) => Math.max((videoUnits * Number(fps.den)) / Number(fps.num), samples / Number(sr.num));
  const files = [{ path: req.graphFile, text: graph.join(';\n') + '\n' }];
  if (copy) files.push({ path: req.listFile, text: listLines.join('\n') + '\n' });
  return {
    args,
    files,
    durationMs: Math.round(secondsOf(frames) * 1000),
    expect: {
      width: W,
      height: H,
      fps,
      sampleRate: doc.target.sample_rate,
      videoCodec: copy ? (firstVideo?.codec ?? 'h264') : 'h264',
      videoSeconds: (videoFrames * Number(fps.den)) / Number(fps.num),
      seconds: secondsOf(videoFrames),
    },
  };
}

/**
 * The scaler, named: a filter_complex graph's default is bicubic on ffmpeg 5
 * but bilinear on 4.1, which would make the same graph give other pixels.
 */
const SCALER = 'bicubic';

/**
 * Scales a picture to fit W×H with its aspect kept and an even width and
 * height: each side is the other's scaled to the nearest even number, at most
 * the target's, rounded down to even. That is what `scale=W:H:
 * force_original_aspect_ratio=decrease:force_divisible_by=2` gives on ffmpeg
 * 5, written as expressions because 4.1 has no force_divisible_by. Commas in
 * an expression are escaped for the graph.
 */
export function fitScale(W: number, H: number): string {
  return `scale=w=trunc(min(${W}\\,round(${H}*iw/ih/2)*2)/2)*2:h=trunc(min(${H}\\,round(${W}*ih/iw/2)*2)/2)*2:flags=${SCALER}`;
}

/**
 * Filters a video source needs before rate conversion and fitting: interlaced
 * frames are deinterlaced (one frame per frame), and non-square pixels are
 * made square so the picture keeps its shape when it is fitted.
 */
function prepare(source: RenderSource): string {
  const video = source.probe?.video;
  let filters = '';
  if (video?.field_order && video.field_order !== 'progressive') filters += 'yadif=mode=send_frame,';
  if (video?.sar && video.sar !== '1:1') filters += `scale=trunc(iw*sar/2)*2:ih:flags=${SCALER},setsar=1,`;
  return filters;
}

/** Seconds at which the source's last frame starts, when its length and rate are known. */
function lastFrameStart(source: RenderSource): number | null {
  const video = source.probe?.video;
  const rate = parseRate(video?.frame_rate);
  if (!video || video.duration_s === null || !rate) return null;
  return Math.max(0, video.duration_s - Number(rate.den) / Number(rate.num));
}

/** An image, or a video file that is one still picture: looped for its frame count. */
function isStill(source: RenderSource): boolean {
  return source.kind === 'image' || source.probe?.video?.still === true;
}

function hasSound(source: RenderSource): boolean {
  return source.kind !== 'image' && source.probe?.audio != null;
}

/** Image decoders by mime type: the image2 demuxer then needs no file-name pattern or extension. */
const IMAGE_DECODERS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'mjpeg',
  'image/webp': 'webp',
  'image/gif': 'gif',
  'image/bmp': 'bmp',
  'image/tiff': 'tiff',
};

function imageInput(source: RenderSource): string[] {
  if (source.kind !== 'image') return ['-i', `file:${source.file}`];
  const decoder = IMAGE_DECODERS[source.mime];
  return ['-f', 'image2', '-pattern_type', 'none', ...(decoder ? ['-c:v', decoder] : []), '-i', `file:${source.file}`];
}
