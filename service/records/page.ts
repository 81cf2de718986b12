import type { CursorValue } from '../core/pagination';
import type { Order } from './filter';
import type { ListedRow, RecordRow } from './store';

/* A record and a page position as the answer shows them: built where the rows are read (a read worker, or the main thread). */

/** The flat Record as JSON text around the stored document text. */
export function recordJson(row: RecordRow): string {
  const members = row.doc.length > 2 ? `,${row.doc.slice(1, -1)}` : '';
  return `{"id":"${row.id}","created_at":"${row.created_at}","updated_at":"${row.updated_at}","etag":"${row.etag}"${members}}`;
}

/** The cursor position of a row in an order (see compile.ts Position). */
export function positionOf(order: Order, row: ListedRow): CursorValue[] {
  const f = order.field.target;
  if (f === 'id' || f === 'created_at') return [row.id];
  if (f === 'updated_at') return [row.updated_at, row.id];
  const k = row.k;
  if (k === null) return ['m', row.id];
  if (Buffer.isBuffer(k)) return ['b', k.toString('base64'), row.id];
  return [typeof k === 'number' ? 'n' : 's', k, row.id];
}
