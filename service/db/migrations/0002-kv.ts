import type { Migration } from '../migrate';

/**
 * Key-value documents. `scope` is the owning studio's id, or '' for the
 * `shared` namespace common to every studio holding `kv.shared`. `writer` is
 * the studio whose kv_bytes quota the document counts toward (the last writer).
 * Keys compare as UTF-8 bytes (BINARY collation), which is the list order.
 */
export const m0002Kv: Migration = {
  version: 2,
  name: 'kv',
  up(db) {
    db.exec(`
      CREATE TABLE kv (
        scope TEXT NOT NULL,
        ns TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        size INTEGER NOT NULL,
        etag TEXT NOT NULL,
        writer TEXT NOT NULL REFERENCES studios(id),
        modified_at TEXT NOT NULL,
        PRIMARY KEY (scope, ns, key)
      ) STRICT, WITHOUT ROWID;

    `);
  },
};
