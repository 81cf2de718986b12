import assert from 'node:assert/strict';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createService } from '../service/app';
import { openDatabase, type Db } from '../service/db/open';
import { createStudiosStore } from '../service/studios';
import { ASSETS_SQL, createAssets } from '../service/assets';
import { tempDir } from './helpers/service';

/**
 * Start-up recovery in the background (service/assets/recover.ts, docs/reliability.md "Start-up and recovery at scale"), in
 * process, where the order of a commit and a check can be set up exactly. The black-box
 * run at 1M rows is test/startup-scale.test.ts.
 */

const UP_FRONT = 2048; // recover.ts: checks done before listening
const hex = (i: number) => i.toString(16).padStart(64, '0');

function domain(dir: string, db: Db, cleanStop = false) {
  const studios = createStudiosStore(db);
  if (!studios.get('s')) studios.add({ id: 's', name: 's' });
  return createAssets(db, {
    dataDir: dir,
    uploadLimit: 1 << 20,
    diskHeadroom: 0,
    secret: studios.cursorSecret(),
    studioDirs: () => ({ stage_dir: dir, data_dir: dir }),
    cleanStop,
  });
}

/** Row-less blobs, as a crash between rename and insert leaves them. */
function orphans(dir: string, n: number): string[] {
  const names = Array.from({ length: n }, (_, i) => `${hex(i + 1)}.bin`);
  for (const name of names) writeFileSync(join(dir, 'blobs', name), 'orphan');
  return names;
}

test('a blob committed while recovery runs in the background is kept; every other row-less blob goes', async () => {
  const dir = tempDir();
  const db = openDatabase(dir);
  domain(dir, db); // creates the folders (nothing to recover yet)
  const names = orphans(dir, 3 * UP_FRONT);
  const assets = domain(dir, db);
  assert.equal(assets.recovery.settled(), false, 'more than the part before listening: the rest runs in the background');
  const commit = (name: string) => {
    const tmp = assets.blobs.tempPath();
    writeFileSync(tmp, 'now an asset');
    const request = { kind: 'other' as const, contentType: null, filename: `${name.slice(60)}`, pinned: false, hints: {} };
    const probed = { mime: 'application/octet-stream', width: null, height: null, duration_s: null, fps: null };
    // The commit trusts the hash it is given: here, the name of a blob left on disk.
    return assets.ingest.commit('s', { tmp, sha256: name.slice(0, 64), size: 12 }, request, probed);
  };
  // Some before any background slice, some between slices: whether the recovery's listing
  // already held the name or not, and whether it checked it yet or not.
  const kept = new Set<string>();
  for (let i = 0; i < names.length; i += 97) {
    assert.equal(commit(names[i]!).created, true);
    kept.add(names[i]!);
    if (i % 3 === 0) await new Promise((r) => setImmediate(r));
  }
  await assets.recovery.done;
  assert.equal(assets.recovery.settled(), true);
  const left = readdirSync(join(dir, 'blobs')).filter((n) => n !== '.tmp').sort();
  assert.deepEqual(left, [...kept].sort());
  // A name checked before its commit was removed first and then installed again by it.
  assert.ok(assets.recovery.counts().blobs >= names.length - kept.size);
  assert.equal(assets.stopsClean(), true);
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a background recovery stopped before its end does not count as settled: no clean stop is recorded', async () => {
  const dir = tempDir();
  const db = openDatabase(dir);
  domain(dir, db);
  orphans(dir, 3 * UP_FRONT);
  const assets = domain(dir, db);
  await assets.recovery.stop();
  assert.equal(assets.recovery.settled(), false);
  assert.equal(assets.stopsClean(), false);
  // After a clean stop, the same leftovers past the first part are left for the next crash's recovery.
  const after = domain(dir, db, true);
  assert.equal(after.recovery.settled(), true);
  const files = after.recovery.counts().files; // blobs/.tmp, if among the first entries, takes one check
  assert.ok(files >= UP_FRONT - 1 && files <= UP_FRONT, `${files} files checked`);
  assert.ok(readdirSync(join(dir, 'blobs')).length > 1, 'the rest was left');
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a clean close records the marker; the next start takes it; a server file left behind makes it not clean', async () => {
  const dir = tempDir();
  let service = createService({ dataDir: dir, readWorkers: 0 });
  await service.close();
  assert.equal(existsSync(join(dir, 'clean-stop')), true);
  service = createService({ dataDir: dir, readWorkers: 0 });
  assert.equal(existsSync(join(dir, 'clean-stop')), false, 'taken at start, before anything changes');
  await service.close();
  assert.equal(existsSync(join(dir, 'clean-stop')), true);
  // A run that ended without its stop (an older version's crash) leaves server.json.
  writeFileSync(join(dir, 'server.json'), JSON.stringify({ pid: 2 ** 22 + 1, port: 1, url: 'http://127.0.0.1:1', started_at: 'x' }));
  orphans(dir, 3 * UP_FRONT);
  const lines: string[] = [];
  const warn = console.warn;
  console.warn = (line: string) => lines.push(line);
  try {
    service = createService({ dataDir: dir, readWorkers: 0 });
  } finally {
    console.warn = warn;
  }
  assert.ok(lines.some((l) => /did not stop cleanly/.test(l)), 'not taken for a clean stop');
  await service.close();
  rmSync(dir, { recursive: true, force: true });
});

test('the walk over reclaimed rows is a range of the partial index', () => {
  const dir = tempDir();
  const db = openDatabase(dir);
  const plan = (sql: string, params: unknown[]) =>
    (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail).join('\n');
  assert.match(plan(ASSETS_SQL.reclaimedAt, ['t', 0, 10]), /SEARCH assets USING INDEX assets_reclaimed \(reclaimed_at=\? AND rowid>\?\)/);
  assert.match(plan(ASSETS_SQL.firstReclaimedAfter, ['t']), /SEARCH assets USING COVERING INDEX assets_reclaimed \(reclaimed_at>\?\)/);
  db.close();
  rmSync(dir, { recursive: true, force: true });
});
