import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import autocannon, { type Options, type Result } from 'autocannon';

/** Shared by benches: child servers with a ready line, and checked load runs. */

export interface ChildServer {
  url: string;
  pid: number;
  /** The last 4,000 characters the child wrote to stderr. */
  stderr(): string;
  stop(): Promise<void>;
}

const READY = /listening on (http:\/\/\S+)/;
const READY_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 6_000;

/**
 * Spawns `node ...args` and resolves once it prints a "listening on URL" line on stdout
 * (within `readyMs`: a service on a data dir of millions of rows starts slower).
 */
export function startServer(name: string, args: string[], readyMs = READY_TIMEOUT_MS): Promise<ChildServer> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${name} did not start: ${why}\n${stderr.trim()}`));
    };
    const timer = setTimeout(() => fail(`no ready line within ${readyMs} ms`), readyMs);
    child.once('error', (err) => fail(err.message));
    child.once('exit', (code, signal) => fail(`exited early (${signal ?? code})`));
    // Keep reading stdout after the ready line so the pipe never fills.
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = READY.exec(line);
      if (!match) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve({ url: match[1]!, pid: child.pid!, stderr: () => stderr, stop: () => stopChild(child) });
    });
  });
}

/** SIGTERM, then SIGKILL if the child outlives STOP_TIMEOUT_MS. */
function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export interface Measurement {
  reqPerSec: number;
  p50: number;
  p99: number;
  total: number;
  /** Responses that were not 2xx plus connection errors and timeouts; the bench is broken if > 0. */
  failed: number;
  failures: string;
  /** The server's CPU time (user + system) per answered request, where /proc tells it. */
  cpuMicrosPerRequest: number | null;
}

let active: ReturnType<typeof autocannon> | undefined;
let interrupted = false;

/** Called on SIGINT/SIGTERM: ends the current load run so the bench's cleanup runs. */
export function interruptBench(): void {
  interrupted = true;
  active?.stop();
}

async function loadOnce(options: Options): Promise<Result> {
  if (interrupted) throw new Error('interrupted');
  active = autocannon(options);
  try {
    const result = await active;
    if (interrupted) throw new Error('interrupted');
    return result;
  } finally {
    active = undefined;
  }
}

/**
 * A discarded warm-up run (which must be all 2xx), then the measured run.
 * With the server's pid, its CPU time per request is read from /proc too: it
 * does not swing with what else the machine runs, as req/s does.
 */
export async function measure(options: Options, warmupSeconds: number, serverPid?: number): Promise<Measurement> {
  const warm = summarize(await loadOnce({ ...options, duration: warmupSeconds }), null);
  if (warm.failed > 0) throw new Error(`warm-up of ${options.method ?? 'GET'} ${options.url} failed: ${warm.failures}`);
  const before = serverPid === undefined ? null : cpuSeconds(serverPid);
  const result = await loadOnce(options);
  const after = serverPid === undefined ? null : cpuSeconds(serverPid);
  const cpu = before !== null && after !== null && result['2xx'] > 0 ? ((after - before) * 1e6) / result['2xx'] : null;
  return summarize(result, cpu);
}

/** utime + stime of a process in seconds (Linux /proc), or null elsewhere. */
export function cpuSeconds(pid: number): number | null {
  const t = cpuTimes(pid);
  return t === null ? null : t.user + t.sys;
}

/** User and kernel CPU of a process in seconds (Linux /proc), or null elsewhere. */
export function cpuTimes(pid: number): { user: number; sys: number } | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return { user: Number(fields[11]) / CLOCK_TICKS, sys: Number(fields[12]) / CLOCK_TICKS };
  } catch {
    return null;
  }
}

/** USER_HZ: 100 on every Linux this runs on. */
const CLOCK_TICKS = 100;

function summarize(r: Result, cpuMicrosPerRequest: number | null): Measurement {
  const failed = r.non2xx + r.errors + r.timeouts;
  const codes = Object.entries(r.statusCodeStats)
    .filter(([code]) => !code.startsWith('2'))
    .map(([code, s]) => `${code}: ${s.count}`);
  if (r.errors > 0) codes.push(`connection errors: ${r.errors}`);
  if (r.timeouts > 0) codes.push(`timeouts: ${r.timeouts}`);
  return {
    reqPerSec: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    total: r['2xx'],
    failed,
    failures: codes.join(', ') || 'none',
    cpuMicrosPerRequest,
  };
}
