import { createHash } from 'node:crypto';
import { decodeTime } from 'ulid';
import type { Db } from '../db/open';
import { statementCache } from '../db/statements';
import { ApiError } from '../core/errors';
import { checkIfMatch, newEtag, type IfMatch } from '../core/etag';
import { applyMergePatch, type Json, type JsonObject } from '../core/merge-patch';
import { documentText, requireDocument } from '../core/document';
import { newId } from '../core/ids';
import { nowIso } from '../core/time';
import type { StudiosStore } from '../studios';
import { RECORDS_STATS } from '../db/migrations/0004-records';
import { compileQuery, indexKeySql, RECORD_COLUMNS, type QuerySpec } from './compile';
import { FIELD_PATTERN } from './filter';
import { COLLECTION_PATTERN } from './schema';

/**
 * All SQL of records. The document is checked first (400, 413; for PATCH, the
 * patch's shape), then an immediate transaction checks the record is live
 * (404), If-Match (409), the patched result (PATCH), the `records` quota (429,
 * on create only), and writes. `created_at` is the
 * instant of the record's ULID, so creation order, id order and created_at
 * order are one order (compile.ts relies on it).
 */

const RESERVED_KEYS: readonly string[] = ['id', 'created_at', 'updated_at', 'etag'];

export interface RecordRow {
  id: string;
  created_at: string;
  updated_at: string;
  etag: string;
  /** The document as compact JSON text (without the reserved members). */
  doc: string;
}

export interface ListedRow extends RecordRow {
  /** The order field's key (see compile.ts), for the next cursor. */
  k: number | string | Buffer | null;
}

/** Compiled list statements kept prepared; the text varies only with the shape of a query. */
const STATEMENT_CACHE_SIZE = 256;

export const RECORDS_SQL = {
  get: `SELECT ${RECORD_COLUMNS} FROM records WHERE studio_id = ? AND collection = ? AND id = ? AND deleted_at IS NULL`,
  /** Liveness and etag only: no document text is built (404 checks, DELETE). */
  etag: 'SELECT etag FROM records WHERE studio_id = ? AND collection = ? AND id = ? AND deleted_at IS NULL',
  indexed: 'SELECT field FROM record_indexes WHERE studio_id = ? AND collection = ?',
};

/**
 * The reads whose cost grows with the data (a query page): the read workers
 * run them on connections of their own (reads.ts), the store on the main one
 * when the pool is inline.
 */
export function createRecordsReader(db: Db) {
  const indexed = db.prepare<[string, string], string>(RECORDS_SQL.indexed).pluck();
  const prepared = statementCache<unknown[], ListedRow>(db, STATEMENT_CACHE_SIZE);
  /** Fields of a collection with a declared index (read per query: the CLI may add one any time). */
  const indexedFields = (studioId: string, collection: string): Set<string> => new Set(indexed.all(studioId, collection));
  /**
   * Up to `limit` rows from the page's position, running the order's steps in
   * turn, read one at a time: a page stops reading once core/pagination.ts
   * cuts it (PAGE_BYTES: a page of 500 records of 4 MiB would otherwise be
   * 2 GB in memory), and the rows past the cut are never read.
   */
  function* rows(spec: Omit<QuerySpec, 'indexed'>, limit: number): Generator<ListedRow> {
    let read = 0;
    for (const step of compileQuery({ ...spec, indexed: indexedFields(spec.studioId, spec.collection) })) {
      for (const row of prepared(step.sql).iterate(...step.params, limit - read)) {
        read++;
        yield row;
      }
      if (read >= limit) break;
    }
  }

  return {
    indexedFields,

    rows,

    /** As `rows`, all at once. */
    list(spec: Omit<QuerySpec, 'indexed'>, limit: number): { rows: ListedRow[] } {
      return { rows: [...rows(spec, limit)] };
    },
  };
}

export type RecordsReader = ReturnType<typeof createRecordsReader>;

export function createRecordsStore(db: Db, studios: StudiosStore, options: { maxDocBytes: () => number }) {
  const stmts = {
    get: db.prepare<[string, string, string], RecordRow>(RECORDS_SQL.get),
    etag: db.prepare<[string, string, string], string>(RECORDS_SQL.etag).pluck(),
    insert: db.prepare(
      `INSERT INTO records (studio_id, collection, id, doc, etag, created_at, updated_at)
       VALUES (?, ?, ?, jsonb(?), ?, ?, ?)`,
    ),
    update: db.prepare(
      'UPDATE records SET doc = jsonb(?), etag = ?, updated_at = ? WHERE studio_id = ? AND collection = ? AND id = ?',
    ),
    softDelete: db.prepare('UPDATE records SET deleted_at = ? WHERE studio_id = ? AND collection = ? AND id = ?'),
  };

  function live(studioId: string, collection: string, id: string): RecordRow {
    const row = stmts.get.get(studioId, collection, id);
    if (!row) throw ApiError.notFound('The record');
    return row;
  }

  function liveEtag(studioId: string, collection: string, id: string): string {
    const etag = stmts.etag.get(studioId, collection, id);
    if (etag === undefined) throw ApiError.notFound('The record');
    return etag;
  }

  /** A record document: a JSON object without reserved keys, no larger than the body limit. */
  function checkDocument(value: unknown, what: string): string {
    const doc = requireDocument(value, what);
    refuseReserved(doc, what, () => true);
    const { text, size } = documentText(doc);
    const limit = options.maxDocBytes();
    if (size > limit) throw ApiError.tooLarge(limit, `${what} (${size} bytes as compact JSON)`);
    return text;
  }

  /** 400 `invalid_document` when `doc` has a reserved key (`counts` filters by value). */
  function refuseReserved(doc: Record<string, unknown>, what: string, counts: (value: unknown) => boolean): void {
    const reserved = RESERVED_KEYS.filter((k) => Object.hasOwn(doc, k) && counts(doc[k]));
    if (reserved.length > 0) {
      throw ApiError.invalidDocument(`${what} has the reserved key(s) ${reserved.join(', ')}; the service sets them.`, {
        reserved,
      });
    }
  }

  function write(studioId: string, collection: string, current: RecordRow, text: string): RecordRow {
    const row: RecordRow = { ...current, doc: text, etag: newEtag(), updated_at: nowIso() };
    stmts.update.run(text, row.etag, row.updated_at, studioId, collection, current.id);
    return row;
  }

  function insert(studioId: string, collection: string, text: string): RecordRow {
    const id = newId();
    const created = new Date(decodeTime(id)).toISOString();
    const row: RecordRow = { id, created_at: created, updated_at: created, etag: newEtag(), doc: text };
    stmts.insert.run(studioId, collection, id, text, row.etag, row.created_at, row.updated_at);
    return row;
  }

  return {
    get: live,

    /** 404 unless the record is live; reads no document. */
    requireLive(studioId: string, collection: string, id: string): void {
      liveEtag(studioId, collection, id);
    },

    ...createRecordsReader(db),

    create(studioId: string, collection: string, doc: unknown): RecordRow {
      const text = checkDocument(doc, 'The record');
      return db
        .transaction(() => {
          studios.charge(studioId, 'records', 1);
          return insert(studioId, collection, text);
        })
        .immediate();
    },

    /** Bulk insert in one transaction (seeding, benchmarks); the quota is charged for all of them. */
    createMany(studioId: string, collection: string, docs: readonly unknown[]): number {
      const texts = docs.map((d) => checkDocument(d, 'The record'));
      db.transaction(() => {
        studios.charge(studioId, 'records', texts.length);
        for (const text of texts) insert(studioId, collection, text);
      }).immediate();
      return texts.length;
    },

    /** Replaces the document; id and created_at stay. */
    put(studioId: string, collection: string, id: string, doc: unknown, ifMatch: IfMatch): RecordRow {
      const text = checkDocument(doc, 'The record');
      return db
        .transaction(() => {
          const current = live(studioId, collection, id);
          checkIfMatch(ifMatch, current.etag);
          return write(studioId, collection, current, text);
        })
        .immediate();
    },

    patch(studioId: string, collection: string, id: string, patch: unknown, ifMatch: IfMatch): RecordRow {
      const patchDoc = requireDocument(patch, 'The merge patch');
      // A non-null reserved member always survives the merge: 400 before the record's 409 (docs/api.md "Records and collections").
      refuseReserved(patchDoc, 'The patched record', (value) => value !== null);
      return db
        .transaction(() => {
          const current = live(studioId, collection, id);
          checkIfMatch(ifMatch, current.etag);
          const merged = applyMergePatch(JSON.parse(current.doc) as JsonObject, patchDoc as Json);
          return write(studioId, collection, current, checkDocument(merged, 'The patched record'));
        })
        .immediate();
    },

    /** Soft delete: the row stays, invisible, and stops counting toward the quota. */
    delete(studioId: string, collection: string, id: string, ifMatch: IfMatch): void {
      db.transaction(() => {
        checkIfMatch(ifMatch, liveEtag(studioId, collection, id));
        stmts.softDelete.run(nowIso(), studioId, collection, id);
        studios.charge(studioId, 'records', -1);
      }).immediate();
    },
  };

}

export type RecordsStore = ReturnType<typeof createRecordsStore>;

/**
 * Declared indexes (docs/api.md "Declared indexes"): an expression index on
 * (studio_id, collection, K(field), id), where K is exactly the key expression
 * the compiler emits for the field (compile.ts keyExpr), partial on the one
 * studio, collection and live rows, so it holds that collection only and
 * writes elsewhere never touch it. The planner uses it for eq, in, ranges and
 * order on the field. A declaration is a row of record_indexes; the compiler
 * writes the field's path in the index's (literal) form only for declared
 * (studio, collection, field) triples.
 *
 * The partial WHERE compares studio_id and collection with constants, so SQLite
 * checks a statement's bound values against it when planning (and re-checks
 * when they change); measured at a few µs per query.
 *
 * Declaring works while the server runs: the DDL changes the schema, so the
 * server re-prepares and sees the index on its next query, and the compiler
 * reads record_indexes per query.
 */

export interface DeclaredIndex {
  studio_id: string;
  collection: string;
  field: string;
  name: string;
  created: boolean;
}

/** Index names come from a hash, never from the names themselves. */
function indexName(studioId: string, collection: string, field: string): string {
  return `records_ix_${createHash('sha256').update(`${studioId}\n${collection}\n${field}`).digest('hex').slice(0, 24)}`;
}

/** A name checked against a closed character set, written into DDL as a literal. */
function literal(text: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) throw new Error(`refusing to write ${JSON.stringify(text)} into SQL`);
  return `'${text}'`;
}

export function declareIndex(db: Db, input: { studioId: string; collection: string; field: string }): DeclaredIndex {
  const { studioId, collection, field } = input;
  if (!COLLECTION_PATTERN.test(collection)) {
    throw ApiError.badRequest(`The collection name "${collection}" must match ${COLLECTION_PATTERN.source}.`);
  }
  if (!FIELD_PATTERN.test(field) || RESERVED_KEYS.includes(field)) {
    throw ApiError.badRequest(
      `The field "${field}" must be a top-level document key matching ${FIELD_PATTERN.source} ` +
        '(id, created_at and updated_at are always indexed; etag is not a document key).',
    );
  }
  const name = indexName(studioId, collection, field);
  return db
    .transaction((): DeclaredIndex => {
      if (!db.prepare('SELECT 1 FROM studios WHERE id = ?').get(studioId)) throw ApiError.notFound(`The studio "${studioId}"`);
      const known = db
        .prepare('SELECT name FROM record_indexes WHERE studio_id = ? AND collection = ? AND field = ?')
        .get(studioId, collection, field);
      if (known) return { studio_id: studioId, collection, field, name, created: false };
      db.exec(
        `CREATE INDEX IF NOT EXISTS ${name} ON records (studio_id, collection, ${indexKeySql(field)}, id) ` +
          `WHERE deleted_at IS NULL AND studio_id = ${literal(studioId)} AND collection = ${literal(collection)}`,
      );
      db.prepare('DELETE FROM sqlite_stat1 WHERE tbl = ? AND idx = ?').run('records', name);
      db.prepare('INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?, ?, ?)').run('records', name, RECORDS_STATS.declared);
      db.prepare('INSERT INTO record_indexes (studio_id, collection, field, name, created_at) VALUES (?, ?, ?, ?, ?)').run(
        studioId,
        collection,
        field,
        name,
        nowIso(),
      );
      db.exec('ANALYZE sqlite_schema');
      return { studio_id: studioId, collection, field, name, created: true };
    })
    .immediate();
}

/** Uninstall with purge: every record of the studio goes (its declared indexes stay, as declarations). In the caller's transaction. */
export function purgeStudioRecords(db: Db, studioId: string): void {
  db.prepare('DELETE FROM records WHERE studio_id = ?').run(studioId);
  db.prepare('UPDATE studios SET records_used = 0 WHERE id = ?').run(studioId);
}
