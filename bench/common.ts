import { execFileSync } from 'node:child_process';
import { request, type Agent } from 'node:http';
import { join, resolve } from 'node:path';
import { startServer } from './harness';

/** Small pieces every bench uses: the CLI, a keep-alive client, timed runs and tables. */

export const ROOT = resolve(__dirname, '..', '..');
export const BACKLOT = join(ROOT, 'bin', 'backlot');

/** Runs `bin/backlot ARGS` and returns its stdout. */
export function backlot(...args: string[]): string {
  return execFileSync(process.execPath, [BACKLOT, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export type Client = (method: string, path: string, body?: string) => Promise<{ status: number; text: string }>;

/** Requests under `/api/v1` with the token, over the agent's (keep-alive) connections. */
export function httpClient(base: string, token: string, agent: Agent): Client {
  const url = new URL(base);
  return (method, path, body) =>
    new Promise((resolvePromise, reject) => {
      const headers: Record<string, string> = { authorization: `Bearer ${token}` };
      if (body !== undefined) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = String(Buffer.byteLength(body));
      }
      const req = request({ host: url.hostname, port: url.port, method, path: `/api/v1${path}`, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolvePromise({ status: res.statusCode!, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
}

/**
 * Latency of `fn` over `runs` sequential calls, after warming to steady state
 * (JIT, caches) on the same terms for every side: 2 s or 2,000 calls, at least 5.
 * `count` is what the first call returned (a number, an array's length or a page's items).
 */
export async function timeRuns(
  runs: number,
  fn: () => Promise<unknown> | unknown,
  warmMs = 2000,
): Promise<{ p50: number; p99: number; count: number }> {
  const warm = await fn();
  const warmUntil = performance.now() + warmMs;
  for (let i = 0; i < 2000 && (i < 5 || performance.now() < warmUntil); i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const count =
    typeof warm === 'number' ? warm : Array.isArray(warm) ? warm.length : ((warm as { items?: unknown[] }).items?.length ?? 0);
  return { p50: pct(times, 0.5), p99: pct(times, 0.99), count };
}

/** The p-quantile of an ascending array. */
export function pct(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/**
 * The floor of any answer over HTTP on this machine: a bare Koa app
 * (bare-server.ts) sending `reply`'s bytes from memory, timed like the
 * queries, as one row of a query table (eight columns).
 */
export async function httpFloorRow(reply: string, token: string, agent: Agent): Promise<string[]> {
  const bare = await startServer('bare server', [join(__dirname, 'bare-server.js'), reply]);
  try {
    const bareHttp = httpClient(bare.url, token, agent);
    const floor = await timeRuns(2000, () => bareHttp('GET', '/'));
    return [`bare Koa, same ${Buffer.byteLength(reply)}-byte reply (HTTP floor)`, '', fmt(floor.p50), fmt(floor.p99), '', '', '', ''];
  } finally {
    await bare.stop();
  }
}

export const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(0));

export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [header, ...rows].map((line) => line.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}
