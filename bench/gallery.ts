import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Statement } from 'better-sqlite3';
import { openDatabase, type Db } from '../service/db/open';
import { MIGRATIONS } from '../service/db/migrations';
import { createStudiosStore } from '../service/studios';
import { createSessionsStore } from '../service/sessions';
import { createAssetsStore } from '../service/assets/store';
import { createGalleryStore, LINEAGE_SQL, type GalleryStore } from '../service/gallery';
import { compileItemQuery, type ItemFilter } from '../service/gallery/query';
import { compileSearch } from '../service/gallery/search';
import { startServer, type ChildServer } from './harness';
import { rng } from '../test/helpers/prng';
import { backlot, BACKLOT, fmt, httpClient, httpFloorRow, table, timeRuns, type Client } from './common';

/**
 * The gallery at scale (bench/README.md "gallery"). 1,000,000 items
 * seeded through the store in this process before the server starts: 890,000
 * plain items (prompts of 12 words from a Zipf-distributed vocabulary, 1-3 of
 * 60 tags), a chain 10,000 generations deep (each item takes the previous
 * one's asset as its input) and a tree of 100,000 items descending from one
 * root asset (fan-out 10). Then `bin/backlot serve` in a child process; each
 * query's latency over HTTP (one keep-alive connection, sequential requests)
 * is printed beside the same SQL run on better-sqlite3 in this process.
 */

export const ITEMS = Number(process.env.BACKLOT_BENCH_ITEMS ?? 1_000_000);
const CHAIN = Math.min(10_000, Math.floor(ITEMS / 100));
export const TREE = Math.min(100_000, Math.floor(ITEMS / 10));
const FANOUT = 10;
const PLAIN = ITEMS - CHAIN - TREE;
const STUDIO = 'bench';

// A vocabulary with a few very common words and a long tail (Zipf, s = 1).
const COMMON = ['portrait', 'sunset', 'mountain', 'city', 'night', 'forest', 'ocean', 'studio', 'light', 'cat'];
const VOCABULARY = [...COMMON, ...Array.from({ length: 5000 }, (_, i) => wordOf(i))];
const ZIPF = cumulative(VOCABULARY.map((_, i) => 1 / (i + 1)));
const TAGS = Array.from({ length: 60 }, (_, i) => `tag${i}`);

interface Query {
  name: string;
  path: string;
  filter?: ItemFilter;
  q?: string;
  lineage?: { kind: 'up'; seq: number; id: string } | { kind: 'down'; asset: string };
  runs: number;
  target: string;
}

export async function runGalleryBench(): Promise<void> {
  // BACKLOT_BENCH_DATA_DIR keeps the seeded data dir between runs (seeding 1M items takes minutes).
  const kept = process.env.BACKLOT_BENCH_DATA_DIR;
  const dataDir = kept ?? mkdtempSync(join(tmpdir(), 'backlot-bench-gallery-'));
  const marker = join(dataDir, 'bench-gallery.json');
  let server: ChildServer | undefined;
  // A fresh connection per measured query: the SQL side of the previous one can outlast the
  // server's 5 s keep-alive timeout, and a reused socket the server just closed hangs up.
  const agents: Agent[] = [];
  const connection = () => {
    agents.push(new Agent({ keepAlive: true, maxSockets: 1 }));
    return agents[agents.length - 1]!;
  };
  try {
    let seeded: Seeded;
    let db: Db;
    // Reused only when seeded for the same N by the same migrations (their text, hashed).
    const schema = createHash('sha256').update(MIGRATIONS.map((m) => m.up.toString()).join('\n')).digest('hex');
    const stamp = kept && existsSync(marker) ? (JSON.parse(readFileSync(marker, 'utf8')) as { items: number; schema?: string }) : null;
    if (kept && stamp?.items === ITEMS && stamp.schema === schema) {
      seeded = (JSON.parse(readFileSync(marker, 'utf8')) as { seeded: Seeded }).seeded;
      db = openDatabase(dataDir);
      console.log(`gallery: reusing the ${ITEMS} items seeded in ${dataDir}.\n`);
    } else {
      if (kept) {
        // Only a folder this bench seeded (it holds the marker) is ever removed; never someone's data dir.
        if (existsSync(dataDir) && readdirSync(dataDir).length > 0) {
          if (!existsSync(marker)) throw new Error(`BACKLOT_BENCH_DATA_DIR ${dataDir} is not empty and was not seeded by this bench`);
          rmSync(dataDir, { recursive: true, force: true });
        }
        if (!existsSync(dataDir)) mkdirSync(dataDir);
      }
      backlot('studio', 'add', STUDIO, '--data-dir', dataDir);
      db = openDatabase(dataDir);
      seeded = seedGallery(db);
      db.pragma('wal_checkpoint(TRUNCATE)');
      if (kept) writeFileSync(marker, JSON.stringify({ items: ITEMS, schema, seeded }));
      const bytes = statSync(join(dataDir, 'backlot.db')).size;
      console.log(
        `gallery: ${ITEMS} items seeded through the store in ${(seeded.ms / 1000).toFixed(1)} s ` +
          `(${Math.round(ITEMS / (seeded.ms / 1000))} items/s, with their assets); database ${(bytes / 2 ** 20).toFixed(0)} MiB.\n`,
      );
    }
    const token = backlot('token', 'create', '--studio', STUDIO, '--caps', 'gallery,assets', '--data-dir', dataDir).trim();

    server = await startServer('backlot serve', [BACKLOT, 'serve', '--port', '0', '--data-dir', dataDir]);
    const http = () => httpClient(server!.url, token, connection());
    const since = seeded.middle;
    const page = (where: Partial<ItemFilter>): ItemFilter => ({ studioId: STUDIO, tags: [], ...where });
    const queries: Query[] = [
      { name: 'newest page', path: '/gallery/items', filter: page({}), runs: 2000, target: 'p50 <= 10 ms; <= 2x SQL' },
      { name: 'tag filter (tag7)', path: '/gallery/items?tag=tag7', filter: page({ tags: ['tag7'] }), runs: 2000, target: 'p50 <= 10 ms; <= 2x SQL' },
      { name: 'q two words ("portrait sunset")', path: '/gallery/items?q=portrait%20sunset', filter: page({}), q: 'portrait sunset', runs: 2000, target: 'p50 <= 10 ms; <= 2x SQL' },
      { name: 'q two words, typing ("city nig")', path: '/gallery/items?q=city%20nig', filter: page({}), q: 'city nig', runs: 2000, target: 'p50 <= 10 ms; <= 2x SQL' },
      {
        name: 'q + tag + since',
        path: `/gallery/items?q=forest&tag=tag3&since=${encodeURIComponent(since)}`,
        filter: page({ tags: ['tag3'], since }),
        q: 'forest',
        runs: 2000,
        target: 'p50 <= 10 ms; <= 2x SQL',
      },
      {
        name: `upstream lineage, ${CHAIN} generations deep`,
        path: `/gallery/items/${seeded.chainEnd.id}/lineage`,
        lineage: { kind: 'up', ...seeded.chainEnd },
        runs: 100,
        target: '<= 100 ms; <= 2x SQL',
      },
      {
        name: `downstream lineage, ${TREE} descendants`,
        path: `/assets/${seeded.treeRoot}/lineage`,
        lineage: { kind: 'down', asset: seeded.treeRoot },
        runs: 20,
        target: '<= 2x SQL',
      },
    ];

    const gallery = galleryStore(db);
    const rows: string[][] = [];
    for (const q of queries) {
      const client = http();
      // The answer is parsed once, for its count; timed runs only read it, as the floor's do.
      const count = (JSON.parse(await pageHttp(client, q.path)) as { items: unknown[] }).items.length;
      const viaHttp = await timeRuns(q.runs, () => pageHttp(client, q.path)).catch((err: Error) => {
        throw new Error(`${q.name}: ${err.message}\n${server!.stderr()}`);
      });
      const viaSql = await timeRuns(q.runs, () => pageSql(db, gallery, q));
      const ratio = viaHttp.p50 / viaSql.p50;
      rows.push([q.name, `${count}`, fmt(viaHttp.p50), fmt(viaHttp.p99), fmt(viaSql.p50), fmt(viaSql.p99), `${ratio.toFixed(1)}x`, q.target]);
    }
    // The floor of any answer over HTTP here: a bare Koa app sending the newest page's bytes from memory.
    rows.push(await httpFloorRow((await http()('GET', queries[0]!.path)).text, token, connection()));
    console.log(table(['query (HTTP vs the same SQL on better-sqlite3)', 'items', 'HTTP p50 ms', 'HTTP p99 ms', 'SQL p50 ms', 'SQL p99 ms', 'HTTP/SQL', 'target'], rows));
    db.close();
  } finally {
    for (const agent of agents) agent.destroy();
    await server?.stop();
    if (!kept) rmSync(dataDir, { recursive: true, force: true });
  }
}

// ---- seeding -------------------------------------------------------------------

export interface Seeded {
  ms: number;
  /** created_at of the middle plain item: the `since` of the combined query. */
  middle: string;
  chainEnd: { seq: number; id: string };
  treeRoot: string;
}

/** Seeds the items described above for the studio `bench` (which must exist); also used by the responsiveness bench. */
export function seedGallery(db: Db): Seeded {
  const started = performance.now();
  const assets = createAssetsStore(db);
  const gallery = galleryStore(db, assets);
  let assetCount = 0;
  const newAsset = (): string => {
    const n = assetCount++;
    const id = `A${String(n).padStart(25, '0')}`;
    const created_at = new Date().toISOString();
    const sha256 = createHash('sha256').update(String(n)).digest('hex');
    assets.create(
      { id, sha256, kind: 'image', mime: 'image/png', size: 1000, ext: '.png', pinned: 0, width: 64, height: 64, duration_s: null, fps: null, created_at },
      STUDIO,
      `${id}.png`,
    );
    return id;
  };
  const random = rng(42).next;
  const batch = (count: number, make: (i: number) => void) => {
    for (let i = 0; i < count; i += 5000) {
      db.transaction(() => {
        for (let j = i; j < Math.min(count, i + 5000); j++) make(j);
      })();
    }
  };

  let middle = '';
  batch(PLAIN, (i) => {
    const prompt = Array.from({ length: 12 }, () => VOCABULARY[pick(ZIPF, random())]!).join(' ');
    const tags = Array.from({ length: 1 + Math.floor(random() * 3) }, () => TAGS[Math.floor(random() * TAGS.length)]!);
    const row = gallery.create(STUDIO, {
      asset_id: newAsset(),
      title: random() < 0.3 ? `Take ${i}` : null,
      tags,
      starred: random() < 0.05,
      params: { prompt, seed: i, steps: 30, cfg: 7 },
    });
    if (i === Math.floor(PLAIN / 2)) middle = row.created_at;
  });

  let previous = newAsset();
  let chainEnd = { seq: 0, id: '' };
  batch(CHAIN, (i) => {
    const asset = newAsset();
    const row = gallery.create(STUDIO, { asset_id: asset, params: { prompt: `variation ${i}` }, inputs: [{ asset_id: previous, role: 'init_image' }] });
    previous = asset;
    chainEnd = { seq: row.seq, id: row.id };
  });

  const treeRoot = newAsset();
  const parents: string[] = [treeRoot];
  batch(TREE, (i) => {
    const asset = newAsset();
    gallery.create(STUDIO, { asset_id: asset, params: { prompt: `descendant ${i}` }, inputs: [{ asset_id: parents[Math.floor(i / FANOUT)]!, role: 'reference' }] });
    parents.push(asset);
  });

  return { ms: performance.now() - started, middle, chainEnd, treeRoot };
}

function galleryStore(db: Db, assets = createAssetsStore(db)): GalleryStore {
  return createGalleryStore(db, { assets, sessions: createSessionsStore(db, createStudiosStore(db)) });
}

// ---- the same SQL, directly ------------------------------------------------------

const statements = new Map<string, Statement<Record<string, unknown>>>();
function prepared(db: Db, sql: string): Statement<Record<string, unknown>> {
  let stmt = statements.get(sql);
  if (!stmt) statements.set(sql, (stmt = db.prepare<Record<string, unknown>>(sql)));
  return stmt;
}

/**
 * The first page's statements, exactly as the service builds them, on this
 * process's connection: with `q`, the word-list lookup of the last word's
 * completions too (store.completions), then the page.
 */
function pageSql(db: Db, gallery: GalleryStore, q: Query): unknown[] {
  const limit = 51;
  if (q.lineage?.kind === 'up') {
    return prepared(db, LINEAGE_SQL.up).all({ start: q.lineage.seq, all: 0, studio: STUDIO, after: Number.MAX_SAFE_INTEGER, limit });
  }
  if (q.lineage?.kind === 'down') {
    return prepared(db, LINEAGE_SQL.down).all({ asset: q.lineage.asset, all: 0, studio: STUDIO, after: Number.MAX_SAFE_INTEGER, limit });
  }
  const filter = { ...q.filter! };
  if (q.q !== undefined) {
    const search = compileSearch(q.q, gallery.completions);
    if (search.kind === 'match') filter.match = search.expression;
  }
  const { sql, params } = compileItemQuery(filter, null, limit);
  return prepared(db, sql).all(params);
}

async function pageHttp(http: Client, path: string): Promise<string> {
  const res = await http('GET', path);
  if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${res.text.slice(0, 300)}`);
  return res.text;
}

// ---- data --------------------------------------------------------------------------

function wordOf(i: number): string {
  const letters = 'bcdfghjklmnprstvwz';
  const vowels = 'aeiou';
  let w = '';
  for (let n = i + 7; w.length < 6; n = Math.floor(n / 5) + 3) w += letters[n % letters.length]! + vowels[n % vowels.length]!;
  return `${w}${i}`;
}

function cumulative(weights: number[]): number[] {
  const total = weights.reduce((a, b) => a + b, 0);
  let acc = 0;
  return weights.map((w) => (acc += w / total));
}

function pick(cdf: number[], r: number): number {
  let lo = 0;
  let hi = cdf.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cdf[mid]! < r) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
