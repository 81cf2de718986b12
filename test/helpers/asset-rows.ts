import { join } from 'node:path';
import Database from 'better-sqlite3';
import { runCli } from './service';

/**
 * A data dir with many asset rows, made fast: `studio add` creates the
 * schema, then one transaction of set-based INSERT ... SELECT over a
 * recursive counter (SQLite builds the rows in C, no JavaScript per row).
 *
 * Row i (1-based) has sha256 = i as 64 hex digits, ext `.bin`, and access for
 * `studio`. Every `reclaimedEvery`-th row is reclaimed (no library file, as a
 * finished reclaim leaves it). No blob exists for any of them: start-up must
 * not conclude anything about rows from files it has not looked at (recovery
 * only removes files no live row names; it never marks or deletes rows).
 */
export function prepareAssetRows(dataDir: string, options: { rows: number; studio: string; reclaimedEvery?: number }): void {
  const added = runCli(['studio', 'add', options.studio, '--data-dir', dataDir]);
  if (added.code !== 0) throw new Error(`studio add failed: ${added.stderr}`);
  if (options.rows === 0) return;
  const db = new Database(join(dataDir, 'backlot.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -262144');
    const every = options.reclaimedEvery ?? 0;
    db.transaction(() => {
      db.prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
         INSERT INTO assets (id, sha256, kind, mime, size, ext, pinned, created_at, referenced_at, reclaimed_at)
         SELECT printf('01BGX%021d', i), printf('%064x', i), 'other', 'application/octet-stream', 1000, '.bin', 0,
                '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z',
                CASE WHEN ? > 0 AND i % ? = 0 THEN '2026-01-02T00:00:00.000Z' END
         FROM n`,
      ).run(options.rows, every, every);
      db.prepare(
        `INSERT INTO asset_access (asset_id, studio_id, filename, library_path, granted_at)
         SELECT id, ?, id || '.bin', NULL, created_at FROM assets WHERE id LIKE '01BGX%'`,
      ).run(options.studio);
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

/** The blob file name row i of prepareAssetRows would have. */
export function bigRowBlobName(i: number): string {
  return `${i.toString(16).padStart(64, '0')}.bin`;
}

/** Row i's asset id. */
export function bigRowId(i: number): string {
  return `01BGX${String(i).padStart(21, '0')}`;
}
