import { PROBE_VERSION, type AudioStreamInfo, type MediaProbe, type VideoStreamInfo } from './types';

/**
 * ffprobe's JSON (`-print_format json -show_format -show_streams
 * -show_data_hash SHA256`) → MediaProbe. Pure: no process, no file.
 *
 * - Video: the first stream of codec_type `video` whose
 *   `disposition.attached_pic` is not 1 (cover art is not footage). Audio: the
 *   first `audio` stream. A file with neither is a valid probe with both null.
 * - ffprobe writes some numbers as strings (`duration`, `nb_frames`,
 *   `sample_rate`): they are parsed; anything unparsable is null.
 * - Unknowns become null: `level` -99, `sample_aspect_ratio` `0:1`/`N/A`,
 *   `codec_tag_string` `[0][0][0][0]`, `unknown` field order, pixel format or
 *   colour tag, and any member ffprobe leaves out.
 * - Rotation is the clockwise turn, in degrees, a player applies to show the
 *   picture upright (what ffmpeg's autorotate applies). The display matrix's
 *   `rotation` is counter-clockwise (an upright phone video shows -90), so it is
 *   negated; the older `rotate` tag is already clockwise. The display matrix
 *   wins when both are present. The value is rounded to the nearest quarter
 *   turn and normalised to 0, 90, 180 or 270.
 * - Frame rates are reduced fractions (a one-frame GIF reports `100/10`; it
 *   becomes `10/1`), so equal rates compare equal as text; unknown is `0/0`.
 * - A stream whose codec ffprobe cannot name has codec `unknown`.
 * - Durations: the stream's, else the container's, else null.
 * - still: see isStill.
 */

export class ProbeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProbeError';
  }
}

type Json = Record<string, unknown>;

/** JSON text from ffprobe → MediaProbe; ProbeError when it is not JSON or not ffprobe's shape. */
export function parseProbeOutput(text: string): MediaProbe {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ProbeError('ffprobe did not answer with JSON.');
  }
  return normalizeProbe(json);
}

export function normalizeProbe(json: unknown): MediaProbe {
  if (!isObject(json)) throw new ProbeError('ffprobe output is not a JSON object.');
  const format = json.format;
  if (!isObject(format)) throw new ProbeError('ffprobe output has no "format" section.');
  const streams = json.streams ?? [];
  if (!Array.isArray(streams) || !streams.every(isObject)) throw new ProbeError('ffprobe output has no valid "streams" list.');
  const formatName = str(format.format_name) ?? 'unknown';
  const formatDuration = num(format.duration);
  const video = streams.find((s) => s.codec_type === 'video' && int(disposition(s).attached_pic) !== 1);
  const audio = streams.find((s) => s.codec_type === 'audio');
  return {
    version: PROBE_VERSION,
    format: formatName,
    duration_s: formatDuration,
    video: video ? videoInfo(video, formatName, formatDuration) : null,
    audio: audio ? audioInfo(audio, formatDuration) : null,
  };
}

function videoInfo(s: Json, formatName: string, formatDuration: number | null): VideoStreamInfo {
  const codec = str(s.codec_name) ?? 'unknown';
  const nbFrames = int(s.nb_frames);
  const level = int(s.level);
  return {
    index: int(s.index) ?? 0,
    codec,
    codec_tag: known(s.codec_tag_string, ['[0][0][0][0]']),
    profile: known(s.profile, ['unknown']),
    level: level === null || level === -99 ? null : level,
    width: int(s.width) ?? 0,
    height: int(s.height) ?? 0,
    sar: ratio(s.sample_aspect_ratio),
    dar: ratio(s.display_aspect_ratio),
    field_order: known(s.field_order, ['unknown']),
    pix_fmt: known(s.pix_fmt, ['unknown', 'none']),
    time_base: str(s.time_base) ?? '0/0',
    frame_rate: reduced(s.r_frame_rate),
    avg_frame_rate: reduced(s.avg_frame_rate),
    color_range: known(s.color_range, ['unknown']),
    color_space: known(s.color_space, ['unknown']),
    color_transfer: known(s.color_transfer, ['unknown']),
    color_primaries: known(s.color_primaries, ['unknown']),
    extradata_hash: str(s.extradata_hash),
    rotation: rotationOf(s),
    duration_s: num(s.duration) ?? formatDuration,
    nb_frames: nbFrames,
    still: isStill(codec, formatName, nbFrames, disposition(s)),
  };
}

function audioInfo(s: Json, formatDuration: number | null): AudioStreamInfo {
  return {
    index: int(s.index) ?? 0,
    codec: str(s.codec_name) ?? 'unknown',
    sample_rate: int(s.sample_rate) ?? 0,
    channels: int(s.channels) ?? 0,
    channel_layout: known(s.channel_layout, ['unknown']),
    duration_s: num(s.duration) ?? formatDuration,
  };
}

/** Codecs that hold one picture when the stream has one frame. */
const IMAGE_CODECS = new Set(['png', 'mjpeg', 'jpegls', 'jpeg2000', 'webp', 'gif', 'bmp', 'tiff', 'qoi', 'ppm', 'pgm', 'pbm', 'pam']);

/**
 * A still picture, when any of:
 * - the input was read by an image demuxer: `image2` (chosen by extension) or
 *   one of the `*_pipe` demuxers (`png_pipe`, `jpeg_pipe`, `webp_pipe`,
 *   `bmp_pipe`, `tiff_pipe` ..., chosen by content); each reads one picture here
 *   since the service passes `-pattern_type none`;
 * - an image codec (IMAGE_CODECS) with exactly one frame, e.g. a one-frame GIF
 *   (an animated GIF, an MJPEG movie or a PNG-in-MOV animation has more);
 * - ffprobe marks the stream `still_image`.
 * `apng` is never still (it is the animated form).
 */
export function isStill(codec: string, formatName: string, nbFrames: number | null, disp: Json): boolean {
  if (codec === 'apng') return false;
  const demuxers = formatName.split(',');
  if (demuxers.some((name) => name === 'image2' || name.endsWith('_pipe'))) return true;
  if (IMAGE_CODECS.has(codec) && nbFrames === 1) return true;
  return int(disp.still_image) === 1;
}

function rotationOf(s: Json): number {
  const sideData = Array.isArray(s.side_data_list) ? s.side_data_list.filter(isObject) : [];
  const matrix = sideData.find((d) => d.side_data_type === 'Display Matrix' && num(d.rotation) !== null);
  if (matrix) return quarterTurns(-num(matrix.rotation)!);
  const tags = isObject(s.tags) ? s.tags : {};
  const tag = num(tags.rotate);
  return tag === null ? 0 : quarterTurns(tag);
}

function quarterTurns(degrees: number): number {
  const turned = (Math.round(degrees / 90) * 90) % 360;
  return turned < 0 ? turned + 360 : turned + 0; // + 0 turns -0 into 0
}

function disposition(s: Json): Json {
  return isObject(s.disposition) ? s.disposition : {};
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

function known(v: unknown, unknowns: readonly string[]): string | null {
  const s = str(v);
  return s === null || unknowns.includes(s) ? null : s;
}

/** `W:H` with both parts positive; `0:1`, `N/A` and the rest are unknown. */
function ratio(v: unknown): string | null {
  const s = str(v);
  return s !== null && /^[1-9][0-9]*:[1-9][0-9]*$/.test(s) ? s : null;
}

/** `num/den` in lowest terms; `0/0` when unknown. */
function reduced(v: unknown): string {
  const m = /^(\d+)\/(\d+)$/.exec(str(v) ?? '');
  if (!m) return '0/0';
  const [n, d] = [Number(m[1]), Number(m[2])];
  if (n === 0 || d === 0) return `${n}/${d}`;
  const g = gcd(n, d);
  return `${n / g}/${d / g}`;
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

function num(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v !== 'string' || !/^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(v)) return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

function int(v: unknown): number | null {
  const n = num(v);
  return n !== null && Number.isInteger(n) ? n : null;
}
