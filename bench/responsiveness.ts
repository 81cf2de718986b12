import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../service/db/open';
import { createStudiosStore } from '../service/studios';
import { createRecordsStore, declareIndex } from '../service/records';
import { startServer, type ChildServer } from './harness';
import { backlot, BACKLOT, fmt, httpClient, pct, table, type Client } from './common';
import { ITEMS, seedGallery, TREE } from './gallery';
import { seedRecords } from './records';

/**
 * Responsiveness (bench/README.md "responsiveness"). One data dir holds 1,000,000
 * records of the studio `bench` (the records bench's documents, `qty`
 * indexed) and the gallery bench's items (its tree of 100,000 descendants),
 * plus a studio `other` with 10,000 indexed records and a studio `kv` with one
 * document. The same server is then run twice on it: with its read workers
 * (the default pool) and with `--read-workers 0` (every read inline on the
 * main thread, as before the read workers), and each runs the same phases:
 *
 *   alone      KV GET from one client, nothing else
 *   scans      (a) one client of `bench` runs unindexed 1M scans back to back
 *   four       (b) four clients of `bench` run them; `other` runs indexed queries
 *   lineage    (c) one client walks downstream lineage pages of 100,000 descendants
 *
 * In each: KV GET latency (one client, sequential), the service's main-thread
 * event-loop delay (perf_hooks, reported on SIGUSR2 with
 * BACKLOT_BENCH_LOOP_DELAY set: a bench-only hook, no route), and the slow
 * requests' own latency. Before the phases, a 1M scan and an indexed page
 * alone. Every client has its own keep-alive connection, new for each phase.
 */

const RECORDS = Number(process.env.BACKLOT_BENCH_RECORDS ?? 1_000_000);
const OTHER_RECORDS = 10_000;
const SCAN = `title:eq:Record number ${Math.floor(RECORDS / 2)}`;

interface Latencies {
  p50: number;
  p99: number;
  max: number;
  count: number;
}

interface PhaseResult {
  kv: Latencies;
  loop: { p50: number; p99: number; max: number };
  slow: Latencies | null;
  indexed: Latencies | null;
}

interface ModeResult {
  label: string;
  scanAlone: Latencies;
  indexedAlone: Latencies;
  phases: Record<string, PhaseResult>;
}

export async function runResponsivenessBench(): Promise<void> {
  const seconds = Number(process.env.BACKLOT_BENCH_SECONDS ?? 10);
  if (!(seconds > 0)) throw new Error('BACKLOT_BENCH_SECONDS must be a positive number.');
  // BACKLOT_BENCH_DATA_DIR keeps the seeded data dir between runs (seeding takes many minutes).
  const kept = process.env.BACKLOT_BENCH_DATA_DIR;
  const dataDir = kept ?? mkdtempSync(join(tmpdir(), 'backlot-bench-responsiveness-'));
  const marker = join(dataDir, 'bench-responsiveness.json');
  try {
    let seeded: { treeRoot: string };
    const stamp = kept && existsSync(marker) ? (JSON.parse(readFileSync(marker, 'utf8')) as { records: number; items: number; treeRoot: string }) : null;
    if (stamp && stamp.records === RECORDS && stamp.items === ITEMS) {
      seeded = stamp;
      console.log(`responsiveness: reusing the data seeded in ${dataDir}.\n`);
    } else {
      if (kept && existsSync(dataDir) && readdirSync(dataDir).length > 0) {
        throw new Error(`BACKLOT_BENCH_DATA_DIR ${dataDir} is not empty and holds no seed of this size by this bench`);
      }
      if (kept) mkdirSync(dataDir, { recursive: true });
      seeded = seed(dataDir);
      if (kept) writeFileSync(marker, JSON.stringify({ records: RECORDS, items: ITEMS, ...seeded }));
    }
    const tokens = {
      bench: backlot('token', 'create', '--studio', 'bench', '--caps', 'records,gallery,assets', '--data-dir', dataDir).trim(),
      other: backlot('token', 'create', '--studio', 'other', '--caps', 'records', '--data-dir', dataDir).trim(),
      kv: backlot('token', 'create', '--studio', 'kv', '--caps', 'kv', '--data-dir', dataDir).trim(),
    };
    const paths = {
      kv: '/kv/bench/doc',
      scan: `/records/items?where=${encodeURIComponent(SCAN)}`,
      indexed: '/records/items?where=qty:eq:123&limit=50',
      lineage: `/assets/${seeded.treeRoot}/lineage`,
    };
    const modes: ModeResult[] = [];
    for (const workers of [null, 0]) {
      modes.push(await runMode(dataDir, workers, tokens, paths, seconds));
    }
    report(modes);
  } finally {
    if (!kept) rmSync(dataDir, { recursive: true, force: true });
  }
}

function seed(dataDir: string): { treeRoot: string } {
  backlot('studio', 'add', 'bench', '--quota-records', String(RECORDS + 10), '--data-dir', dataDir);
  backlot('studio', 'add', 'other', '--data-dir', dataDir);
  backlot('studio', 'add', 'kv', '--data-dir', dataDir);
  const db = openDatabase(dataDir);
  try {
    const records = createRecordsStore(db, createStudiosStore(db), { maxDocBytes: () => 4 << 20 });
    const r = seedRecords(records, RECORDS);
    seedRecords(records, OTHER_RECORDS, 'other');
    declareIndex(db, { studioId: 'bench', collection: 'items', field: 'qty' });
    declareIndex(db, { studioId: 'other', collection: 'items', field: 'qty' });
    const g = seedGallery(db);
    db.pragma('wal_checkpoint(TRUNCATE)');
    console.log(
      `responsiveness: ${RECORDS} records seeded in ${(r.ms / 1000).toFixed(1)} s, ${ITEMS} gallery items ` +
        `(a tree of ${TREE} descendants) in ${(g.ms / 1000).toFixed(1)} s.\n`,
    );
    return { treeRoot: g.treeRoot };
  } finally {
    db.close();
  }
}

async function runMode(
  dataDir: string,
  workers: number | null,
  tokens: Record<'bench' | 'other' | 'kv', string>,
  paths: Record<'kv' | 'scan' | 'indexed' | 'lineage', string>,
  seconds: number,
): Promise<ModeResult> {
  const label = workers === null ? 'read workers (default pool)' : `--read-workers ${workers} (inline)`;
  const args = [BACKLOT, 'serve', '--port', '0', '--data-dir', dataDir, ...(workers === null ? [] : ['--read-workers', String(workers)])];
  process.env.BACKLOT_BENCH_LOOP_DELAY = '1';
  // Starting on millions of rows (the assets' blob check at start) takes a while on a busy machine.
  const server = await startServer('backlot serve', args, 120_000);
  delete process.env.BACKLOT_BENCH_LOOP_DELAY;
  const agents: Agent[] = [];
  const client = (token: string): Client => {
    agents.push(new Agent({ keepAlive: true, maxSockets: 1 }));
    return httpClient(server.url, token, agents[agents.length - 1]!);
  };
  try {
    const put = await client(tokens.kv)('PUT', paths.kv, JSON.stringify({ brush: 'round', size: 12, note: 'x'.repeat(900) }));
    if (put.status !== 200) throw new Error(`PUT ${paths.kv} answered ${put.status}: ${put.text}`);
    console.log(`${label}: warming up`);
    // Warm-up: the page cache holds the collection, the JIT has seen every route.
    const warm = client(tokens.bench);
    for (let i = 0; i < 2; i++) await get(warm, paths.scan);
    await get(warm, paths.lineage);
    const scanAlone = await repeat(client(tokens.bench), paths.scan, { runs: 5 });
    const indexedAlone = await repeat(client(tokens.bench), paths.indexed, { runs: 2000, warm: 500 });

    const phases: Record<string, PhaseResult> = {};
    const phase = async (name: string, load: { path: string; token: string; clients: number } | null, indexed: boolean) => {
      console.log(`${label}: phase ${name}`);
      await loopDelay(server); // starts the window over
      const stop = { at: performance.now() + seconds * 1000 };
      const loaders = load ? Array.from({ length: load.clients }, () => loop(client(load.token), load.path, stop)) : [];
      // The slow requests are under way before the measuring starts.
      if (load) await new Promise((r) => setTimeout(r, 200));
      const [kv, idx, ...slow] = await Promise.all([
        loop(client(tokens.kv), paths.kv, stop),
        indexed ? loop(client(tokens.other), paths.indexed, stop) : Promise.resolve(null),
        ...loaders,
      ]);
      const loop_ = await loopDelay(server);
      phases[name] = { kv: kv!, loop: loop_, slow: slow.length ? merge(slow as Latencies[]) : null, indexed: idx };
    };
    await phase('alone', null, false);
    await phase('(a) 1 client of another studio scanning', { path: paths.scan, token: tokens.bench, clients: 1 }, false);
    await phase('(b) 4 clients of one studio scanning', { path: paths.scan, token: tokens.bench, clients: 4 }, true);
    await phase('(c) lineage pages, 100k descendants', { path: paths.lineage, token: tokens.bench, clients: 1 }, false);
    return { label, scanAlone, indexedAlone, phases };
  } finally {
    for (const agent of agents) agent.destroy();
    await server.stop();
  }
}

async function get(http: Client, path: string): Promise<void> {
  const res = await http('GET', path);
  if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${res.text.slice(0, 300)}`);
}

async function repeat(http: Client, path: string, o: { runs: number; warm?: number }): Promise<Latencies> {
  for (let i = 0; i < (o.warm ?? 0); i++) await get(http, path);
  const times: number[] = [];
  for (let i = 0; i < o.runs; i++) {
    const t = performance.now();
    await get(http, path);
    times.push(performance.now() - t);
  }
  return summarize(times);
}

/** Sequential requests until `stop.at`; their latencies (a request under way at the stop still counts). */
async function loop(http: Client, path: string, stop: { at: number }): Promise<Latencies> {
  const times: number[] = [];
  while (performance.now() < stop.at) {
    const t = performance.now();
    await get(http, path);
    times.push(performance.now() - t);
  }
  return summarize(times);
}

function summarize(times: number[]): Latencies {
  times.sort((a, b) => a - b);
  return { p50: pct(times, 0.5), p99: pct(times, 0.99), max: times[times.length - 1] ?? 0, count: times.length };
}

function merge(list: Latencies[]): Latencies {
  // Clients of one phase ran the same request: the worst client's figures, the total count.
  return {
    p50: Math.max(...list.map((l) => l.p50)),
    p99: Math.max(...list.map((l) => l.p99)),
    max: Math.max(...list.map((l) => l.max)),
    count: list.reduce((n, l) => n + l.count, 0),
  };
}

const DELAY_LINE = /event-loop-delay p50=([\d.]+) p99=([\d.]+) max=([\d.]+) ms/g;

/**
 * Asks the server for its event-loop delay since the last ask (SIGUSR2) and
 * waits for the line. The server writes little else to stderr, so its last
 * 4,000 characters (all the harness keeps) hold every such line.
 */
async function loopDelay(server: ChildServer): Promise<{ p50: number; p99: number; max: number }> {
  const lines = () => [...server.stderr().matchAll(DELAY_LINE)];
  const seen = lines().length;
  process.kill(server.pid, 'SIGUSR2');
  const deadline = Date.now() + 5000;
  while (lines().length <= seen) {
    if (Date.now() > deadline) throw new Error(`no event-loop-delay line from the server\n${server.stderr()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const m = lines().pop()!;
  return { p50: Number(m[1]), p99: Number(m[2]), max: Number(m[3]) };
}

function report(modes: ModeResult[]): void {
  const [w, base] = modes as [ModeResult, ModeResult];
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
  console.log('\nKV GET latency (ms) and the main thread\'s event-loop delay (ms) in each phase');
  const rows: string[][] = [];
  for (const name of Object.keys(w.phases)) {
    for (const m of modes) {
      const p = m.phases[name]!;
      rows.push([
        name,
        m.label,
        `${p.kv.count}`,
        fmt(p.kv.p50),
        fmt(p.kv.p99),
        fmt(p.loop.p50),
        fmt(p.loop.p99),
        fmt(p.loop.max),
        p.slow ? `${fmt(p.slow.p50)} / ${fmt(p.slow.p99)} (${p.slow.count})` : '',
        p.indexed ? `${fmt(p.indexed.p50)} / ${fmt(p.indexed.p99)}` : '',
      ]);
    }
  }
  console.log(
    table(['phase', 'mode', 'GETs', 'GET p50', 'GET p99', 'loop p50', 'loop p99', 'loop max', 'slow reqs p50 / p99 (n)', 'other studio indexed p50 / p99'], rows),
  );
  const alone = w.phases.alone!.kv.p99;
  const a = w.phases['(a) 1 client of another studio scanning']!;
  const b = w.phases['(b) 4 clients of one studio scanning']!;
  const loops = Object.values(w.phases).map((p) => p.loop.p99);
  const checks: string[][] = [
    ['KV GET p99 during 1M scans (a), (b) <= 10 ms', `${fmt(a.kv.p99)}, ${fmt(b.kv.p99)}`, verdict(Math.max(a.kv.p99, b.kv.p99) <= 10)],
    ['... and within 3x of alone', `${ratio(a.kv.p99, alone)}, ${ratio(b.kv.p99, alone)} (alone ${fmt(alone)})`, verdict(Math.max(a.kv.p99, b.kv.p99) <= 3 * alone)],
    ['event-loop delay p99 <= 10 ms in each phase', loops.map(fmt).join(', '), verdict(Math.max(...loops) <= 10)],
    ['other studio indexed p99 <= 20 ms during (b)', fmt(b.indexed!.p99), verdict(b.indexed!.p99 <= 20)],
    ['1M scan alone within 1.2x of inline', `${fmt(w.scanAlone.p50)} vs ${fmt(base.scanAlone.p50)}: ${ratio(w.scanAlone.p50, base.scanAlone.p50)}`, verdict(w.scanAlone.p50 <= 1.2 * base.scanAlone.p50)],
    [
      'indexed page p50 within +0.2 ms of inline',
      `${fmt(w.indexedAlone.p50)} vs ${fmt(base.indexedAlone.p50)}: +${(w.indexedAlone.p50 - base.indexedAlone.p50).toFixed(2)} ms`,
      verdict(w.indexedAlone.p50 <= base.indexedAlone.p50 + 0.2),
    ],
  ];
  console.log(`\n${table(['target (workers, against inline in the same run)', 'measured', ''], checks)}`);
  console.log(
    `\nAlone: 1M scan p50 ${fmt(w.scanAlone.p50)} ms (inline ${fmt(base.scanAlone.p50)}), p99 ${fmt(w.scanAlone.p99)} (inline ${fmt(base.scanAlone.p99)}); ` +
      `indexed page p50 ${fmt(w.indexedAlone.p50)} ms (inline ${fmt(base.indexedAlone.p50)}), p99 ${fmt(w.indexedAlone.p99)} (inline ${fmt(base.indexedAlone.p99)}).`,
  );
}

const verdict = (met: boolean) => (met ? 'met' : 'NOT met');
