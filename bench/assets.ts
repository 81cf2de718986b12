import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdtempSync, openSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { cpuTimes, startServer, type ChildServer } from './harness';
import { backlot, BACKLOT } from './common';

/**
 * Assets (see bench/README.md): a streamed upload against a bare node:http
 * handler that does only the necessary work, adopt of a big file (hash time
 * and the rest apart), range-read throughput against `cat`, and thumbnails
 * of a 4000x3000 JPEG cold and cached. Both servers are child processes.
 */

const BARE_UPLOAD = join(__dirname, 'bare-upload-server.js');
const MiB = 1024 * 1024;
const BLOCK = 4 * MiB;
/** Upload rounds per server: the kernel's writeback makes single rounds swing two-fold (bench/README.md). */
const ROUNDS = 5;
const UPLOAD_TARGET = 0.8;
const ADOPT_REST_TARGET_MS = 50;
const CACHED_THUMB_TARGET_MS = 2;

export async function runAssetsBench(): Promise<void> {
  const mib = Number(process.env.BACKLOT_BENCH_ASSET_MIB ?? 1024);
  if (!(mib >= 4)) throw new Error('BACKLOT_BENCH_ASSET_MIB must be at least 4.');
  const size = Math.floor(mib / 4) * BLOCK;
  const dataDir = mkdtempSync(join(tmpdir(), 'backlot-bench-'));
  const bareDir = mkdtempSync(join(tmpdir(), 'backlot-bench-bare-'));
  const servers: ChildServer[] = [];
  try {
    backlot('studio', 'add', 'bench', '--data-dir', dataDir);
    const token = backlot('token', 'create', '--studio', 'bench', '--caps', 'assets', '--data-dir', dataDir).trim();
    const service = await startServer('backlot serve', [BACKLOT, 'serve', '--port', '0', '--data-dir', dataDir]);
    servers.push(service);
    const bare = await startServer('bare upload server', [BARE_UPLOAD, bareDir]);
    servers.push(bare);
    const api = `${service.url}/api/v1`;
    const block = randomBytes(BLOCK);
    console.log(`assets: ${mib} MiB bodies, ${ROUNDS} rounds each, median shown. The machine's other load moves every figure.\n`);

    // 1. Upload: the same streaming client against both, alternating, distinct bytes every time.
    const bareRates: number[] = [];
    const serviceRates: number[] = [];
    const bareCpu: CpuSplit[] = [];
    const serviceCpu: CpuSplit[] = [];
    let seed = 0;
    let lastAsset = null as { id: string; sha256: string } | null;
    // The order alternates per round, so neither side always follows the other's writeback;
    // `sync` first, so no round starts with the previous one's dirty pages still queued.
    for (let round = 0; round < ROUNDS; round++) {
      const runBare = async () => {
        execFileSync('sync');
        const cpu = cpuTimes(bare.pid);
        bareRates.push((await streamUpload(`${bare.url}/`, null, size, block, ++seed)).mibPerSec);
        bareCpu.push(cpuSplitPerGiB(bare.pid, cpu, size));
        for (const name of readdirSync(bareDir)) rmSync(join(bareDir, name));
      };
      const runService = async () => {
        execFileSync('sync');
        const cpu = cpuTimes(service.pid);
        const up = await streamUpload(`${api}/assets?kind=other`, token, size, block, ++seed);
        serviceCpu.push(cpuSplitPerGiB(service.pid, cpu, size));
        if (up.status !== 201) throw new Error(`upload answered ${up.status}: ${up.text}`);
        serviceRates.push(up.mibPerSec);
        lastAsset = JSON.parse(up.text);
      };
      if (round % 2 === 0) await runBare().then(runService);
      else await runService().then(runBare);
    }
    const bareUp = median(bareRates);
    const svcUp = median(serviceRates);
    const ratio = svcUp / bareUp;
    console.log('upload (MiB/s, client streams a Content-Length body in 4 MiB writes)');
    console.log(table([
      ['server', 'MiB/s', 'all rounds', 'user s/GiB', 'kernel s/GiB', 'vs bare', 'target', 'result'],
      ['bare node:http', bareUp.toFixed(0), bareRates.map((r) => r.toFixed(0)).join(' '), fmtCpu(bareCpu, 'user'), fmtCpu(bareCpu, 'sys'), '', '', ''],
      ['backlot', svcUp.toFixed(0), serviceRates.map((r) => r.toFixed(0)).join(' '), fmtCpu(serviceCpu, 'user'), fmtCpu(serviceCpu, 'sys'), pct(ratio), `>= ${UPLOAD_TARGET * 100} %`, ratio >= UPLOAD_TARGET ? 'met' : 'not met'],
    ]));

    // 2. Adopt: a file written (and fsynced) into the stage folder, then adopted by hardlink.
    const stage = join(dataDir, 'studios', 'bench', 'stage');
    const adopts: { hash: number; rest: number; total: number }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const file = join(stage, `adopt-${round}.bin`);
      writeFile(file, size, block, ++seed);
      const started = performance.now();
      const res = await call(`${api}/assets:adopt`, token, 'application/json', Buffer.from(JSON.stringify({ path: file, kind: 'other' })));
      const total = performance.now() - started;
      if (res.status !== 201) throw new Error(`adopt answered ${res.status}: ${res.text}`);
      const timing = String(res.headers['server-timing'] ?? '');
      const hash = Number(/hash;dur=([\d.]+)/.exec(timing)?.[1]);
      const rest = Number(/rest;dur=([\d.]+)/.exec(timing)?.[1]);
      adopts.push({ hash, rest, total });
    }
    const rest = median(adopts.map((a) => a.rest));
    console.log(`\nadopt of ${mib} MiB (ms; from Server-Timing, and the client's total)`);
    console.log(table([
      ['hash', 'rest', 'total', 'hash MiB/s', 'rest target', 'result'],
      [
        median(adopts.map((a) => a.hash)).toFixed(0),
        rest.toFixed(1),
        median(adopts.map((a) => a.total)).toFixed(0),
        (mib / (median(adopts.map((a) => a.hash)) / 1000)).toFixed(0),
        `< ${ADOPT_REST_TARGET_MS} ms`,
        rest < ADOPT_REST_TARGET_MS ? 'met' : 'not met',
      ],
    ]));

    // 3. Range reads of the last uploaded blob (in the page cache): a whole-file range vs cat into a pipe.
    const blobName = readdirSync(join(dataDir, 'blobs')).find((n) => n.startsWith(lastAsset!.sha256))!;
    const blob = join(dataDir, 'blobs', blobName);
    const catRates: number[] = [];
    const bareReadRates: number[] = [];
    const readRates: number[] = [];
    const bareReadCpu: CpuSplit[] = [];
    const readCpu: CpuSplit[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      catRates.push(await catRate(blob, size));
      let cpu = cpuTimes(bare.pid);
      bareReadRates.push(await readRate(`${bare.url}/?file=${encodeURIComponent(blob)}`, token, 'bytes=0-', size, 200));
      bareReadCpu.push(cpuSplitPerGiB(bare.pid, cpu, size));
      cpu = cpuTimes(service.pid);
      readRates.push(await readRate(`${api}/assets/${lastAsset!.id}`, token, 'bytes=0-', size));
      readCpu.push(cpuSplitPerGiB(service.pid, cpu, size));
    }
    const smallLatencies: number[] = [];
    for (let i = 0; i < 300; i++) {
      const start = Math.floor(Math.random() * (size - 65536));
      const t0 = performance.now();
      await readRate(`${api}/assets/${lastAsset!.id}`, token, `bytes=${start}-${start + 65535}`, 65536);
      smallLatencies.push(performance.now() - t0);
    }
    console.log('\nrange reads (MiB/s; the client consumes the bytes over loopback; cat writes into a pipe this process drains)');
    console.log(table([
      ['reader', 'MiB/s', 'all rounds', 'user s/GiB', 'kernel s/GiB', 'vs cat'],
      ['cat', median(catRates).toFixed(0), catRates.map((r) => r.toFixed(0)).join(' '), '', '', ''],
      ['bare node:http (whole file)', median(bareReadRates).toFixed(0), bareReadRates.map((r) => r.toFixed(0)).join(' '), fmtCpu(bareReadCpu, 'user'), fmtCpu(bareReadCpu, 'sys'), pct(median(bareReadRates) / median(catRates))],
      ['GET Range bytes=0-', median(readRates).toFixed(0), readRates.map((r) => r.toFixed(0)).join(' '), fmtCpu(readCpu, 'user'), fmtCpu(readCpu, 'sys'), pct(median(readRates) / median(catRates))],
    ]));
    console.log(`64 KiB random ranges, one at a time: p50 ${quantile(smallLatencies, 0.5).toFixed(2)} ms, p99 ${quantile(smallLatencies, 0.99).toFixed(2)} ms`);

    // 4. Thumbnails of 4000x3000 JPEGs: the first request (made), then cached.
    const cold: number[] = [];
    let imageId = '';
    for (let round = 0; round < ROUNDS; round++) {
      const jpeg = await sharp({
        create: { width: 4000, height: 3000, channels: 3, background: { r: round * 40, g: 90, b: 140 }, noise: { type: 'gaussian', mean: 128, sigma: 30 } },
      }).jpeg({ quality: 90 }).toBuffer();
      const up = await call(`${api}/assets?kind=image`, token, 'image/jpeg', jpeg);
      if (up.status !== 201) throw new Error(`image upload answered ${up.status}: ${up.text}`);
      imageId = (JSON.parse(up.text) as { id: string }).id;
      const t0 = performance.now();
      await getOk(`${api}/assets/${imageId}/thumb`, token);
      cold.push(performance.now() - t0);
    }
    const cached: number[] = [];
    for (let i = 0; i < 50; i++) await getOk(`${api}/assets/${imageId}/thumb`, token);
    for (let i = 0; i < 500; i++) {
      const t0 = performance.now();
      await getOk(`${api}/assets/${imageId}/thumb`, token);
      cached.push(performance.now() - t0);
    }
    const p50 = quantile(cached, 0.5);
    console.log('\nthumbnail of a 4000x3000 JPEG (ms, client-side, one request at a time)');
    console.log(table([
      ['case', 'p50', 'p99', 'target', 'result'],
      ['cold (made)', median(cold).toFixed(0), Math.max(...cold).toFixed(0), '', ''],
      ['cached', p50.toFixed(2), quantile(cached, 0.99).toFixed(2), `p50 < ${CACHED_THUMB_TARGET_MS} ms`, p50 < CACHED_THUMB_TARGET_MS ? 'met' : 'not met'],
    ]));
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(bareDir, { recursive: true, force: true });
  }
}

/** Streams `size` bytes (blocks of `block`, the first 8 bytes set from `seed`) as one POST with Content-Length. */
function streamUpload(url: string, token: string | null, size: number, block: Buffer, seed: number): Promise<{ status: number; text: string; mibPerSec: number }> {
  const first = Buffer.from(block);
  first.writeBigUInt64BE(BigInt(seed) + BigInt(Date.now()) * 1000n);
  const headers: Record<string, string> = { 'content-length': String(size), 'content-type': 'application/octet-stream' };
  if (token) headers.authorization = `Bearer ${token}`;
  const started = performance.now();
  return new Promise((resolvePromise, reject) => {
    const req = request(url, { method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolvePromise({ status: res.statusCode!, text, mibPerSec: size / MiB / ((performance.now() - started) / 1000) }));
    });
    req.on('error', reject);
    void (async () => {
      for (let sent = 0; sent < size; sent += BLOCK) {
        if (!req.write(sent === 0 ? first : block)) await new Promise((r) => req.once('drain', r));
      }
      req.end();
    })();
  });
}

function writeFile(path: string, size: number, block: Buffer, seed: number): void {
  const fd = openSync(path, 'wx', 0o644);
  try {
    const first = Buffer.from(block);
    first.writeBigUInt64BE(BigInt(seed) + BigInt(Date.now()) * 1000n);
    for (let written = 0; written < size; written += BLOCK) writeSync(fd, written === 0 ? first : block);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function readRate(url: string, token: string, range: string, expected: number, status = 206): Promise<number> {
  const started = performance.now();
  return new Promise((resolvePromise, reject) => {
    request(url, { headers: { authorization: `Bearer ${token}`, range } }, (res) => {
      let got = 0;
      res.on('data', (c: Buffer) => (got += c.length));
      res.on('end', () => {
        if (res.statusCode !== status || got !== expected) reject(new Error(`range read answered ${res.statusCode} with ${got} bytes`));
        else resolvePromise(got / MiB / ((performance.now() - started) / 1000));
      });
    })
      .on('error', reject)
      .end();
  });
}

function catRate(path: string, size: number): Promise<number> {
  const started = performance.now();
  return new Promise((resolvePromise, reject) => {
    const child = spawn('cat', [path], { stdio: ['ignore', 'pipe', 'inherit'] });
    let got = 0;
    child.stdout.on('data', (c: Buffer) => (got += c.length));
    child.on('error', reject);
    child.on('close', () => (got === size ? resolvePromise(got / MiB / ((performance.now() - started) / 1000)) : reject(new Error('cat short'))));
  });
}

/**
 * One request, the whole answer read. A new connection each time, except for
 * the GETs of thumbnails (kept alive: a browser showing a grid does the same).
 * A kept-alive connection left idle while a big file is written would be
 * closed by the server under the next request.
 */
function call(url: string, token: string, type?: string, body?: Buffer): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (type) headers['content-type'] = type;
  return new Promise((resolvePromise, reject) => {
    const req = request(url, { method: body ? 'POST' : 'GET', headers, agent: body ? false : agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolvePromise({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

async function getOk(url: string, token: string): Promise<void> {
  const res = await call(url, token);
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`);
}


/** The server's CPU seconds (user + system) spent per GiB since `before`. */
type CpuSplit = { user: number; sys: number };
/** CPU per GiB moved, user and kernel apart: the kernel's share is writeback, not our code. */
function cpuSplitPerGiB(pid: number, before: CpuSplit | null, bytes: number): CpuSplit {
  const now = cpuTimes(pid);
  const gib = bytes / 1024 ** 3;
  return before === null || now === null ? { user: NaN, sys: NaN } : { user: (now.user - before.user) / gib, sys: (now.sys - before.sys) / gib };
}
const fmtCpu = (xs: CpuSplit[], part: keyof CpuSplit) =>
  xs.some((x) => Number.isNaN(x[part])) ? '-' : median(xs.map((x) => x[part])).toFixed(2);

const median = (xs: number[]) => quantile(xs, 0.5);
function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}
const pct = (r: number) => `${(r * 100).toFixed(0)} %`;

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}
