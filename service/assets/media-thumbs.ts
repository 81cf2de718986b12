import { statSync } from 'node:fs';
import { ApiError } from '../core/errors';
import { PROBE_FORMATS, probeMedia, runTool } from '../media';

/**
 * The picture a video or sound asset's thumbnail is made from (docs/api.md
 * §Thumbnails), drawn by ffmpeg into a PNG file that thumbs.ts then turns into
 * the cached 320 px WebP as it does an image:
 *
 * - video: one frame, a quarter into the file (at most 5 s in: past a
 *   fade-in, and a short clip still has one), or its first frame when the
 *   seek found none (a still, a file whose length is unknown);
 * - sound: the waveform of the whole file, mono, WAVE_WIDTH × WAVE_HEIGHT,
 *   transparent behind it. showwavespic maps the file's samples onto the full
 *   width with no margin, so x = 0 is 0 s and the right edge is the file's
 *   end: a page may crop it to a clip's in/out range.
 *
 * ffmpeg reads the blob as the probe does: `file:` only, self-contained
 * demuxers only (PROBE_FORMATS), so a playlist naming other blobs is never
 * followed (docs/security.md, Inputs: ffmpeg and ffprobe).
 */

/** The waveform is drawn at 4× the thumbnail's width, then scaled down (smooth edges, same x axis). */
export const WAVE_WIDTH = 1280;
export const WAVE_HEIGHT = 320;
/** A tone that reads on light and dark pages alike. */
const WAVE_COLOUR = '0x3b82c4';
/** An ffmpeg run for one picture; a file that takes longer gets no thumbnail (501). */
const RUN_TIMEOUT_MS = 60_000;

export interface MediaPicture {
  /** The file's length in seconds, when ffprobe knows it. */
  duration_s: number | null;
}

/** Draws the asset's picture into `png`; 501 `unsupported` when there is no tool or ffmpeg cannot read the file. */
export async function drawMediaPicture(kind: 'video' | 'audio', source: string, png: string, signal?: AbortSignal): Promise<MediaPicture> {
  let duration: number | null = null;
  try {
    const probe = await probeMedia(source, { signal });
    duration = probe.duration_s ?? probe.video?.duration_s ?? probe.audio?.duration_s ?? null;
    if (kind === 'video' && !probe.video) throw ApiError.unsupported('This video asset has no video stream to take a frame from.');
    if (kind === 'audio' && !probe.audio) throw ApiError.unsupported('This sound asset has no audio stream to draw.');
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw ApiError.unsupported(`No thumbnail can be made of this ${kind}: ${(err as Error).message}`);
  }
  if (kind === 'audio') {
    await draw(source, png, [
      '-filter_complex', `[0:a:0]aformat=channel_layouts=mono,showwavespic=s=${WAVE_WIDTH}x${WAVE_HEIGHT}:colors=${WAVE_COLOUR}`,
      '-frames:v', '1',
    ], signal);
  } else {
    const at = duration !== null && duration > 0 ? Math.min(duration / 4, 5) : 0;
    const frame = ['-map', '0:v:0', '-frames:v', '1', '-vf', 'scale=640:-2'];
    const drew = at > 0 && (await draw(source, png, frame, signal, at).then(() => true, () => false));
    if (!drew) await draw(source, png, frame, signal);
  }
  return { duration_s: duration };
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
