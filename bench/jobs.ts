import { fork, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type ChildServer } from './harness';
import { backlot, BACKLOT } from './common';

/**
 * Jobs (see bench/README.md): 1,000 server-sent event listeners on one job's
 * log while 10,000 lines are appended through the API (delivery latency
 * p50/p99, the service's RSS growth), then log append throughput with no
 * listeners (1,000-line and single-line appends) against GET /jobs/{id} as
 * the baseline of one authenticated request.
 */

const LISTENER = join(__dirname, 'jobs-listener.js');
const LISTENERS = Number(process.env.BACKLOT_BENCH_LISTENERS ?? 1000);
const LINES = Number(process.env.BACKLOT_BENCH_LINES ?? 10_000);
const WORKERS = 4;
const BATCH = 10;
const INTERVAL_MS = 10;
const TARGETS = { p99Ms: 50, rssMb: 200 };

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

export async function runJobsBench(): Promise<void> {
  const seconds = Number(process.env.BACKLOT_BENCH_SECONDS ?? 5);
  const dataDir = mkdtempSync(join(tmpdir(), 'backlot-bench-'));
  const workers: ChildProcess[] = [];
  let service: ChildServer | undefined;
  try {
    backlot('studio', 'add', 'bench', '--data-dir', dataDir);
    const token = backlot('token', 'create', '--studio', 'bench', '--caps', 'jobs', '--data-dir', dataDir).trim();
    service = await startServer('backlot serve', [BACKLOT, 'serve', '--port', '0', '--data-dir', dataDir]);
    const port = Number(new URL(service.url).port);
    const api = (method: string, path: string, body?: unknown) => call(port, token, method, path, body);

    // Fan-out: listeners first, then paced appends.
    const job = (await api('POST', '/jobs', { title: 'bench' })).json as { id: string };
    await api('GET', `/jobs/${job.id}`);
    const rssBase = rssMb(service.pid);
    const results: Promise<WorkerResult>[] = [];
    const ready: Promise<void>[] = [];
    for (let w = 0; w < WORKERS; w++) {
      const n = Math.floor(LISTENERS / WORKERS) + (w < LISTENERS % WORKERS ? 1 : 0);
      const child = fork(LISTENER, [String(port), `/api/v1/jobs/${job.id}/logs`, token, String(n)], { stdio: 'inherit' });
      workers.push(child);
      ready.push(new Promise((r) => child.on('message', (m: { type: string }) => m.type === 'ready' && r())));
      results.push(new Promise((r, reject) => {
        child.on('message', (m: WorkerResult & { type: string }) => m.type === 'done' && r(m));
        child.once('exit', (code) => code !== 0 && reject(new Error(`listener process exited ${code}`)));
      }));
    }
    await withTimeout(Promise.all(ready), 60_000, 'listeners did not connect');
    const rssListening = rssMb(service.pid);
    let rssPeak = rssListening;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMb(service!.pid))), 100);
    const started = performance.now();
    const pad = 'x'.repeat(60);
    for (let sent = 0; sent < LINES; sent += BATCH) {
      const t = (performance.timeOrigin + performance.now()).toFixed(3);
      const lines = Array.from({ length: Math.min(BATCH, LINES - sent) }, (_, i) => `t=${t} line ${sent + i + 1} ${pad}`);
      const tick = performance.now();
      await api('POST', `/jobs/${job.id}/logs`, { lines });
      const wait = INTERVAL_MS - (performance.now() - tick);
      if (wait > 0) await sleep(wait);
    }
    const appendSeconds = (performance.now() - started) / 1000;
    await api('PATCH', `/jobs/${job.id}`, { state: 'succeeded' });
    const done = await withTimeout(Promise.all(results), 300_000, 'listeners did not receive every line');
    clearInterval(sampler);
    rssPeak = Math.max(rssPeak, rssMb(service.pid));
    const merged = mergeHistograms(done);
    const received = done.reduce((s, d) => s + d.lines, 0);
    const ends = done.reduce((s, d) => s + d.ended, 0);
    const failures = done.map((d) => d.failed).filter(Boolean);
    console.log(
      `jobs fan-out: ${LISTENERS} listeners (${WORKERS} client processes), ${LINES} lines appended ` +
        `${BATCH} per request every ${INTERVAL_MS} ms (${appendSeconds.toFixed(1)} s).`,
    );
    console.log(`  delivered ${received} of ${LISTENERS * LINES} line events, ${ends} of ${LISTENERS} end events`);
    const p50 = percentile(merged, 0.5);
    const p99 = percentile(merged, 0.99);
    console.log(`  delivery latency p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${percentile(merged, 1).toFixed(1)} ms` +
      `  (target p99 < ${TARGETS.p99Ms} ms: ${p99 < TARGETS.p99Ms ? 'met' : 'not met'})`);
    const growth = rssPeak - rssBase;
    console.log(`  service RSS ${rssBase.toFixed(0)} MB before, ${rssListening.toFixed(0)} MB with listeners, ` +
      `peak ${rssPeak.toFixed(0)} MB: growth ${growth.toFixed(0)} MB (target < ${TARGETS.rssMb} MB: ${growth < TARGETS.rssMb ? 'met' : 'not met'})`);
    if (received !== LISTENERS * LINES || ends !== LISTENERS || failures.length > 0) {
      throw new Error(`lines lost or streams failed: ${failures.join('; ') || 'counts differ'}`);
    }

    // Append throughput without listeners.
    console.log(`\nappend throughput, no listeners, ${seconds} s per row:`);
    const batched = await throughput(api, 4, 1000, seconds);
    const single = await throughput(api, 16, 1, seconds);
    const baseline = await requestRate(api, `/jobs/${job.id}`, 16, seconds);
    console.log(`  1000-line appends, 4 loops:  ${batched.toFixed(0)} lines/s`);
    console.log(`  1-line appends, 16 loops:    ${single.toFixed(0)} lines/s (= requests/s)`);
    console.log(`  GET /jobs/{id}, 16 loops:    ${baseline.toFixed(0)} requests/s (baseline); single-line appends ${((single / baseline) * 100).toFixed(0)} % of it`);
  } finally {
    for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
    await service?.stop();
    agent.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

interface WorkerResult {
  lines: number;
  ended: number;
  failed: string;
  buckets: [number, number][];
  bucketMs: number;
}

type Api = (method: string, path: string, body?: unknown) => Promise<{ status: number; json: unknown }>;

/** Lines/s appended by `loops` concurrent loops, each on its own jobs (a new one before the log limit). */
async function throughput(api: Api, loops: number, perRequest: number, seconds: number): Promise<number> {
  const lines = Array(perRequest).fill('a log line of about forty bytes, plain.');
  const deadline = performance.now() + seconds * 1000;
  let total = 0;
  await Promise.all(
    Array.from({ length: loops }, async () => {
      let job = '';
      let written = 0;
      while (performance.now() < deadline) {
        if (!job || written > 400_000) {
          job = ((await api('POST', '/jobs', { title: 'throughput' })).json as { id: string }).id;
          written = 0;
        }
        await api('POST', `/jobs/${job}/logs`, { lines });
        written += perRequest;
        total += perRequest;
      }
    }),
  );
  return total / seconds;
}

async function requestRate(api: Api, path: string, loops: number, seconds: number): Promise<number> {
  const deadline = performance.now() + seconds * 1000;
  let total = 0;
  await Promise.all(
    Array.from({ length: loops }, async () => {
      while (performance.now() < deadline) {
        await api('GET', path);
        total += 1;
      }
    }),
  );
  return total / seconds;
}

function call(port: number, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const headers: Record<string, string> = { Host: `127.0.0.1:${port}`, Authorization: `Bearer ${token}` };
  if (payload) {
    headers['Content-Type'] = method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
    headers['Content-Length'] = String(payload.length);
  }
  return new Promise((resolvePromise, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path: `/api/v1${path}`, headers, agent, setHost: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode! >= 300) return reject(new Error(`${method} ${path} answered ${res.statusCode}: ${text.slice(0, 300)}`));
        resolvePromise({ status: res.statusCode!, json: text ? JSON.parse(text) : undefined });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

function mergeHistograms(results: WorkerResult[]): { ms: number; n: number }[] {
  const merged = new Map<number, number>();
  for (const r of results) for (const [b, n] of r.buckets) merged.set(b, (merged.get(b) ?? 0) + n);
  const bucketMs = results[0]?.bucketMs ?? 0.1;
  return [...merged.entries()].sort((a, b) => a[0] - b[0]).map(([b, n]) => ({ ms: (b + 1) * bucketMs, n }));
}

function percentile(histogram: { ms: number; n: number }[], q: number): number {
  const total = histogram.reduce((s, h) => s + h.n, 0);
  let seen = 0;
  for (const h of histogram) {
    seen += h.n;
    if (seen >= q * total) return h.ms;
  }
  return histogram.at(-1)?.ms ?? 0;
}

/** VmRSS of a process in MB (Linux /proc). */
function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}


function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} within ${ms / 1000} s`)), ms))),
  ]);
}
