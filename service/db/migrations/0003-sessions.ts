import type { Migration } from '../migrate';

/**
 * Sessions: named state documents per studio. Soft-deleted rows keep their id
 * (items keep naming them) but free their name and stop counting toward
 * kv_bytes (the sessions store charges and refunds studios.kv_bytes_used in
 * each write's transaction). The list index serves the order opened_at desc (never-opened last),
 * created_at desc, id desc.
 */
export const m0003Sessions: Migration = {
  version: 3,
  name: 'sessions',
  up(db) {
    db.exec(`
      CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        studio_id TEXT NOT NULL REFERENCES studios(id),
        name TEXT NOT NULL,
        state TEXT NOT NULL,
        state_size INTEGER NOT NULL,
        etag TEXT NOT NULL,
        opened_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        deleted_at TEXT
      ) STRICT;
      CREATE UNIQUE INDEX sessions_live_name ON sessions(studio_id, name) WHERE deleted_at IS NULL;
      CREATE INDEX sessions_list ON sessions(studio_id, coalesce(opened_at, ''), created_at, id)
        WHERE deleted_at IS NULL;

    `);
  },
};
