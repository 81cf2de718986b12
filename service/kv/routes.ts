import { ApiError } from '../core/errors';
import { IF_MATCH_HEADER, route, type Route } from '../core/route';
import type { CursorCodec } from '../core/pagination';
import { listPage, stringPosition } from '../core/pagination';
import type { Json } from '../core/merge-patch';
import type { Principal } from '../core/auth';
import { documentBody, keyParams, kvDoc, kvKeyPage, listQuery, nsParams, SHARED_NS } from './schema';
import type { KvAddress, KvRow, KvStore } from './store';

/**
 *   GET    /kv/{ns}          keys of a namespace, key ascending, literal prefix
 *   GET    /kv/{ns}/{key+}   one document
 *   PUT    /kv/{ns}/{key+}   create or replace (If-Match optional)
 *   PATCH  /kv/{ns}/{key+}   RFC 7396 merge patch of an existing document
 *   DELETE /kv/{ns}/{key+}   remove (If-Match optional)
 */
export function kvRoutes(deps: { kv: KvStore; cursors: CursorCodec }): Route[] {
  const { kv, cursors } = deps;
  const sharedNeedsCap = (p: Record<string, string>) => (p.ns === SHARED_NS ? ['kv.shared' as const] : []);
  const keyExists = ({ params, principal }: { params: { ns: string; key: string }; principal: Principal }) => {
    if (!kv.get(addressOf(principal, params))) throw ApiError.notFound(`The key "${params.key}"`);
  };

  return [
    route({
      method: 'GET',
      path: '/kv/{ns}',
      summary: 'List the keys of a namespace',
      description: 'Ordered by key (UTF-8 byte order) ascending; sizes and modified times, no values.',
      capability: 'kv',
      extraCapabilities: sharedNeedsCap,
      params: nsParams,
      query: listQuery,
      success: { status: 200, description: 'KVKeyPage', schema: kvKeyPage },
      errors: [400],
      handle({ params, query, principal }) {
        const scope = scopeOf(principal, params.ns);
        const prefix = query.prefix ?? '';
        return listPage(cursors, `kv\n${scope}\n${params.ns}\n${prefix}`, query, {
          after: stringPosition,
          rows: (after, limit) => kv.list(scope, params.ns, prefix, after ?? '', limit),
          position: (r) => [r.key],
          json: (r) => JSON.stringify(r),
        });
      },
    }),
    route({
      method: 'GET',
      path: '/kv/{ns}/{key+}',
      summary: 'Read a document',
      capability: 'kv',
      extraCapabilities: sharedNeedsCap,
      params: keyParams,
      success: { status: 200, description: 'KVDoc', schema: kvDoc, etag: true },
      errors: [400, 404],
      handle({ params, principal }) {
        const row = kv.get(addressOf(principal, params));
        if (!row) throw ApiError.notFound(`The key "${params.key}"`);
        return docReply(row);
      },
    }),
    route({
      method: 'PUT',
      path: '/kv/{ns}/{key+}',
      documentBody: true,
      summary: 'Create or replace a document',
      description:
        'With If-Match the write happens only when the stored etag matches; If-Match on a missing key is 409 `etag_mismatch`.',
      capability: 'kv',
      extraCapabilities: sharedNeedsCap,
      params: keyParams,
      body: documentBody,
      headers: [IF_MATCH_HEADER],
      success: { status: 200, description: 'KVDoc as stored', schema: kvDoc, etag: true },
      errors: [400, 409, 413, 429],
      handle({ params, body, principal, ifMatch }) {
        return docReply(kv.put(addressOf(principal, params), principal.studioId, body as Json, ifMatch));
      },
    }),
    route({
      method: 'PATCH',
      path: '/kv/{ns}/{key+}',
      documentBody: true,
      summary: 'Merge-patch an existing document (RFC 7396)',
      capability: 'kv',
      extraCapabilities: sharedNeedsCap,
      params: keyParams,
      visible: keyExists,
      body: documentBody,
      bodyType: 'application/merge-patch+json',
      headers: [IF_MATCH_HEADER],
      success: { status: 200, description: 'KVDoc as patched', schema: kvDoc, etag: true },
      errors: [400, 404, 409, 413, 429],
      handle({ params, body, principal, ifMatch }) {
        return docReply(kv.patch(addressOf(principal, params), principal.studioId, body as Json, ifMatch));
      },
    }),
    route({
      method: 'DELETE',
      path: '/kv/{ns}/{key+}',
      summary: 'Delete a document',
      capability: 'kv',
      extraCapabilities: sharedNeedsCap,
      params: keyParams,
      visible: keyExists,
      headers: [IF_MATCH_HEADER],
      success: { status: 204, description: 'Deleted' },
      errors: [400, 404, 409],
      handle({ params, principal, ifMatch }) {
        kv.delete(addressOf(principal, params), ifMatch);
        return { status: 204 };
      },
    }),
  ];
}

function scopeOf(principal: Principal, ns: string): string {
  return ns === SHARED_NS ? '' : principal.studioId;
}

function addressOf(principal: Principal, params: { ns: string; key: string }): KvAddress {
  return { scope: scopeOf(principal, params.ns), ns: params.ns, key: params.key };
}

/** KVDoc written as JSON text around the stored value, which is already JSON. */
function docReply(row: KvRow) {
  const rawJson = `{"key":${JSON.stringify(row.key)},"value":${row.value},"etag":${JSON.stringify(row.etag)},"modified_at":"${row.modified_at}"}`;
  return { status: 200, rawJson, etag: row.etag };
}
