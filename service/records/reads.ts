import type { Db } from '../db/open';
import { unsignedPage, type UnsignedPage } from '../core/pagination';
import { readClient, type ReadRunner } from '../db/read-pool';
import { readsOneIndexRange, type Position, type QuerySpec } from './compile';
import { positionOf, recordJson } from './page';
import { createRecordsReader, type RecordsReader } from './store';

/**
 * The records reads that run on the read workers (service/db/read-pool.ts):
 * a query page, handed back as its records' JSON text and the last one's
 * position (a string crosses threads far cheaper than rows do); the route signs
 * the cursor. In a structured clone a Buffer arrives as a plain Uint8Array: a
 * cursor's blob sort key is made a Buffer again for better-sqlite3.
 */

/** A query page as its records' JSON text and the last one's position, on the reader's connection. */
function pageOn(reader: RecordsReader) {
  return (spec: Omit<QuerySpec, 'indexed'>, limit: number): UnsignedPage<string> => {
    const rows = reader.rows({ ...spec, after: spec.after && withBufferKey(spec.after) }, limit + 1);
    return unsignedPage(rows, limit, (r) => positionOf(spec.order, r), recordJson);
  };
}

export function recordReadOps(db: Db) {
  return { 'records.page': pageOn(createRecordsReader(db)) };
}

export type RecordReadOps = ReturnType<typeof recordReadOps>;

/**
 * The records reads as the routes call them: through the pool, each studio its
 * own lane; except a page that one declared index answers in order
 * (readsOneIndexRange), which reads no more rows than it shows, costs less
 * than the hop to a worker and back, and runs here on the main connection.
 */
export function recordReads(runner: ReadRunner, main: Db) {
  const call = readClient<RecordReadOps>(runner);
  const reader = createRecordsReader(main);
  const onMain = pageOn(reader);
  return {
    async page(spec: Omit<QuerySpec, 'indexed'>, limit: number): Promise<UnsignedPage<string>> {
      if (readsOneIndexRange(spec.clauses, spec.order, reader.indexedFields(spec.studioId, spec.collection))) return onMain(spec, limit);
      return call(spec.studioId, 'records.page', spec, limit);
    },
  };
}

export type RecordReads = ReturnType<typeof recordReads>;

function withBufferKey(p: Position): Position {
  if (p.kind !== 'key') return p;
  const key: unknown = p.key;
  if (!(key instanceof Uint8Array) || Buffer.isBuffer(key)) return p;
  return { ...p, key: Buffer.from(key.buffer, key.byteOffset, key.byteLength) };
}
