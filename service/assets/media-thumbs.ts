import { statSync } from 'node:fs';
import { ApiError } from '../core/errors';
import sharp from 'sharp';
import { PROBE_FORMATS, probeMedia, runTool, type MediaProbe } from '../media';

/**
 * The picture a video or sound asset's thumbnail is made from (docs/api.md
 * §Thumbnails), drawn by ffmpeg into a PNG file that thumbs.ts then turns into
 * the cached 320 px WebP as it does an image:
 *
 * - video: one frame, a quarter into the file (at most 5 s in: past a
 *   fade-in, and a short clip still has one), or its first frame when the
 *   seek found none (a still, a file whose length is unknown);
 * - sound: the waveform of the whole file, mono, WAVE_WIDTH × WAVE_HEIGHT,
 *   transparent behind it, no margin: column x shows samples from x/WAVE_WIDTH
 *   to (x+1)/WAVE_WIDTH of the file, so x = 0 is 0 s and the right edge is
 *   its end, and a page may crop it to a clip's in/out range. ffmpeg only
 *   measures (the peak of each run of samples, `astats`); the columns are
 *   drawn here. ffmpeg's own showwavespic would draw it, but 4.1's (the
 *   bundled one) shifts the picture by a few columns.
 *
 * ffmpeg reads the blob as the probe does: `file:` only, self-contained
 * demuxers only (PROBE_FORMATS), so a playlist naming other blobs is never
 * followed (docs/security.md, Inputs: ffmpeg and ffprobe).
 */

/** The waveform's size: the thumbnail's, one column per 1/WAVE_WIDTH of the file. */
export const WAVE_WIDTH = 320;
export const WAVE_HEIGHT = 80;
/** A tone that reads on light and dark pages alike (RGB). */
const WAVE_COLOUR = [0x3b, 0x82, 0xc4] as const;
/** Peak readings per column: a column is the loudest of its readings. */
const READINGS_PER_COLUMN = 4;
/** An ffmpeg run for one picture; a file that takes longer gets no thumbnail (501). */
const RUN_TIMEOUT_MS = 60_000;

export interface MediaPicture {
  /** The file's length in seconds, when ffprobe knows it. */
  duration_s: number | null;
}

/** Draws the asset's picture into `png`; 501 `unsupported` when there is no tool or ffmpeg cannot read the file. */
export async function drawMediaPicture(kind: 'video' | 'audio', source: string, png: string, signal?: AbortSignal): Promise<MediaPicture> {
  let duration: number | null = null;
  let probe: MediaProbe;
  try {
    probe = await probeMedia(source, { signal });
    duration = probe.duration_s ?? probe.video?.duration_s ?? probe.audio?.duration_s ?? null;
    if (kind === 'video' && !probe.video) throw ApiError.unsupported('This video asset has no video stream to take a frame from.');
    if (kind === 'audio' && !probe.audio) throw ApiError.unsupported('This sound asset has no audio stream to draw.');
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw ApiError.unsupported(`No thumbnail can be made of this ${kind}: ${(err as Error).message}`);
  }
  if (kind === 'audio') {
    const rate = probe.audio!.sample_rate;
    const length = probe.audio!.duration_s ?? duration;
    if (length === null || !(length > 0) || !(rate > 0)) throw ApiError.unsupported('The length of this sound is unknown: no waveform can be drawn.');
    await drawWaveform(source, png, Math.round(length * rate), signal);
  } else {
    const at = duration !== null && duration > 0 ? Math.min(duration / 4, 5) : 0;
    const frame = ['-map', '0:v:0', '-frames:v', '1', '-vf', 'scale=640:-2'];
    const drew = at > 0 && (await draw(source, png, frame, signal, at).then(() => true, () => false));
    if (!drew) await draw(source, png, frame, signal);
  }
  return { duration_s: duration };
}

/**
 * The waveform as a PNG: ffmpeg reads the peak of every run of `perReading`
 * samples (mono), each run is placed by the samples it covers, and a column
 * is drawn as high as its loudest run, centred, on a linear scale.
 */
async function drawWaveform(source: string, png: string, samples: number, signal: AbortSignal | undefined): Promise<void> {
  const perReading = Math.max(1, Math.floor(samples / (WAVE_WIDTH * READINGS_PER_COLUMN)));
  const peaks: number[] = [];
  const result = await runTool(
    'ffmpeg',
    [
      '-v', 'info', '-nostdin', '-hide_banner',
      '-protocol_whitelist', 'file',
      '-format_whitelist', PROBE_FORMATS.join(','),
      '-i', `file:${source}`,
      '-filter_complex',
      `[0:a:0]aformat=channel_layouts=mono,asetnsamples=n=${perReading}:p=0,astats=metadata=1:reset=1,ametadata=mode=print:key=lavfi.astats.Overall.Peak_level`,
      '-f', 'null', '-',
    ],
    {
      signal,
      timeoutMs: RUN_TIMEOUT_MS,
      maxStdoutBytes: 64 * 1024,
      maxStderrBytes: 64 * 1024,
      onStderrLine(line) {
        const m = /lavfi\.astats\.Overall\.Peak_level=(\S+)/.exec(line);
        if (m) peaks.push(decibelsToLinear(m[1]!));
      },
    },
  );
  if (result.aborted) throw ApiError.unsupported('The service is stopping.');
  if (result.code !== 0 || peaks.length === 0) {
    throw ApiError.unsupported(`No waveform can be drawn of this file: ${result.timedOut ? 'ffmpeg took too long' : `ffmpeg exit code ${result.code}`}`);
  }
  const total = Math.max(samples, peaks.length * perReading - perReading + 1);
  const column = new Float64Array(WAVE_WIDTH);
  peaks.forEach((peak, i) => {
    const first = Math.min(WAVE_WIDTH - 1, Math.floor((i * perReading * WAVE_WIDTH) / total));
    const last = Math.min(WAVE_WIDTH - 1, Math.floor((Math.min(total, (i + 1) * perReading) - 1) * WAVE_WIDTH / total));
    for (let x = first; x <= last; x++) column[x] = Math.max(column[x]!, peak);
  });
  const pixels = Buffer.alloc(WAVE_WIDTH * WAVE_HEIGHT * 4);
  const middle = WAVE_HEIGHT / 2;
  for (let x = 0; x < WAVE_WIDTH; x++) {
    const half = column[x]! * middle;
    if (half < 0.25) continue; // silence stays empty
    const top = Math.max(0, Math.floor(middle - Math.max(half, 0.5)));
    const bottom = Math.min(WAVE_HEIGHT, Math.ceil(middle + Math.max(half, 0.5)));
    for (let y = top; y < bottom; y++) {
      const at = (y * WAVE_WIDTH + x) * 4;
      pixels[at] = WAVE_COLOUR[0];
      pixels[at + 1] = WAVE_COLOUR[1];
      pixels[at + 2] = WAVE_COLOUR[2];
      pixels[at + 3] = 255;
    }
  }
  await sharp(pixels, { raw: { width: WAVE_WIDTH, height: WAVE_HEIGHT, channels: 4 } }).png().toFile(png);
}

/** astats' peak in dBFS as a 0..1 amplitude; `-inf` (and 4.1's -6153 for silence) is 0. */
function decibelsToLinear(text: string): number {
  const db = Number(text);
  if (!Number.isFinite(db) || db < -200) return 0;
  return Math.min(1, 10 ** (db / 20));
}

/** One ffmpeg run writing one PNG picture; rejects (501) unless it exits 0 with a non-empty file. */
async function draw(source: string, png: string, output: string[], signal: AbortSignal | undefined, seek = 0): Promise<void> {
  const args = [
    '-v', 'error', '-nostdin', '-hide_banner',
    '-protocol_whitelist', 'file',
    '-format_whitelist', PROBE_FORMATS.join(','),
    ...(seek > 0 ? ['-ss', seek.toFixed(3)] : []),
    '-i', `file:${source}`,
    ...output,
    '-f', 'image2', '-update', '1', '-c:v', 'png', '-y', png,
  ];
  const result = await runTool('ffmpeg', args, { signal, timeoutMs: RUN_TIMEOUT_MS, maxStdoutBytes: 64 * 1024, maxStderrBytes: 64 * 1024 });
  if (result.aborted) throw ApiError.unsupported('The service is stopping.');
  let size = 0;
  try {
    size = statSync(png).size;
  } catch {
    size = 0;
  }
  if (result.code !== 0 || size === 0) {
    const why = result.timedOut ? `ffmpeg took longer than ${RUN_TIMEOUT_MS / 1000} s` : (result.stderr.split(/\r?\n/).find((l) => l.trim() !== '') ?? `exit code ${result.code}`);
    throw ApiError.unsupported(`No thumbnail can be made of this file: ${why.replace(`file:${source}: `, '')}`);
  }
}
