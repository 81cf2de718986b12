import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { toolPath } from '../../service/media';
import { getAsset } from './assets';
import type { client } from './http';
import { alive } from './processes';

/**
 * Pieces of the export black-box tests (docs/api.md "Export `POST /timeline/{id}:export`"):
 * waiting for an export job, reading its output the way a studio does
 * (GET /assets/{id}) and looking at that file with the real ffprobe and
 * ffmpeg (argument arrays, no shell), and what an export leaves on disk and
 * in the process table.
 */

type Client = ReturnType<typeof client>;

const FINISHED = ['succeeded', 'failed', 'cancelled'];
export const JOB_KEYS = [
  'cancel_requested_at',
  'created_at',
  'data',
  'finished_at',
  'id',
  'kind',
  'last_error',
  'progress_den',
  'progress_num',
  'state',
  'studio_id',
  'timeline_id',
  'title',
  'updated_at',
];

function tool(name: 'ffmpeg' | 'ffprobe'): string {
  const bin = toolPath(name);
  if (bin === null) throw new Error(`${name} is required for the export tests`);
  return bin;
}

/** A tool's stdout (and stderr on failure, in the error). */
function run(bin: string, args: string[], maxBuffer = 64 * 1024 * 1024): Buffer {
  try {
    return execFileSync(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer, timeout: 60_000 });
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new Error(`${bin} ${JSON.stringify(args)} failed: ${stderr || String(err)}`);
  }
}

/**
 * Node 20's default agent keeps connections alive and reuses an idle one. The
 * service used to close idle ones after 5 s, so a request sent after a few seconds
 * of ffprobe work could meet a socket closing under it ('socket hang up'); it now
 * keeps them 310 s (docs/api.md, Connections and limits; test/http-limits.test.ts).
 * These tests still open a connection per request.
 */
export function freshConnections(): void {
  http.globalAgent = new http.Agent({ keepAlive: false });
}

/** Polls GET /jobs/{id} (capability jobs) until the job has finished; returns it. */
export async function waitForJob(c: Client, id: string, ms = 30_000): Promise<any> {
  const deadline = Date.now() + ms;
  for (;;) {
    const res = await c.get(`/jobs/${id}`);
    assert.equal(res.status, 200, res.text);
    if (FINISHED.includes(res.json.state)) return res.json;
    if (Date.now() > deadline) throw new Error(`job ${id} did not finish in ${ms} ms: ${res.text}`);
    await new Promise((r) => setTimeout(r, 40));
  }
}

/** Polls GET /jobs/{id} until `ok(job)`; returns the job. */
export async function waitForJobState(c: Client, id: string, ok: (job: any) => boolean, what: string, ms = 20_000): Promise<any> {
  const deadline = Date.now() + ms;
  for (;;) {
    const res = await c.get(`/jobs/${id}`);
    assert.equal(res.status, 200, res.text);
    if (ok(res.json)) return res.json;
    if (FINISHED.includes(res.json.state)) throw new Error(`job ${id} finished while waiting for ${what}: ${res.text}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${res.text}`);
    await new Promise((r) => setTimeout(r, 40));
  }
}

/** Reads an asset's bytes with GET /assets/{id}, writes them to `file`; returns the answer's headers. */
export async function downloadAsset(port: number, token: string, assetId: string, file: string) {
  const res = await getAsset(port, token, `/assets/${assetId}`);
  assert.equal(res.status, 200, res.body.toString().slice(0, 500));
  writeFileSync(file, res.body);
  return { contentType: String(res.headers['content-type']), etag: String(res.headers.etag), size: res.body.length };
}

export interface ProbeStream {
  index: number;
  codec_type: string;
  codec_name: string;
  profile?: string;
  level?: number;
  width?: number;
  height?: number;
  pix_fmt?: string;
  r_frame_rate: string;
  time_base: string;
  duration?: string;
  sample_rate?: string;
  channels?: number;
  nb_frames?: string;
}

export interface Probe {
  streams: ProbeStream[];
  format: { format_name: string; duration?: string; start_time?: string };
}

/** `ffprobe -show_format -show_streams` as JSON. */
export function probeFile(file: string): Probe {
  return JSON.parse(run(tool('ffprobe'), ['-v', 'error', '-show_format', '-show_streams', '-of', 'json', `file:${file}`]).toString());
}

export interface Packet {
  pts: number;
  dts: number;
  duration: number;
  key: boolean;
  hash: string;
}

/** The video packets of the first video stream in file order (decode order), with an MD5 of each one's bytes. */
export function videoPackets(file: string): Packet[] {
  const out = JSON.parse(
    run(tool('ffprobe'), [
      '-v',
      'error',
      '-select_streams',
      'v:0',
      '-show_packets',
      '-show_data_hash',
      'md5',
      '-show_entries',
      'packet=pts,dts,duration,flags,data_hash',
      '-of',
      'json',
      `file:${file}`,
    ]).toString(),
  );
  return (out.packets as any[]).map((p) => ({
    pts: Number(p.pts),
    dts: Number(p.dts),
    duration: Number(p.duration),
    key: String(p.flags).startsWith('K'),
    hash: String(p.data_hash),
  }));
}

/** A number of the form `25/1` or `30000/1001`. */
export function rate(text: string): number {
  const [n, d] = text.split('/').map(Number);
  return n! / (d ?? 1);
}

/** The mean luma (0..255, full range gray) of the frame shown at `seconds`. */
export function frameMean(file: string, seconds: number): number {
  const gray = frameGray(file, seconds);
  let sum = 0;
  for (const b of gray) sum += b;
  return sum / gray.length;
}

/** The frame shown at `seconds` as 8-bit gray pixels. */
export function frameGray(file: string, seconds: number): Buffer {
  const bytes = run(tool('ffmpeg'), [
    '-hide_banner',
    '-loglevel',
    'error',
    '-nostdin',
    '-i',
    `file:${file}`,
    '-ss',
    String(seconds),
    '-frames:v',
    '1',
    '-f',
    'rawvideo',
    '-pix_fmt',
    'gray',
    'pipe:1',
  ]);
  assert.ok(bytes.length > 0, `no frame at ${seconds} s in ${file}`);
  return bytes;
}

/** Mean absolute difference of two same-size gray frames. */
export function frameDifference(a: Buffer, b: Buffer): number {
  assert.equal(a.length, b.length);
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i]! - b[i]!);
  return sum / a.length;
}

/** ffmpeg's volumedetect over [from, to) of the audio: mean and max in dB (-Infinity for none). */
export function loudness(file: string, from: number, to: number): { mean: number; max: number } {
  const bin = tool('ffmpeg');
  // volumedetect reports at log level info, on stderr. The cut is made in the graph: an
  // output -ss/-t would drop frames only after the filter had seen them all.
  const args = ['-hide_banner', '-nostats', '-nostdin', '-i', `file:${file}`, '-map', '0:a:0', '-af', `atrim=start=${from}:end=${to},volumedetect`, '-f', 'null', '-'];
  const r = spawnSync(bin, args, { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  const db = (name: string) => {
    const m = new RegExp(`${name}: (-?[0-9.]+|-inf) dB`).exec(r.stderr);
    assert.ok(m, `no ${name} in ${r.stderr.slice(-1000)}`);
    return m[1] === '-inf' ? -Infinity : Number(m[1]);
  };
  return { mean: db('mean_volume'), max: db('max_volume') };
}

/** Names in a directory (none when it does not exist). */
export function entries(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

/** The blobs of a data dir (DIR/blobs, without its .tmp). */
export function blobs(dataDir: string): string[] {
  return entries(join(dataDir, 'blobs')).filter((n) => n !== '.tmp');
}

/** What an export may be writing: DIR/blobs/.tmp's entries. */
export function tmpEntries(dataDir: string): string[] {
  return entries(join(dataDir, 'blobs', '.tmp'));
}

/** A blob file of the data dir by its sha256 (any extension). */
export function blobPath(dataDir: string, sha256: string): string {
  const name = blobs(dataDir).find((n) => n === sha256 || n.startsWith(`${sha256}.`));
  assert.ok(name, `no blob ${sha256} in ${dataDir}`);
  return join(dataDir, 'blobs', name);
}

/**
 * Live processes (zombies excluded) other than `except` whose command line
 * mentions `text` (a data dir: the service's ffmpeg is given its blobs and
 * output by path).
 */
export function processesMentioning(text: string, except: number[]): { pid: number; cmdline: string }[] {
  const found: { pid: number; cmdline: string }[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (except.includes(pid) || pid === process.pid) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
    } catch {
      continue;
    }
    if (cmdline.includes(text) && alive(pid)) found.push({ pid, cmdline });
  }
  return found;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * An ffmpeg for the service (BACKLOT_FFMPEG) that notes its pid, then
 * behaves as `mode(dir)` says, read at each start:
 * - a file `gate` exists: waits until it is removed, then runs the real one;
 * - `mode` holds `fail`: writes a line to stderr and exits 1;
 * - `mode` holds `slow`: the real one reading its first input at its own
 *   rate (`-re`), so an export takes about as long as its sequence;
 * - `mode` holds `tee`: the real one, its stdout (the `-progress` blocks the
 *   service reads) also appended to `progress` as it comes (through a FIFO and
 *   tee(1), so ffmpeg is still exec'd and its exit code is the wrapper's);
 * - otherwise: the real ffmpeg (exec, so the pid noted is ffmpeg's).
 */
export function ffmpegWrapper(dir: string): { path: string; gate: string; mode: string; progress: string; pids(): number[] } {
  const real = tool('ffmpeg');
  const path = join(dir, 'ffmpeg-wrapper');
  const gate = join(dir, 'gate');
  const mode = join(dir, 'mode');
  const progress = join(dir, 'ffmpeg-progress');
  const pidFile = join(dir, 'ffmpeg-pids');
  writeFileSync(
    path,
    [
      '#!/bin/sh',
      `echo $$ >> ${quote(pidFile)}`,
      `while [ -e ${quote(gate)} ]; do sleep 0.05; done`,
      `m=$(cat ${quote(mode)} 2>/dev/null)`,
      `if [ "$m" = fail ]; then echo 'backlot test: this ffmpeg refuses to run' >&2; exit 1; fi`,
      `if [ "$m" = slow ]; then exec ${quote(real)} -re "$@"; fi`,
      `if [ "$m" = tee ]; then f=${quote(join(dir, 'stdout-'))}$$; rm -f "$f"; mkfifo "$f"; tee -a ${quote(progress)} < "$f" & exec ${quote(real)} "$@" > "$f"; fi`,
      `exec ${quote(real)} "$@"`,
      '',
    ].join('\n'),
  );
  chmodSync(path, 0o755);
  return {
    path,
    gate,
    mode,
    progress,
    pids: () => (existsSync(pidFile) ? readFileSync(pidFile, 'utf8').trim().split('\n').filter(Boolean).map(Number) : []),
  };
}
