import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';

/**
 * The export bench's media side (bench/README.md, export): the cached
 * fixture clips, the hand-written ffmpeg commands the service's exports are
 * compared with, `cat` as the disk's floor, output checks with ffprobe, and a
 * small server-sent events reader. Processes are argument arrays, never a
 * shell string.
 */

export interface Fixture {
  count: number;
  seconds: number;
  width: number;
  height: number;
  fps: number;
  sampleRate: number;
}

/** Every clip is encoded with these, so the plan can copy them (same SPS/PPS, level, time base). */
const CLIP_VIDEO = ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-pix_fmt', 'yuv420p', '-profile:v', 'high', '-g', '60'];
const CLIP_AUDIO = ['-c:a', 'aac', '-b:a', '128k', '-ar', '48000', '-ac', '2'];

/** `.bench/export/<settings>/clip-NN.mp4`, made once (a temp name renamed into place) and reused. */
export async function ensureClips(ffmpeg: string, root: string, f: Fixture): Promise<string[]> {
  const dir = join(root, '.bench', 'export', `h264-${f.width}x${f.height}p${f.fps}-${f.seconds}s-v2`);
  mkdirSync(dir, { recursive: true });
  const files = Array.from({ length: f.count }, (_, i) => join(dir, `clip-${String(i).padStart(2, '0')}.mp4`));
  const missing = files.filter((file) => !existsSync(file));
  if (missing.length === 0) {
    console.log(`fixtures: ${f.count} clips reused from ${dir}`);
    return files;
  }
  console.log(`fixtures: making ${missing.length} of ${f.count} clips in ${dir} (once; about 1-2 min per 30 s clip on 2 cores)`);
  const started = performance.now();
  let made = 0;
  for (const [i, file] of files.entries()) {
    if (existsSync(file)) continue;
    const tmp = `${file}.part`;
    const t0 = performance.now();
    // One picture source for all (testsrc2: moving, detailed, cheap to draw), a different hue per clip. The
    // sound is steady (pink noise under a tone, a seed and pitch per clip): sine beeps once a second made the
    // AAC encoder's cost depend on where each clip's sound falls on its 1024-sample frames (2x), so a graph
    // that trims each clip to its exact length encoded the same beeps at half the cost of one that did not.
    const picture = `testsrc2=size=${f.width}x${f.height}:rate=${f.fps}:duration=${f.seconds},hue=h=${(i * 36) % 360}`;
    const noise = `anoisesrc=color=pink:amplitude=0.1:seed=${i + 1}:sample_rate=${f.sampleRate}:duration=${f.seconds}`;
    const tone = `sine=frequency=${220 + 55 * i}:sample_rate=${f.sampleRate}:duration=${f.seconds}`;
    await runFfmpeg(ffmpeg, [
      '-hide_banner', '-nostdin', '-y', '-v', 'error',
      '-f', 'lavfi', '-i', picture, '-f', 'lavfi', '-i', noise, '-f', 'lavfi', '-i', tone,
      '-filter_complex', '[1:a][2:a]amix=inputs=2,volume=2[a]', '-map', '0:v', '-map', '[a]',
      '-t', String(f.seconds), ...CLIP_VIDEO, ...CLIP_AUDIO, '-f', 'mp4', `file:${tmp}`,
    ]).catch((err: unknown) => {
      rmSync(tmp, { force: true });
      throw err;
    });
    renameSync(tmp, file);
    made++;
    const each = (performance.now() - started) / made;
    console.log(
      `  clip ${i + 1}/${f.count}: ${(statSync(file).size / 1e6).toFixed(1)} MB in ${secs(performance.now() - t0)} s` +
        ` (about ${secs(each * (missing.length - made))} s left)`,
    );
  }
  return files;
}

/**
 * The copy a person would write: the concat demuxer joins the video by
 * stream copy; the ten files again as inputs, their sound concatenated and
 * encoded once.
 */
export function handCopyArgs(files: string[], listFile: string, out: string, audioBitrate: string, sampleRate: number): string[] {
  const sound = files.map((_, i) => `[${i + 1}:a]`).join('') + `concat=n=${files.length}:v=0:a=1[a]`;
  return [
    '-hide_banner', '-nostdin', '-y', '-v', 'error',
    '-f', 'concat', '-safe', '0', '-i', listFile,
    ...files.flatMap((f) => ['-i', f]),
    '-filter_complex', sound,
    '-map', '0:v', '-c:v', 'copy',
    '-map', '[a]', '-c:a', 'aac', '-b:a', audioBitrate, '-ar', String(sampleRate), '-ac', '2',
    '-movflags', '+faststart', out,
  ];
}

export function concatList(files: string[]): string {
  return files.map((f) => `file '${f.replace(/'/g, "'\\''")}'`).join('\n') + '\n';
}

/** The conform a person would write: scale/pad/fps/format per clip, one concat of picture and sound, one encode. */
export function handConformArgs(
  files: string[],
  out: string,
  t: { width: number; height: number; fps: number; sampleRate: number },
  encode: { preset: string; crf: string; audioBitrate: string },
): string[] {
  const { width: W, height: H } = t;
  const per = files.map(
    (_, i) => `[${i}:v]scale=${W}:${H}:force_original_aspect_ratio=decrease,pad=${W}:${H}:(ow-iw)/2:(oh-ih)/2,setsar=1,fps=${t.fps},format=yuv420p[v${i}]`,
  );
  const joined = files.map((_, i) => `[v${i}][${i}:a]`).join('') + `concat=n=${files.length}:v=1:a=1[v][a]`;
  return [
    '-hide_banner', '-nostdin', '-y', '-v', 'error',
    ...files.flatMap((f) => ['-i', f]),
    '-filter_complex', [...per, joined].join(';'),
    '-map', '[v]', '-map', '[a]',
    '-c:v', 'libx264', '-preset', encode.preset, '-crf', encode.crf, '-pix_fmt', 'yuv420p',
    '-c:a', 'aac', '-b:a', encode.audioBitrate, '-ar', String(t.sampleRate), '-ac', '2',
    '-movflags', '+faststart', out,
  ];
}

/**
 * Children started here, each in its own session (`detached`), as the service's media module starts
 * ffmpeg: with Linux's autogroup scheduling a session is one CPU share, so a child left in this
 * process's session would share one share with everything else in it while the service's ffmpeg
 * had one of its own (on a busy machine the hand-written conform ran up to 1.7x slower for that
 * alone). Ended by `endChildren` on an interrupt: they are outside the terminal's process group.
 */
const live = new Set<ChildProcess>();

export function endChildren(): void {
  for (const child of live) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

function track(child: ChildProcess): ChildProcess {
  live.add(child);
  child.on('close', () => live.delete(child));
  return child;
}

/** Runs ffmpeg to completion; rejects on a non-zero exit with the end of its stderr. */
export function runFfmpeg(ffmpeg: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(ffmpeg, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    track(child);
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));
    child.on('error', reject);
    child.on('close', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`ffmpeg ended with ${signal ?? code}: ${stderr.trim()}`)),
    );
  });
}

/** `cat FILES > out`: the same bytes, read and written once, no fsync (as the hand-written commands). */
export function catInto(files: string[], out: string): Promise<void> {
  const fd = openSync(out, 'w', 0o600);
  return new Promise<void>((resolve, reject) => {
    const child = spawn('cat', files, { stdio: ['ignore', fd, 'pipe'], detached: true });
    track(child);
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`cat exited ${code}`))));
  }).finally(() => closeSync(fd));
}

/** What the service does to its output before adopting it (service/timeline/export.ts hashAndSync), timed in two parts. */
export async function hashThenSync(file: string): Promise<{ hashMs: number; syncMs: number }> {
  const handle = await open(file, 'r');
  try {
    const t0 = performance.now();
    const hash = createHash('sha256');
    const buffer = Buffer.allocUnsafe(4 * 1024 * 1024);
    for (let at = 0; ; ) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, at);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
      at += bytesRead;
    }
    hash.digest('hex');
    const t1 = performance.now();
    await handle.sync();
    return { hashMs: t1 - t0, syncMs: performance.now() - t1 };
  } finally {
    await handle.close();
  }
}

export interface OutputFacts {
  duration: number;
  video: string;
  audio: string;
  size: string;
  sampleRate: number;
  bytes: number;
}

/** ffprobe of a file, or of a URL with headers (the service's asset, read through the API). */
export function probeOutput(ffprobe: string, input: string, headers?: string): Promise<OutputFacts> {
  const args = ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams'];
  if (headers) args.push('-headers', headers);
  args.push(input);
  return new Promise((resolve, reject) => {
    const child = spawn(ffprobe, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`ffprobe of ${input} failed: ${err.trim()}`));
      const j = JSON.parse(out) as { format: { duration?: string; size?: string }; streams: Record<string, string | number>[] };
      const v = j.streams.find((s) => s.codec_type === 'video');
      const a = j.streams.find((s) => s.codec_type === 'audio');
      resolve({
        duration: Number(j.format.duration ?? NaN),
        video: String(v?.codec_name ?? 'none'),
        audio: String(a?.codec_name ?? 'none'),
        size: v ? `${v.width}x${v.height}` : '-',
        sampleRate: Number(a?.sample_rate ?? 0),
        bytes: Number(j.format.size ?? NaN),
      });
    });
  });
}

/** Why an output is not the expected H.264 + AAC file of `seconds`, or null when it is. */
export function outputProblem(o: OutputFacts, seconds: number, slack: number, size: string, sampleRate: number): string | null {
  const problems: string[] = [];
  if (!(Math.abs(o.duration - seconds) < slack)) problems.push(`lasts ${o.duration} s, not ${seconds}`);
  if (o.video !== 'h264') problems.push(`video ${o.video}`);
  if (o.audio !== 'aac') problems.push(`audio ${o.audio}`);
  if (o.size !== size) problems.push(`size ${o.size}`);
  if (o.sampleRate !== sampleRate) problems.push(`sound at ${o.sampleRate} Hz`);
  return problems.length ? problems.join(', ') : null;
}

/** CPU seconds of a process's waited-for children (cutime + cstime, Linux /proc), or null elsewhere. */
export function childCpuSeconds(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return null;
  }
}

export interface SseStream {
  close(): void;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
}

/** Reads `text/event-stream` frames (event + data lines) from a GET and hands each to `onEvent`. */
export function readEvents(url: string, token: string, onEvent: (event: string, data: string) => void): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' }, agent: false }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return reject(new Error(`GET ${url} answered ${res.statusCode}`));
      }
      let buffered = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffered += chunk;
        for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
          const frame = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          let event = 'message';
          const data: string[] = [];
          for (const line of frame.split('\n')) {
            if (line.startsWith('event:')) event = line.slice(6).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
          }
          if (data.length > 0) onEvent(event, data.join('\n'));
        }
      });
      const ended = new Promise<void>((r) => res.on('close', () => r()));
      resolve({ close: () => req.destroy(), ended });
    });
    req.on('error', reject);
    req.end();
  });
}

export const secs = (ms: number) => (ms / 1000).toFixed(ms < 10_000 ? 2 : 1);

export function removeFile(path: string): void {
  rmSync(path, { force: true });
}
