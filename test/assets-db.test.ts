import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { openDatabase } from '../service/db/open';
import { ASSETS_SQL } from '../service/assets';
import { tempDir } from './helpers/service';

/** The assets migration (0005) and the query plans of the hot reads. */

const plan = (db: ReturnType<typeof openDatabase>, sql: string, params: unknown[]) =>
  (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail).join('\n');

test('assets tables: sha256 unique, kinds closed, access keyed by (asset, studio)', () => {
  const dir = tempDir();
  const db = openDatabase(dir);
  db.prepare("INSERT INTO studios (id, name, quota_records, quota_kv_bytes, created_at) VALUES ('s', 's', 1, 1, 'now')").run();
  const insert = db.prepare(
    "INSERT INTO assets (id, sha256, kind, mime, size, ext, created_at) VALUES (?, ?, ?, 'x/y', 1, '.bin', 'now')",
  );
  insert.run('A', 'h1', 'image');
  assert.throws(() => insert.run('B', 'h1', 'image'), /UNIQUE/);
  assert.throws(() => insert.run('C', 'h2', 'movie'), /CHECK/);
  const grant = db.prepare("INSERT INTO asset_access (asset_id, studio_id, filename, granted_at) VALUES (?, 's', 'f', 'now')");
  grant.run('A');
  assert.throws(() => grant.run('A'), /UNIQUE|PRIMARY/);
  assert.throws(() => grant.run('missing'), /FOREIGN KEY/);
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

test('reading an asset as a studio uses the primary keys; by sha256 the unique index', () => {
  const dir = tempDir();
  const db = openDatabase(dir);
  const view = plan(db, ASSETS_SQL.view, ['a', 's']);
  assert.match(view, /SEARCH a USING INDEX sqlite_autoindex_assets_1 \(id=\?\)/);
  assert.match(view, /SEARCH x USING PRIMARY KEY \(asset_id=\? AND studio_id=\?\)/);
  assert.match(plan(db, ASSETS_SQL.bySha, ['h']), /USING INDEX sqlite_autoindex_assets_2 \(sha256=\?\)/);
  db.close();
  rmSync(dir, { recursive: true, force: true });
});
