import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { toolPath } from '../../service/media';

/**
 * Media fixtures made with the real ffmpeg (argument arrays, no shell). Small
 * and short on purpose (320x180, a second or two, a fast x264 preset).
 *
 * Identical options give identical probe fields, extradata hash included
 * (x264 writes only SPS and PPS into the avcC extradata; its options/version
 * SEI is in-band, in the first frame), whatever `seconds` is.
 */

const ABSENT =
  'ffmpeg and ffprobe are required for the media tests and were not found: install ffmpeg ' +
  '(apt-get install ffmpeg; .ci/run does) or set BACKLOT_FFMPEG and BACKLOT_FFPROBE.';

export function ffmpegAvailable(): boolean {
  return toolPath('ffmpeg') !== null && toolPath('ffprobe') !== null;
}

/** For a `before` hook: fails the suite loudly (never skips) when the tools are missing. */
export function requireFfmpeg(): void {
  if (!ffmpegAvailable()) throw new Error(ABSENT);
}

/** Runs ffmpeg with `args` (after `-hide_banner -loglevel error -nostdin -y`); throws with its stderr. */
export function ffmpeg(args: string[]): void {
  const bin = toolPath('ffmpeg');
  if (bin === null) throw new Error(ABSENT);
  try {
    execFileSync(bin, ['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', ...args], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new Error(`ffmpeg ${JSON.stringify(args)} failed: ${stderr || String(err)}`);
  }
}

export interface VideoOptions {
  width?: number;
  height?: number;
  /** A number or `num/den` such as `30000/1001`. */
  fps?: number | string;
  seconds?: number;
  pixFmt?: string;
  profile?: 'high' | 'main' | 'baseline';
  codec?: 'libx264' | 'libx265' | 'mpeg4';
  /** The sample entry in MP4/MOV: `avc1` (ffmpeg's default for H.264) or `avc3`. */
  tag?: 'avc1' | 'avc3' | 'hvc1' | 'hev1';
  /** A 440 Hz sine as an AAC track. */
  audio?: boolean;
  /** Clockwise degrees a player turns the picture (0, 90, 180, 270): the MP4 track matrix. */
  rotate?: 0 | 90 | 180 | 270;
  crf?: number;
  /**
   * x264/x265 preset, default `superfast`. (`ultrafast` turns CABAC and 8x8
   * transforms off, so x264 then writes Constrained Baseline whatever the profile.)
   */
  preset?: string;
  gop?: number;
}

export function makeVideo(file: string, options: VideoOptions = {}): string {
  const { width = 320, height = 180, fps = 25, seconds = 1, codec = 'libx264' } = options;
  const args = ['-f', 'lavfi', '-i', `testsrc=size=${width}x${height}:rate=${fps}`];
  if (options.audio) args.push('-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000');
  args.push('-map', '0:v');
  if (options.audio) args.push('-map', '1:a', '-c:a', 'aac', '-b:a', '64k');
  args.push('-t', String(seconds), '-c:v', codec, '-pix_fmt', options.pixFmt ?? 'yuv420p');
  if (codec === 'mpeg4') {
    args.push('-q:v', String(options.crf ?? 5));
  } else {
    args.push('-preset', options.preset ?? 'superfast', '-crf', String(options.crf ?? 28));
    if (codec === 'libx265') args.push('-x265-params', 'log-level=error');
  }
  if (options.profile) args.push('-profile:v', options.profile);
  if (options.gop !== undefined) args.push('-g', String(options.gop));
  if (options.tag) args.push('-tag:v', options.tag);
  args.push(file);
  ffmpeg(args);
  if (options.rotate) setTrackRotation(file, options.rotate);
  return file;
}

export interface AudioOptions {
  seconds?: number;
  sampleRate?: number;
  channels?: number;
  /** An image file to attach as cover art (m4a only): a video stream marked attached_pic. */
  cover?: string;
}

/** `.wav` (PCM), `.m4a` (AAC) or `.mp3`, by the file's extension. */
export function makeAudio(file: string, options: AudioOptions = {}): string {
  const { seconds = 1, sampleRate = 48000, channels = 1 } = options;
  const args = ['-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=${sampleRate}`];
  if (options.cover) args.push('-i', options.cover, '-map', '0:a', '-map', '1:v', '-c:v', 'png', '-disposition:v:0', 'attached_pic');
  const codec = { '.wav': 'pcm_s16le', '.m4a': 'aac', '.mp3': 'libmp3lame' }[path.extname(file)];
  if (!codec) throw new Error(`makeAudio: use .wav, .m4a or .mp3, not ${file}`);
  args.push('-t', String(seconds), '-ac', String(channels), '-c:a', codec, file);
  ffmpeg(args);
  return file;
}

/** One picture; the format follows the extension (`.png`, `.jpg`, `.webp`, `.gif`, `.bmp`, `.tiff`). */
export function makeImage(file: string, options: { width?: number; height?: number } = {}): string {
  const { width = 64, height = 36 } = options;
  ffmpeg(['-f', 'lavfi', '-i', `testsrc=size=${width}x${height}:rate=1`, '-frames:v', '1', file]);
  return file;
}

/**
 * Writes the display matrix of the video track of an MP4/MOV file in place
 * (tkhd), as a camera does for a phone held upright (90: a=0 b=1 c=-1 d=0).
 * ffmpeg 5.1 cannot set one while encoding, hence the patch.
 */
export function setTrackRotation(file: string, clockwise: 0 | 90 | 180 | 270): void {
  const data = readFileSync(file);
  const moov = boxes(data, 0, data.length).find((b) => b.type === 'moov');
  if (!moov) throw new Error(`setTrackRotation: ${file} has no moov box (MP4/MOV only)`);
  const trak = boxes(data, moov.body, moov.end).find((t) => t.type === 'trak' && handlerOf(data, t) === 'vide');
  const tkhd = trak && boxes(data, trak.body, trak.end).find((b) => b.type === 'tkhd');
  if (!tkhd) throw new Error(`setTrackRotation: ${file} has no video track header`);
  const version = data[tkhd.body]!;
  // version/flags 4, times and ids (v0: 20 bytes, v1: 32), reserved 8, layer, group, volume, reserved 8.
  const matrixAt = tkhd.body + 4 + (version === 1 ? 32 : 20) + 8 + 8;
  const [a, b, c, d] = { 0: [1, 0, 0, 1], 90: [0, 1, -1, 0], 180: [-1, 0, 0, -1], 270: [0, -1, 1, 0] }[clockwise];
  // a b u / c d v / x y w: 16.16 fixed point, u v w 2.30 (w = 1); no translation.
  const matrix = [a! * 65536, b! * 65536, 0, c! * 65536, d! * 65536, 0, 0, 0, 1 << 30];
  matrix.forEach((v, i) => data.writeInt32BE(v, matrixAt + i * 4));
  writeFileSync(file, data);
}

/** Types of the top-level MP4 boxes, in file order (`ftyp`, `moov`, `mdat` ...). */
export function topLevelBoxes(file: string): string[] {
  const data = readFileSync(file);
  return boxes(data, 0, data.length).map((b) => b.type);
}

interface Box {
  type: string;
  body: number;
  end: number;
}

function boxes(data: Buffer, start: number, end: number): Box[] {
  const found: Box[] = [];
  for (let at = start; at + 8 <= end; ) {
    let size = data.readUInt32BE(at);
    let header = 8;
    if (size === 1) {
      size = Number(data.readBigUInt64BE(at + 8));
      header = 16;
    } else if (size === 0) {
      size = end - at;
    }
    if (size < header) break;
    found.push({ type: data.toString('latin1', at + 4, at + 8), body: at + header, end: at + size });
    at += size;
  }
  return found;
}

function handlerOf(data: Buffer, trak: Box): string | null {
  const mdia = boxes(data, trak.body, trak.end).find((b) => b.type === 'mdia');
  const hdlr = mdia && boxes(data, mdia.body, mdia.end).find((b) => b.type === 'hdlr');
  return hdlr ? data.toString('latin1', hdlr.body + 8, hdlr.body + 12) : null;
}
