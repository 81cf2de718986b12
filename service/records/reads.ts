import type { Db } from '../db/open';
import { readClient, type ReadRunner } from '../db/read-pool';
import type { Position, QuerySpec } from './compile';
import { createRecordsReader, type ListedRow } from './store';

/**
 * The records reads that run on the read workers (service/db/read-pool.ts):
 * a query page. Arguments and results cross threads as structured clones, in
 * which a Buffer arrives as a plain Uint8Array: a blob sort key is made a
 * Buffer again on each side (the cursor code and better-sqlite3 want one).
 */

export function recordReadOps(db: Db) {
  const reader = createRecordsReader(db);
  return {
    'records.list': (spec: Omit<QuerySpec, 'indexed'>, limit: number) =>
      reader.list({ ...spec, after: spec.after && withBufferKey(spec.after) }, limit),
  };
}

export type RecordReadOps = ReturnType<typeof recordReadOps>;

/** The records reads as the routes call them, through the pool; each studio is its own lane. */
export function recordReads(runner: ReadRunner) {
  const call = readClient<RecordReadOps>(runner);
  return {
    async list(spec: Omit<QuerySpec, 'indexed'>, limit: number): Promise<{ rows: ListedRow[]; cut: boolean }> {
      const page = await call(spec.studioId, 'records.list', spec, limit);
      for (const row of page.rows) if (row.k instanceof Uint8Array) row.k = asBuffer(row.k);
      return page;
    },
  };
}

export type RecordReads = ReturnType<typeof recordReads>;

function withBufferKey(p: Position): Position {
  return p.kind === 'key' && p.key instanceof Uint8Array ? { ...p, key: asBuffer(p.key) } : p;
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
