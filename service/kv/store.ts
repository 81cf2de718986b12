import type { Db } from '../db/open';
import { ApiError } from '../core/errors';
import { checkIfMatch, newEtag, type IfMatch } from '../core/etag';
import { applyMergePatch, type Json } from '../core/merge-patch';
import { documentText, requireDocument } from '../core/document';
import { nowIso } from '../core/time';
import type { StudiosStore } from '../studios';

/**
 * All SQL of key-value documents. A scope is the owning studio's id, or ''
 * for the shared namespace. Every write is one immediate transaction that reads
 * the current row, checks If-Match and the quota, and writes: nothing can slip
 * between the check and the write.
 */

export interface KvRow {
  key: string;
  value: string;
  size: number;
  etag: string;
  writer: string;
  modified_at: string;
}

export interface KvEntry {
  key: string;
  size: number;
  modified_at: string;
}

export interface KvAddress {
  scope: string;
  ns: string;
  key: string;
}

/** The hot reads, exported so a test can check their query plans. */
export const KV_SQL = {
  get: 'SELECT key, value, size, etag, writer, modified_at FROM kv WHERE scope = ? AND ns = ? AND key = ?',
  // Keys compare as UTF-8 bytes; no valid UTF-8 byte is 0xF5 or above, so
  // prefix || 0xF5 bounds every key that starts with the prefix.
  list: `SELECT key, size, modified_at FROM kv
    WHERE scope = ? AND ns = ? AND key >= ? AND key < (? || CAST(x'F5' AS TEXT)) AND key > ?
    ORDER BY key LIMIT ?`,
};

export function createKvStore(db: Db, studios: StudiosStore) {
  const stmts = {
    get: db.prepare<[string, string, string], KvRow>(KV_SQL.get),
    list: db.prepare<[string, string, string, string, string, number], KvEntry>(KV_SQL.list),
    upsert: db.prepare(
      `INSERT INTO kv (scope, ns, key, value, size, etag, writer, modified_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (scope, ns, key) DO UPDATE SET
         value = excluded.value, size = excluded.size, etag = excluded.etag,
         writer = excluded.writer, modified_at = excluded.modified_at`,
    ),
    delete: db.prepare('DELETE FROM kv WHERE scope = ? AND ns = ? AND key = ?'),
  };

  function write(at: KvAddress, writer: string, current: KvRow | undefined, doc: Json): KvRow {
    const { text, size } = documentText(requireDocument(doc, 'The document'));
    // Bytes count toward the last writer: its usage grows by the new size, less
    // the old size when it was already the one counting it.
    const delta = size - (current && current.writer === writer ? current.size : 0);
    studios.checkQuota(writer, 'kv_bytes', delta);
    const row: KvRow = { key: at.key, value: text, size, etag: newEtag(), writer, modified_at: nowIso() };
    stmts.upsert.run(at.scope, at.ns, at.key, text, size, row.etag, writer, row.modified_at);
    return row;
  }

  return {
    get(at: KvAddress): KvRow | null {
      return stmts.get.get(at.scope, at.ns, at.key) ?? null;
    },

    /** Up to `limit` entries after `after` ('' for the first page), key ascending. */
    list(scope: string, ns: string, prefix: string, after: string, limit: number): KvEntry[] {
      return stmts.list.all(scope, ns, prefix, prefix, after, limit);
    },

    put(at: KvAddress, writer: string, doc: Json, ifMatch: IfMatch): KvRow {
      return db
        .transaction(() => {
          const current = stmts.get.get(at.scope, at.ns, at.key);
          checkIfMatch(ifMatch, current?.etag ?? null);
          return write(at, writer, current, doc);
        })
        .immediate();
    },

    patch(at: KvAddress, writer: string, patch: Json, ifMatch: IfMatch): KvRow {
      return db
        .transaction(() => {
          const current = stmts.get.get(at.scope, at.ns, at.key);
          if (!current) throw ApiError.notFound(`The key "${at.key}"`);
          checkIfMatch(ifMatch, current.etag);
          return write(at, writer, current, applyMergePatch(JSON.parse(current.value) as Json, patch));
        })
        .immediate();
    },

    delete(at: KvAddress, ifMatch: IfMatch): void {
      db.transaction(() => {
        const current = stmts.get.get(at.scope, at.ns, at.key);
        if (!current) throw ApiError.notFound(`The key "${at.key}"`);
        checkIfMatch(ifMatch, current.etag);
        stmts.delete.run(at.scope, at.ns, at.key);
      }).immediate();
    },
  };
}

export type KvStore = ReturnType<typeof createKvStore>;
