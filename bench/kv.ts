import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { measure, startServer, type ChildServer, type Measurement } from './harness';
import { backlot, BACKLOT } from './common';
import { newestProfile, selfTimes } from './profile';
import { readFileSync } from 'node:fs';

/**
 * KV throughput against a bare Koa baseline (see bench/README.md). Both
 * servers are child processes, loaded one at a time from this process.
 * With BACKLOT_BENCH_PROFILE=DIR, each method is then run once more against a
 * service started with `--cpu-prof` (one profile per method, in DIR) and the
 * top of each profile is printed as a self-time table.
 */

const BARE_SERVER = join(__dirname, 'bare-server.js');
const CONNECTIONS = 32;
const WARMUP_SECONDS = 2;
const DOC_BYTES = 1024;
const DOC_PATH = '/api/v1/kv/bench/doc';
const TARGETS = { GET: 0.5, PUT: 0.35 } as const;
const ROUNDS = 3;

interface Row {
  route: string;
  m: Measurement;
  ratio?: number;
  target?: number;
}

export async function runKvBench(): Promise<void> {
  const seconds = Number(process.env.BACKLOT_BENCH_SECONDS ?? 10);
  if (!(seconds > 0)) throw new Error('BACKLOT_BENCH_SECONDS must be a positive number.');
  const dataDir = mkdtempSync(join(tmpdir(), 'backlot-bench-'));
  const servers: ChildServer[] = [];
  try {
    backlot('studio', 'add', 'bench', '--data-dir', dataDir);
    const token = backlot('token', 'create', '--studio', 'bench', '--caps', 'kv', '--data-dir', dataDir).trim();
    const service = await startServer('backlot serve', [BACKLOT, 'serve', '--port', '0', '--data-dir', dataDir]);
    servers.push(service);
    const auth = { authorization: `Bearer ${token}` };
    const putHeaders = { ...auth, 'content-type': 'application/json' };
    const doc = JSON.stringify(makeDocument(DOC_BYTES));
    // The bare server answers the service's own reply, so both send the same bytes.
    const reply = await seed(service.url + DOC_PATH, putHeaders, doc);
    const bare = await startServer('bare server', [BARE_SERVER, reply]);
    servers.push(bare);

    console.log(
      `kv: ${CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up + ${seconds} s per row in ${ROUNDS} slices taken in turn with bare, ` +
        `${DOC_BYTES}-byte document, reply ${Buffer.byteLength(reply)} bytes.\n` +
        'PUT rewrites the same key every request (one hot document).\n',
    );
    const rows: Row[] = [];
    for (const method of ['GET', 'PUT'] as const) {
      const opts = method === 'GET' ? { method, headers: auth } : { method, headers: putHeaders, body: doc };
      // Bare and kv take turns (ROUNDS slices each): a burst of load from elsewhere on the
      // machine falls on both sides rather than on whichever ran at the time.
      const slices: { bare: Measurement[]; kv: Measurement[] } = { bare: [], kv: [] };
      for (let round = 0; round < ROUNDS; round++) {
        const warm = round === 0 ? WARMUP_SECONDS : 1;
        for (const [side, server] of [['bare', bare], ['kv', service]] as const) {
          const m = await measure({ ...opts, url: server.url + DOC_PATH, connections: CONNECTIONS, duration: seconds / ROUNDS }, warm, server.pid);
          slices[side].push(m);
        }
      }
      const base = combine(slices.bare);
      const real = combine(slices.kv);
      rows.push({ route: `${method} bare`, m: base });
      rows.push({ route: `${method} kv`, m: real, ratio: real.reqPerSec / base.reqPerSec, target: TARGETS[method] });
    }
    console.log(formatTable(rows));
    const profileDir = process.env.BACKLOT_BENCH_PROFILE;
    if (profileDir) {
      // One server per data dir: the unprofiled one stops first.
      await service.stop();
      for (const method of ['GET', 'PUT'] as const) {
        const dir = join(profileDir, method);
        mkdirSync(dir, { recursive: true });
        const profiled = await startServer('backlot serve --cpu-prof', [`--cpu-prof`, `--cpu-prof-dir=${dir}`, BACKLOT, 'serve', '--port', '0', '--data-dir', dataDir]);
        const opts = method === 'GET' ? { method, headers: auth } : { method, headers: putHeaders, body: doc };
        const m = await measure({ ...opts, url: profiled.url + DOC_PATH, connections: CONNECTIONS, duration: seconds }, WARMUP_SECONDS, profiled.pid);
        await profiled.stop();
        console.log(`\n${method} kv under --cpu-prof: ${m.reqPerSec.toFixed(0)} req/s, ${m.cpuMicrosPerRequest?.toFixed(1) ?? '-'} µs of server CPU per request`);
        console.log(profileSummary(newestProfile(dir), m.cpuMicrosPerRequest));
      }
    }

    const broken = rows.filter((r) => r.m.failed > 0);
    if (broken.length > 0) {
      throw new Error(`non-2xx responses, figures are invalid: ${broken.map((r) => `${r.route} (${r.m.failures})`).join('; ')}`);
    }
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dataDir, { recursive: true, force: true });
  }
}


/** Slices of one side as one row: req/s and CPU per request over all of them; latency the worst slice's. */
function combine(ms: Measurement[]): Measurement {
  const total = ms.reduce((n, m) => n + m.total, 0);
  const cpu = ms.every((m) => m.cpuMicrosPerRequest !== null)
    ? ms.reduce((us, m) => us + m.cpuMicrosPerRequest! * m.total, 0) / Math.max(1, total)
    : null;
  return {
    reqPerSec: ms.reduce((r, m) => r + m.reqPerSec, 0) / ms.length,
    p50: Math.max(...ms.map((m) => m.p50)),
    p99: Math.max(...ms.map((m) => m.p99)),
    total,
    failed: ms.reduce((n, m) => n + m.failed, 0),
    failures: ms.map((m) => m.failures).filter((f) => f !== 'none').join(', ') || 'none',
    cpuMicrosPerRequest: cpu,
  };
}

/** A plausible settings-like object whose JSON is exactly `bytes` long. */
function makeDocument(bytes: number): Record<string, unknown> {
  const doc = { title: 'Scene 12 / night exterior', fps: 24, tags: ['draft', 'storyboard', 'v3'], locked: false, notes: '' };
  const pad = bytes - Buffer.byteLength(JSON.stringify(doc));
  if (pad < 0) throw new Error(`document skeleton exceeds ${bytes} bytes`);
  return { ...doc, notes: 'n'.repeat(pad) };
}

async function seed(url: string, headers: Record<string, string>, body: string): Promise<string> {
  const res = await fetch(url, { method: 'PUT', headers, body });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`seeding PUT ${url} answered ${res.status}: ${text}`);
  return text;
}

/**
 * The top 20 self-time rows of a profile; µs/req is the row's share of the
 * profile times the measured server CPU per request (the profile also holds
 * start-up and warm-up, a small part of it).
 */
function profileSummary(file: string, cpuPerRequest: number | null): string {
  const times = selfTimes(JSON.parse(readFileSync(file, 'utf8')));
  const lines = ['self %  ~µs/req  function'];
  for (const t of times.slice(0, 20)) {
    const us = cpuPerRequest === null ? '-' : (t.share * cpuPerRequest).toFixed(1);
    lines.push(`${(t.share * 100).toFixed(1).padStart(6)}  ${us.padStart(7)}  ${t.name}`);
  }
  return lines.join('\n');
}

// autocannon's latency histogram holds whole milliseconds.
const ms = (value: number) => (value < 1 ? '<1' : String(value));

function formatTable(rows: Row[]): string {
  const header = ['route', 'req/s', 'cpu µs/req', 'p50 ms', 'p99 ms', 'vs bare', 'target', 'result', 'non-2xx'];
  const cells = rows.map((r) => [
    r.route,
    r.m.reqPerSec.toFixed(0),
    r.m.cpuMicrosPerRequest === null ? '-' : r.m.cpuMicrosPerRequest.toFixed(1),
    ms(r.m.p50),
    ms(r.m.p99),
    r.ratio === undefined ? '' : `${(r.ratio * 100).toFixed(0)} %`,
    r.target === undefined ? '' : `>= ${r.target * 100} %`,
    r.ratio === undefined || r.target === undefined ? '' : r.ratio >= r.target ? 'met' : 'not met',
    String(r.m.failed),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  return [header, ...cells].map((line) => line.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}
