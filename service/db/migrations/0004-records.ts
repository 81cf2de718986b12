import type { Migration } from '../migrate';

/**
 * Records: one table for every studio's collections, clustered by
 * (studio_id, collection, id) so a collection is one contiguous range and its
 * scan in id order (= creation order) needs no other index. `doc` is the
 * document as SQLite JSONB: filters read members without re-parsing text.
 * Soft-deleted rows stay (deleted_at) and are invisible everywhere.
 *
 * record_indexes lists the declared indexes (`bin/backlot index add`); the
 * expression indexes behind them are created by the records store (store.ts
 * declareIndex), one per declaration.
 *
 * The planner gets fixed statistics for this table (sqlite_stat1): without
 * them it cannot know that an expression index on one field is more selective
 * than the (studio_id, collection) prefix of the primary key, and picks the
 * latter. Fixed numbers (not ANALYZE) keep plans stable whatever the data.
 */
export const RECORDS_STATS = {
  /** 1M rows; a studio 100k; a collection 10k; an id 1. */
  primary: '1000000 100000 10000 1',
  updated: '1000000 100000 10000 2 1',
  /** A declared index: one key value matches about 5 records. */
  declared: '1000000 100000 10000 5 1',
};

export const m0004Records: Migration = {
  version: 4,
  name: 'records',
  up(db) {
    db.exec(`
      CREATE TABLE records (
        studio_id TEXT NOT NULL REFERENCES studios(id),
        collection TEXT NOT NULL,
        id TEXT NOT NULL,
        doc BLOB NOT NULL,
        etag TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        deleted_at TEXT,
        PRIMARY KEY (studio_id, collection, id)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX records_updated ON records(studio_id, collection, updated_at, id) WHERE deleted_at IS NULL;

      CREATE TABLE record_indexes (
        studio_id TEXT NOT NULL REFERENCES studios(id),
        collection TEXT NOT NULL,
        field TEXT NOT NULL,
        name TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        PRIMARY KEY (studio_id, collection, field)
      ) STRICT;

      ANALYZE records;
      DELETE FROM sqlite_stat1 WHERE tbl = 'records';
    `);
    const stat = db.prepare('INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?, ?, ?)');
    stat.run('records', 'records', RECORDS_STATS.primary);
    stat.run('records', 'records_updated', RECORDS_STATS.updated);
    db.exec('ANALYZE sqlite_schema');
  },
};
