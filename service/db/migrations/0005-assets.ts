import type { Migration } from '../migrate';

/**
 * Assets (docs/api.md "Assets"). One row per distinct content (`sha256` UNIQUE); the
 * blob is DIR/blobs/<sha256><ext>. `asset_access` grants a studio read access
 * and holds that studio's own name for the asset and its library file.
 * `referenced_at` is set once, by the first reference of any kind, and never
 * cleared: "referenced at least once in its life". `reclaimed_at` marks a row
 * whose files were reclaimed; the row stays (GET answers 410).
 */
export const m0005Assets: Migration = {
  version: 5,
  name: 'assets',
  up(db) {
    db.exec(`
      CREATE TABLE assets (
        id TEXT PRIMARY KEY,
        sha256 TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL CHECK (kind IN ('image', 'video', 'audio', 'other')),
        mime TEXT NOT NULL,
        size INTEGER NOT NULL,
        ext TEXT NOT NULL,
        pinned INTEGER NOT NULL DEFAULT 0,
        width INTEGER,
        height INTEGER,
        duration_s REAL,
        fps REAL,
        created_at TEXT NOT NULL,
        referenced_at TEXT,
        reclaimed_at TEXT
      ) STRICT;

      CREATE TABLE asset_access (
        asset_id TEXT NOT NULL REFERENCES assets(id),
        studio_id TEXT NOT NULL REFERENCES studios(id),
        filename TEXT NOT NULL,
        library_path TEXT,
        granted_at TEXT NOT NULL,
        PRIMARY KEY (asset_id, studio_id)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX asset_access_by_studio ON asset_access(studio_id, asset_id);
      CREATE INDEX assets_reclaimed ON assets(reclaimed_at) WHERE reclaimed_at IS NOT NULL;
    `);
  },
};
