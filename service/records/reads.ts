import type { Db } from '../db/open';
import { unsignedPage, type UnsignedPage } from '../core/pagination';
import { readClient, type ReadRunner } from '../db/read-pool';
import type { Position, QuerySpec } from './compile';
import { positionOf, recordJson } from './page';
import { createRecordsReader } from './store';

/**
 * The records reads that run on the read workers (service/db/read-pool.ts):
 * a query page, handed back as its records' JSON text and the last one's
 * position (a string crosses threads far cheaper than rows do); the route signs
 * the cursor. In a structured clone a Buffer arrives as a plain Uint8Array: a
 * cursor's blob sort key is made a Buffer again for better-sqlite3.
 */

export function recordReadOps(db: Db) {
  const reader = createRecordsReader(db);
  return {
    'records.page': (spec: Omit<QuerySpec, 'indexed'>, limit: number): UnsignedPage<string> => {
      const { rows, cut } = reader.list({ ...spec, after: spec.after && withBufferKey(spec.after) }, limit + 1);
      // A page cut short by its bytes shows all but its last row, which only says that more exist.
      return unsignedPage(rows, cut ? rows.length - 1 : limit, (r) => positionOf(spec.order, r), recordJson);
    },
  };
}

export type RecordReadOps = ReturnType<typeof recordReadOps>;

/** The records reads as the routes call them, through the pool; each studio is its own lane. */
export function recordReads(runner: ReadRunner) {
  const call = readClient<RecordReadOps>(runner);
  return {
    page: (spec: Omit<QuerySpec, 'indexed'>, limit: number) => call(spec.studioId, 'records.page', spec, limit),
  };
}

export type RecordReads = ReturnType<typeof recordReads>;

function withBufferKey(p: Position): Position {
  if (p.kind !== 'key') return p;
  const key: unknown = p.key;
  if (!(key instanceof Uint8Array) || Buffer.isBuffer(key)) return p;
  return { ...p, key: Buffer.from(key.buffer, key.byteOffset, key.byteLength) };
}
