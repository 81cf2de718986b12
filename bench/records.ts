import { Agent } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Statement } from 'better-sqlite3';
import { openDatabase, type Db } from '../service/db/open';
import { createStudiosStore } from '../service/studios';
import { createRecordsStore, declareIndex } from '../service/records';
import { compileQuery, type Position } from '../service/records/compile';
import { parseOrder, parseWhere } from '../service/records/filter';
import { startServer, type ChildServer } from './harness';
import { backlot, BACKLOT, fmt, httpClient, httpFloorRow, pct, table, timeRuns, type Client } from './common';

/**
 * Records at scale (bench/README.md "records"). One collection of
 * 1,000,000 records of six fields, seeded through the store in this process
 * (the server is not running yet), indexes declared on `qty`, `price` and
 * `grp`; then `bin/backlot serve` in a child process. Each query's latency over
 * HTTP (one keep-alive connection, sequential requests) is printed beside the
 * same SQL run directly on better-sqlite3 in this process.
 */

const RECORDS = Number(process.env.BACKLOT_BENCH_RECORDS ?? 1_000_000);
const API_INSERTS = 20_000;
const INSERT_CONNECTIONS = 8;
const STATUSES = ['draft', 'review', 'live', 'archived', 'deleted'];

function documentOf(i: number) {
  return {
    title: `Record number ${i}`,
    status: STATUSES[i % STATUSES.length],
    price: Math.round(((i * 7919) % 100_000) + 0.5) / 100,
    qty: i % 1000,
    grp: i % 100,
    tags: i % 3 === 0 ? ['red', 'blue'] : ['green'],
  };
}

interface Query {
  name: string;
  where: string[];
  order?: string;
  limit: number;
  /** Walk every page (the figure is per walk). */
  walk?: boolean;
  runs: number;
  target?: string;
}

const QUERIES: Query[] = [
  { name: 'indexed eq (qty, 1000 matches, limit 50)', where: ['qty:eq:123'], limit: 50, runs: 2000, target: 'p50 <= 2 ms; <= 3x SQL' },
  { name: 'unindexed eq (title, full scan, 1 match)', where: [`title:eq:Record number ${Math.floor(RECORDS / 2)}`], limit: 50, runs: 10, target: '<= 1500 ms' },
  { name: 'indexed range + order + limit 50 (price)', where: ['price:gte:100', 'price:lt:200'], order: 'price:asc', limit: 50, runs: 2000, target: 'p50 <= 2 ms; <= 3x SQL' },
  { name: 'page through 10,000 (grp eq, limit 500, 20 pages)', where: ['grp:eq:42'], limit: 500, walk: true, runs: 20 },
];

export async function runRecordsBench(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'backlot-bench-records-'));
  let server: ChildServer | undefined;
  // Fresh connections for each phase: the SQL side of a query runs synchronously in this
  // process, for over 5 s on a slower machine, past the server's keep-alive timeout; a
  // kept socket the server closed meanwhile would hang up on the next request.
  const agents: Agent[] = [];
  const connection = (sockets = 1) => {
    agents.push(new Agent({ keepAlive: true, maxSockets: sockets }));
    return agents[agents.length - 1]!;
  };
  try {
    backlot('studio', 'add', 'bench', '--quota-records', String(RECORDS + API_INSERTS + 10), '--data-dir', dataDir);
    const token = backlot('token', 'create', '--studio', 'bench', '--caps', 'records', '--data-dir', dataDir).trim();

    const db = openDatabase(dataDir);
    const records = createRecordsStore(db, createStudiosStore(db), { maxDocBytes: () => 4 << 20 });
    const seeded = seedRecords(records, RECORDS);
    const indexing = performance.now();
    for (const field of ['qty', 'price', 'grp']) declareIndex(db, { studioId: 'bench', collection: 'items', field });
    const indexMs = performance.now() - indexing;
    db.pragma('wal_checkpoint(TRUNCATE)');
    console.log(
      `records: ${RECORDS} records seeded through the store in ${(seeded.ms / 1000).toFixed(1)} s ` +
        `(${Math.round(RECORDS / (seeded.ms / 1000))} records/s); three indexes declared in ${(indexMs / 1000).toFixed(1)} s.\n`,
    );

    server = await startServer('backlot serve', [BACKLOT, 'serve', '--port', '0', '--data-dir', dataDir]);
    const http = () => httpClient(server!.url, token, connection());

    const rows: string[][] = [];
    for (const q of QUERIES) {
      // A single page is parsed once, for its count; its timed runs only read the answer, as the
      // floor's do (parsing 12 KB of JSON in the client is not the service's time). A walk parses
      // each page for its cursor.
      const client = http();
      const count = q.walk ? null : (await pageHttp(client, q)).items.length;
      const viaHttp = await timeRuns(q.runs, () => (q.walk ? walkHttp(client, q) : pageText(client, q)));
      const viaSql = await timeRuns(q.runs, async () => (q.walk ? walkSql(db, q) : pageSql(db, q, null)));
      const ratio = viaHttp.p50 / viaSql.p50;
      rows.push([q.name, `${count ?? viaHttp.count}`, fmt(viaHttp.p50), fmt(viaHttp.p99), fmt(viaSql.p50), fmt(viaSql.p99), `${ratio.toFixed(1)}x`, q.target ?? '']);
    }
    // The floor of any answer over HTTP here: a bare Koa app sending the indexed eq reply's bytes from memory.
    rows.push(await httpFloorRow((await http()('GET', queryPath(QUERIES[0]!, null))).text, token, connection()));
    console.log(table(['query (HTTP vs the same SQL on better-sqlite3)', 'rows', 'HTTP p50 ms', 'HTTP p99 ms', 'SQL p50 ms', 'SQL p99 ms', 'HTTP/SQL', 'target'], rows));

    const inserts = await insertRate(httpClient(server.url, token, connection(INSERT_CONNECTIONS)));
    console.log(
      `\nAPI inserts: ${API_INSERTS} single POSTs over ${INSERT_CONNECTIONS} connections in ${(inserts.ms / 1000).toFixed(1)} s: ` +
        `${Math.round(API_INSERTS / (inserts.ms / 1000))} records/s, p50 ${fmt(inserts.p50)} ms, p99 ${fmt(inserts.p99)} ms ` +
        `(store bulk insert above: ${Math.round(RECORDS / (seeded.ms / 1000))} records/s).`,
    );
    db.close();
  } finally {
    for (const agent of agents) agent.destroy();
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** `count` records of documentOf(i) in the studio `bench`'s collection `items`; also used by the responsiveness bench. */
export function seedRecords(records: ReturnType<typeof createRecordsStore>, count: number, studioId = 'bench'): { ms: number } {
  const started = performance.now();
  const batch = 10_000;
  for (let i = 0; i < count; i += batch) {
    records.createMany(studioId, 'items', Array.from({ length: Math.min(batch, count - i) }, (_, j) => documentOf(i + j)));
  }
  return { ms: performance.now() - started };
}

// ---- the same SQL, directly ------------------------------------------------

const statements = new Map<string, Statement<unknown[]>>();

/** One page's statements, exactly as the service compiles them, run on this process's connection. */
function pageSql(db: Db, q: Query, after: Position | null): { id: string }[] {
  const indexed = new Set(['qty', 'price', 'grp']);
  const steps = compileQuery({ studioId: 'bench', collection: 'items', clauses: parseWhere(q.where), order: parseOrder(q.order), indexed, after });
  const rows: { id: string }[] = [];
  for (const step of steps) {
    let stmt = statements.get(step.sql);
    if (!stmt) statements.set(step.sql, (stmt = db.prepare<unknown[]>(step.sql)));
    rows.push(...(stmt.all(...step.params, q.limit + 1 - rows.length) as { id: string }[]));
    if (rows.length > q.limit) break;
  }
  return rows;
}

function walkSql(db: Db, q: Query): number {
  let after: Position | null = null;
  let total = 0;
  for (;;) {
    const rows = pageSql(db, q, after);
    const shown = rows.slice(0, q.limit);
    total += shown.length;
    if (rows.length <= q.limit) return total;
    after = { kind: 'id', id: shown[shown.length - 1]!.id };
  }
}

// ---- over HTTP ---------------------------------------------------------------

function queryPath(q: Query, cursor: string | null): string {
  const params = new URLSearchParams();
  for (const w of q.where) params.append('where', w);
  if (q.order) params.set('order', q.order);
  params.set('limit', String(q.limit));
  if (cursor) params.set('cursor', cursor);
  return `/records/items?${params}`;
}

async function pageText(http: Client, q: Query, cursor: string | null = null): Promise<string> {
  const res = await http('GET', queryPath(q, cursor));
  if (res.status !== 200) throw new Error(`GET ${queryPath(q, cursor)} answered ${res.status}: ${res.text.slice(0, 300)}`);
  return res.text;
}

async function pageHttp(http: Client, q: Query, cursor: string | null = null): Promise<{ items: unknown[]; next_cursor: string | null }> {
  return JSON.parse(await pageText(http, q, cursor)) as { items: unknown[]; next_cursor: string | null };
}

async function walkHttp(http: Client, q: Query): Promise<number> {
  let cursor: string | null = null;
  let total = 0;
  do {
    const page = await pageHttp(http, q, cursor);
    total += page.items.length;
    cursor = page.next_cursor;
  } while (cursor);
  return total;
}

async function insertRate(http: Client): Promise<{ ms: number; p50: number; p99: number }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < API_INSERTS) {
      const body = JSON.stringify(documentOf(RECORDS + next++));
      const t = performance.now();
      const res = await http('POST', '/records/inserts', body);
      latencies.push(performance.now() - t);
      if (res.status !== 201) throw new Error(`POST answered ${res.status}: ${res.text.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: INSERT_CONNECTIONS }, worker));
  const ms = performance.now() - started;
  latencies.sort((a, b) => a - b);
  return { ms, p50: pct(latencies, 0.5), p99: pct(latencies, 0.99) };
}
