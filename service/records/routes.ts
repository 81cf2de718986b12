import { ApiError } from '../core/errors';
import type { Principal } from '../core/auth';
import { isUlid } from '../core/ids';
import { IF_MATCH_HEADER, route, type Route } from '../core/route';
import { pageReply, pageStart, type CursorCodec, type CursorValue } from '../core/pagination';
import { DEFAULT_ORDER_TEXT, parseOrder, parseWhere, type Order } from './filter';
import type { Position } from './compile';
import { collectionParams, documentBody, listQuery, record, recordPage, recordParams } from './schema';
import { recordJson } from './page';
import type { RecordReads } from './reads';
import type { RecordRow, RecordsStore } from './store';

/**
 *   GET    /records/{collection}        query: where (repeatable), order, limit, cursor
 *   POST   /records/{collection}        create (201)
 *   GET    /records/{collection}/{id}   one record
 *   PUT    /records/{collection}/{id}   replace the document (If-Match optional)
 *   PATCH  /records/{collection}/{id}   RFC 7396 merge patch (If-Match optional)
 *   DELETE /records/{collection}/{id}   soft delete (If-Match optional)
 */
export function recordRoutes(deps: { records: RecordsStore; reads: RecordReads; cursors: CursorCodec }): Route[] {
  const { records, reads, cursors } = deps;
  // 404 before the body or If-Match is looked at (docs/api.md "Order of checks"); reads no document.
  const live = ({ params, principal }: { params: { collection: string; id: string }; principal: Principal }) => {
    if (!isUlid(params.id)) throw ApiError.notFound('The record');
    records.requireLive(principal.studioId, params.collection, params.id);
  };

  return [
    route({
      method: 'GET',
      path: '/records/{collection}',
      summary: 'Query a collection',
      description:
        'Every `where` clause must match. Default order `created_at:desc`; `id` breaks ties in the same direction; ' +
        'records missing the order field come last. A bad clause or order is 400 `bad_filter`.',
      capability: 'records',
      params: collectionParams,
      query: listQuery,
      success: { status: 200, description: 'RecordPage', schema: recordPage },
      errors: [400],
      async handle({ params, query, principal }) {
        const texts = query.where === undefined ? [] : ([] as string[]).concat(query.where);
        const clauses = parseWhere(texts);
        const order = parseOrder(query.order);
        // A cursor is bound to the studio, the collection, the where clauses and the order (docs/api.md "Pages").
        const binding = `records\n${principal.studioId}\n${params.collection}\n${JSON.stringify(texts)}\n${query.order ?? DEFAULT_ORDER_TEXT}`;
        const { limit, after } = pageStart(cursors, binding, query, (position) => toPosition(order, position));
        // A query may scan the whole collection: it runs on a read worker (docs/api.md §Where reads run),
        // which hands back the page's JSON text and its last position; the cursor is signed here.
        const page = await reads.page({ studioId: principal.studioId, collection: params.collection, clauses, order, after }, limit);
        return pageReply(page, cursors, binding);
      },
    }),
    route({
      method: 'POST',
      path: '/records/{collection}',
      documentBody: true,
      summary: 'Create a record',
      capability: 'records',
      params: collectionParams,
      body: documentBody,
      success: { status: 201, description: 'Record', schema: record, etag: true },
      errors: [400, 413, 429],
      handle({ params, body, principal }) {
        return reply(201, records.create(principal.studioId, params.collection, body));
      },
    }),
    route({
      method: 'GET',
      path: '/records/{collection}/{id}',
      summary: 'Read a record',
      capability: 'records',
      params: recordParams,
      success: { status: 200, description: 'Record', schema: record, etag: true },
      errors: [400, 404],
      handle({ params, principal }) {
        if (!isUlid(params.id)) throw ApiError.notFound('The record');
        return reply(200, records.get(principal.studioId, params.collection, params.id));
      },
    }),
    route({
      method: 'PUT',
      path: '/records/{collection}/{id}',
      documentBody: true,
      summary: 'Replace a record\'s document',
      description: 'The document replaces the stored one; `id` and `created_at` stay.',
      capability: 'records',
      params: recordParams,
      visible: live,
      body: documentBody,
      headers: [IF_MATCH_HEADER],
      success: { status: 200, description: 'Record', schema: record, etag: true },
      errors: [400, 404, 409, 413],
      handle({ params, body, principal, ifMatch }) {
        return reply(200, records.put(principal.studioId, params.collection, params.id, body, ifMatch));
      },
    }),
    route({
      method: 'PATCH',
      path: '/records/{collection}/{id}',
      documentBody: true,
      summary: 'Merge-patch a record (RFC 7396)',
      capability: 'records',
      params: recordParams,
      visible: live,
      body: documentBody,
      bodyType: 'application/merge-patch+json',
      headers: [IF_MATCH_HEADER],
      success: { status: 200, description: 'Record', schema: record, etag: true },
      errors: [400, 404, 409, 413],
      handle({ params, body, principal, ifMatch }) {
        return reply(200, records.patch(principal.studioId, params.collection, params.id, body, ifMatch));
      },
    }),
    route({
      method: 'DELETE',
      path: '/records/{collection}/{id}',
      summary: 'Delete a record (soft)',
      capability: 'records',
      params: recordParams,
      visible: live,
      headers: [IF_MATCH_HEADER],
      success: { status: 204, description: 'Deleted' },
      errors: [400, 404, 409],
      handle({ params, principal, ifMatch }) {
        records.delete(principal.studioId, params.collection, params.id, ifMatch);
        return { status: 204 };
      },
    }),
  ];
}

function reply(status: number, row: RecordRow) {
  return { status, rawJson: recordJson(row), etag: row.etag };
}

function toPosition(order: Order, v: CursorValue[]): Position {
  const str = (x: CursorValue | undefined): x is string => typeof x === 'string';
  const f = order.field.target;
  if (f === 'id' || f === 'created_at') {
    if (v.length === 1 && str(v[0])) return { kind: 'id', id: v[0] };
  } else if (f === 'updated_at') {
    if (v.length === 2 && str(v[0]) && str(v[1])) return { kind: 'updated', at: v[0], id: v[1] };
  } else if (v[0] === 'm' && v.length === 2 && str(v[1])) {
    return { kind: 'missing', id: v[1] };
  } else if (v.length === 3 && str(v[2])) {
    if (v[0] === 'n' && typeof v[1] === 'number') return { kind: 'key', key: v[1], id: v[2] };
    if (v[0] === 's' && str(v[1])) return { kind: 'key', key: v[1], id: v[2] };
    if (v[0] === 'b' && str(v[1])) return { kind: 'key', key: Buffer.from(v[1], 'base64'), id: v[2] };
  }
  throw ApiError.badCursor();
}
