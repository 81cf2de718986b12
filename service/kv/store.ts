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
    insert: db.prepare(
      'INSERT INTO kv (scope, ns, key, value, size, etag, writer, modified_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    update: db.prepare(
      'UPDATE kv SET value = ?, size = ?, etag = ?, writer = ?, modified_at = ? WHERE scope = ? AND ns = ? AND key = ?',
    ),
    delete: db.prepare('DELETE FROM kv WHERE scope = ? AND ns = ? AND key = ?'),
  };

  function write(at: KvAddress, writer: string, current: KvRow | undefined, text: string, size: number): KvRow {
    // The bytes count toward the last writer: it is charged the new size and
    // the previous writer refunded the old one (the same studio: the difference).
    if (current && current.writer !== writer) {
      studios.charge(writer, 'kv_bytes', size);
      studios.charge(current.writer, 'kv_bytes', -current.size);
    } else {
      studios.charge(writer, 'kv_bytes', size - (current?.size ?? 0));
    }
    const row: KvRow = { key: at.key, value: text, size, etag: newEtag(), writer, modified_at: nowIso() };
    if (current) stmts.update.run(text, size, row.etag, writer, row.modified_at, at.scope, at.ns, at.key);
    else stmts.insert.run(at.scope, at.ns, at.key, text, size, row.etag, writer, row.modified_at);
    return row;
  }

  // Made once, like the statements: a transaction function per call costs as much as a statement.
  const putTx = db.transaction((at: KvAddress, writer: string, ifMatch: IfMatch, text: string, size: number): KvRow => {
    const current = stmts.get.get(at.scope, at.ns, at.key);
    checkIfMatch(ifMatch, current?.etag ?? null);
    return write(at, writer, current, text, size);
  });

  return {
    get(at: KvAddress): KvRow | null {
      return stmts.get.get(at.scope, at.ns, at.key) ?? null;
    },

    /** Up to `limit` entries after `after` ('' for the first page), key ascending, read one at a time. */
    list(scope: string, ns: string, prefix: string, after: string, limit: number): IterableIterator<KvEntry> {
      return stmts.list.iterate(scope, ns, prefix, prefix, after, limit);
    },

    put(at: KvAddress, writer: string, doc: Json, ifMatch: IfMatch): KvRow {
      // A bad document is 400 before any 409, and is serialised outside the write lock.
      const { text, size } = documentText(requireDocument(doc, 'The document'));
      return putTx.immediate(at, writer, ifMatch, text, size);
    },

    patch(at: KvAddress, writer: string, patch: Json, ifMatch: IfMatch): KvRow {
      // The patch is checked as a document first: merge patch recurses over it.
      requireDocument(patch, 'The merge patch');
      return db
        .transaction(() => {
          const current = stmts.get.get(at.scope, at.ns, at.key);
          if (!current) throw ApiError.notFound(`The key "${at.key}"`);
          checkIfMatch(ifMatch, current.etag);
          const merged = applyMergePatch(JSON.parse(current.value) as Json, patch);
          const { text, size } = documentText(requireDocument(merged, 'The patched document'));
          return write(at, writer, current, text, size);
        })
        .immediate();
    },

    delete(at: KvAddress, ifMatch: IfMatch): void {
      db.transaction(() => {
        const current = stmts.get.get(at.scope, at.ns, at.key);
        if (!current) throw ApiError.notFound(`The key "${at.key}"`);
        checkIfMatch(ifMatch, current.etag);
        stmts.delete.run(at.scope, at.ns, at.key);
        studios.charge(current.writer, 'kv_bytes', -current.size);
      }).immediate();
    },
  };
}

export type KvStore = ReturnType<typeof createKvStore>;

/**
 * Uninstall with purge (docs/api.md "Uninstall and purge"): the studio's own documents go; keys it
 * wrote in the `shared` namespace stay (they are every studio's). Its usage
 * counter keeps only the shared bytes it still answers for. Inside the
 * caller's transaction.
 */
export function purgeStudioKv(db: Db, studioId: string): void {
  db.prepare('DELETE FROM kv WHERE scope = ?').run(studioId);
  db.prepare(
    `UPDATE studios SET kv_bytes_used = (SELECT coalesce(sum(size), 0) FROM kv WHERE scope = '' AND writer = ?) WHERE id = ?`,
  ).run(studioId, studioId);
}
