import { randomBytes } from 'node:crypto';
import type { Migration } from '../migrate';

/** Studios, their quotas and usage counters, hashed tokens, and the data dir's secret. */
export const m0001Core: Migration = {
  version: 1,
  name: 'core',
  up(db) {
    db.exec(`
      CREATE TABLE meta (
        key TEXT PRIMARY KEY,
        value BLOB NOT NULL
      ) STRICT;

      CREATE TABLE studios (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        quota_records INTEGER NOT NULL,
        quota_kv_bytes INTEGER NOT NULL,
        -- usage counters, charged and refunded by the stores inside each write's transaction
        records_used INTEGER NOT NULL DEFAULT 0,
        kv_bytes_used INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL
      ) STRICT;

      CREATE TABLE tokens (
        hash BLOB PRIMARY KEY,
        studio_id TEXT NOT NULL REFERENCES studios(id),
        capabilities TEXT NOT NULL,
        created_at TEXT NOT NULL,
        revoked_at TEXT
      ) STRICT;
      CREATE INDEX tokens_by_studio ON tokens(studio_id);
    `);
    db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)').run('cursor_secret', randomBytes(32));
  },
};
