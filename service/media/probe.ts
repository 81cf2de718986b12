import path from 'node:path';
import { ApiError } from '../core/errors';
import { ProbeError, parseProbeOutput } from './normalize';
import { runTool } from './run';
import { requireTool } from './tools';
import type { MediaProbe } from './types';

export { ProbeError, normalizeProbe, parseProbeOutput } from './normalize';

/**
 * probeMedia(file): one ffprobe run, its JSON normalised (normalize.ts).
 *
 * - 501 `unsupported` (ApiError, details.tool `ffprobe`) when ffprobe is not
 *   available, checked before anything else.
 * - The file is passed as `file:` + its absolute path: never read as an option
 *   (a name starting with `-`) nor as another protocol (`http:`, `concat:`).
 *   `-pattern_type none` keeps the image demuxer from reading `%d` or glob
 *   characters in a name as a sequence of files.
 * - Timeout 15 s by default (the whole process group is ended); stdout capped
 *   at 4 MiB; at most 4 probes run at a time, the rest wait their turn.
 * - Failures are ProbeError with a message a person can read: ffprobe's first
 *   error line, the timeout, the cancel. A file with no audio or video stream
 *   is not a failure: both are null.
 */

export interface ProbeOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Where ffprobe is looked up and the child's environment; default process.env. */
  env?: NodeJS.ProcessEnv;
}

export const PROBE_TIMEOUT_MS = 15_000;
export const MAX_PROBE_OUTPUT_BYTES = 4 * 1024 * 1024;
export const MAX_CONCURRENT_PROBES = 4;

/**
 * The demuxers a probe may use: containers and raw streams that hold their
 * own media, and single pictures. Playlists and scripts that name other files
 * (hls, dash, ffconcat, which ffmpeg recognises by their text whatever the
 * file's name) are left out: an uploaded file holding one would have ffprobe
 * read the files it names beside it in the blob store, other studios' too,
 * and the export after it (docs/security.md, Inputs: ffmpeg and ffprobe). A file that no
 * listed demuxer takes cannot be probed, so it never reaches an export. No
 * protocol but `file` either.
 */
export const PROBE_FORMATS = [
  'mov', 'matroska', 'avi', 'mpegts', 'mpeg', 'mpegvideo', 'flv', 'asf', 'ogg', 'nut', 'mxf', 'dv', 'ivf',
  'h264', 'hevc', 'm4v', 'wav', 'w64', 'aiff', 'caf', 'mp3', 'aac', 'flac', 'ac3', 'eac3', 'dts', 'amr', 'wv', 'ape',
  'gif', 'image2', 'png_pipe', 'jpeg_pipe', 'webp_pipe', 'gif_pipe', 'bmp_pipe', 'tiff_pipe',
] as const;

/** ffprobe's arguments for one file (after the binary). */
export function probeArgs(file: string): string[] {
  return [
    '-v', 'error',
    '-hide_banner',
    '-protocol_whitelist', 'file',
    '-format_whitelist', PROBE_FORMATS.join(','),
    '-pattern_type', 'none',
    '-print_format', 'json',
    '-show_format',
    '-show_streams',
    '-show_data_hash', 'SHA256',
    `file:${path.resolve(file)}`,
  ];
}

export async function probeMedia(file: string, options: ProbeOptions = {}): Promise<MediaProbe> {
  const env = options.env ?? process.env;
  requireTool('ffprobe', env);
  const timeoutMs = options.timeoutMs ?? PROBE_TIMEOUT_MS;
  await acquire(options.signal);
  let result;
  try {
    result = await runTool('ffprobe', probeArgs(file), {
      env,
      timeoutMs,
      signal: options.signal,
      maxStdoutBytes: MAX_PROBE_OUTPUT_BYTES,
      maxStderrBytes: 64 * 1024,
    });
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw new ProbeError(err instanceof Error ? err.message : String(err));
  } finally {
    release();
  }
  if (result.timedOut) throw new ProbeError(`ffprobe timed out after ${timeoutMs / 1000} s.`);
  if (result.aborted) throw cancelled();
  if (result.code !== 0) {
    const why = firstLine(result.stderr, file) ?? (result.signal ? `ended by ${result.signal}` : `exit code ${result.code}`);
    throw new ProbeError(`ffprobe could not read the file: ${why}`);
  }
  if (result.stdoutTruncated) throw new ProbeError(`ffprobe's output is larger than ${MAX_PROBE_OUTPUT_BYTES} bytes.`);
  return parseProbeOutput(result.stdout);
}

/**
 * The first non-empty stderr line, without what ffprobe puts before it: the
 * `file:/path: ` of the input (the service's own paths) or the
 * `[demuxer @ 0x55...] ` context (a memory address, noise to a person).
 */
function firstLine(stderr: string, file: string): string | null {
  const line = stderr.split(/\r?\n|\r/).find((l) => l.trim() !== '');
  if (line === undefined) return null;
  const prefix = `file:${path.resolve(file)}: `;
  const text = line.startsWith(prefix) ? line.slice(prefix.length) : line;
  return text.replace(/^\[[^\]]* @ 0x[0-9a-fA-F]+\] /, '').trim();
}

function cancelled(): ProbeError {
  return new ProbeError('The probe was cancelled.');
}

let running = 0;
const waiting: (() => void)[] = [];

async function acquire(signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) throw cancelled();
  if (running < MAX_CONCURRENT_PROBES) {
    running += 1;
    return;
  }
  await new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      const at = waiting.indexOf(go);
      if (at >= 0) waiting.splice(at, 1);
      reject(cancelled());
    };
    const go = () => {
      signal?.removeEventListener('abort', onAbort);
      running += 1;
      resolve();
    };
    waiting.push(go);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function release(): void {
  running -= 1;
  waiting.shift()?.();
}
