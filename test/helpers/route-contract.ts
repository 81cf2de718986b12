import { z } from 'zod';
import { ERROR_CODES } from '../../service/core/errors';
import type { Route } from '../../service/core/route';

/**
 * What the contract lets each route answer, for the hostile-input test
 * (docs/security.md "Hostile input"): derived from the route table (`success`, `errors`) plus
 * the generic rules of docs/api.md and the per-route codes below.
 */

export const keyOf = (r: Route) => `${r.method} ${r.path}`;

/**
 * What the contract allows a route to answer beyond `success.status` and its
 * `errors` (statuses), and which codes of a status it may use where the
 * catalog has several (docs/api.md "Errors" and each route's section).
 * A route missing here gets every code of the catalog for each listed status.
 */
const EXTRA_SUCCESS: Record<string, number[]> = {
  'POST /assets': [200],
  'POST /assets:adopt': [200],
  'GET /assets/{id}': [206, 304],
  'GET /assets/{id}/thumb': [304],
};
const CODES: Record<string, Partial<Record<number, string[]>>> = {
  'PUT /kv/{ns}/{key+}': { 409: ['etag_mismatch'] },
  'PATCH /kv/{ns}/{key+}': { 409: ['etag_mismatch'] },
  'DELETE /kv/{ns}/{key+}': { 409: ['etag_mismatch'] },
  'PUT /records/{collection}/{id}': { 409: ['etag_mismatch'] },
  'PATCH /records/{collection}/{id}': { 409: ['etag_mismatch'] },
  'DELETE /records/{collection}/{id}': { 409: ['etag_mismatch'] },
  'POST /sessions': { 409: ['name_taken'] },
  'PATCH /sessions/{id}': { 409: ['etag_mismatch', 'name_taken'] },
  'DELETE /sessions/{id}': { 409: ['etag_mismatch'] },
  'POST /sessions/{id}:duplicate': { 409: ['name_taken'] },
  'POST /assets:adopt': { 409: ['conflict'], 422: ['outside_roots', 'cross_device', 'not_a_file'] },
  'POST /assets:reclaim': { 409: ['preview_changed', 'not_reclaimable'] },
  'POST /launcher/assets:reclaim': { 409: ['preview_changed', 'not_reclaimable'] },
  'GET /gallery/items': { 403: ['capability_required'] },
  'POST /gallery/items': { 422: ['unknown_session'] },
  'PATCH /jobs/{id}': { 403: ['not_a_task'], 409: ['job_finished', 'conflict'] },
  'POST /jobs/{id}/logs': { 403: ['not_a_task'], 409: ['job_finished'] },
  'POST /jobs/{id}:cancel': { 403: ['not_a_task'], 409: ['job_finished'] },
  'POST /timeline': { 422: ['invalid_timeline'] },
  'PATCH /timeline/{id}': { 409: ['etag_mismatch'], 422: ['invalid_timeline'] },
  'DELETE /timeline/{id}': { 409: ['etag_mismatch'] },
  'POST /timeline/{id}:revert': { 409: ['etag_mismatch'], 422: ['invalid_timeline'] },
  'GET /timeline/{id}:plan': { 422: ['invalid_timeline'] },
  'POST /timeline/{id}:export': { 409: ['already_exporting'], 422: ['invalid_timeline'] },
  'POST /timeline/{id}/exports/{job}:cancel': { 409: ['job_finished'] },
  'POST /timeline:append': { 409: ['no_timeline'], 422: ['invalid_timeline'] },
  'POST /launcher/studios:install': { 409: ['id_taken'], 422: ['not_launchable', 'blocked'] },
  'POST /launcher/studios:link': { 409: ['id_taken'], 422: ['not_launchable', 'not_linkable', 'blocked'] },
  'POST /launcher/studios/{id}:start': { 409: ['not_installed', 'already_running', 'port_conflict', 'heavy_conflict', 'not_fetched'] },
  'POST /launcher/studios/{id}:stop': { 409: ['not_running'] },
  'POST /launcher/studios/{id}:update': { 409: ['approval_required', 'in_use', 'not_installed'], 422: ['not_launchable', 'blocked', 'not_linkable'] },
  'POST /launcher/studios/{id}:uninstall': { 409: ['confirm_required', 'in_use'] },
  'POST /launcher/jobs/{id}:cancel': { 409: ['job_finished'] },
};
/** Bodies that are documents (docs/api.md "Documents"): these may answer 400 `invalid_document`. */
const DOCUMENT_BODIES = new Set([
  'PUT /kv/{ns}/{key+}', 'PATCH /kv/{ns}/{key+}', 'POST /records/{collection}', 'PUT /records/{collection}/{id}',
  'PATCH /records/{collection}/{id}', 'POST /sessions', 'PATCH /sessions/{id}', 'POST /gallery/items', 'POST /jobs', 'PATCH /jobs/{id}',
]);

export interface Allowed {
  statuses: Set<number>;
  codes(status: number): readonly string[];
}

export function allowedFor(r: Route): Allowed {
  const key = keyOf(r);
  const queryKeys = Object.keys(jsonSchema(r.query)?.properties ?? {});
  // Generic: an id or path that matches nothing is 404 (docs/api.md §Order of checks);
  // a malformed path, query or body is 400 `bad_request` on any route (pathParams in core/route.ts).
  const statuses = new Set([r.success.status, ...(EXTRA_SUCCESS[key] ?? []), ...r.errors, 400, 404]);
  const codes = (status: number): readonly string[] => {
    if (status === 400) {
      return [
        'bad_request',
        ...(queryKeys.includes('cursor') ? ['bad_cursor'] : []),
        ...(queryKeys.includes('where') || queryKeys.includes('order') ? ['bad_filter'] : []),
        ...(DOCUMENT_BODIES.has(key) ? ['invalid_document'] : []),
      ];
    }
    return CODES[key]?.[status] ?? (ERROR_CODES as Record<number, readonly string[]>)[status] ?? [];
  };
  return { statuses, codes };
}

export function jsonSchema(schema: z.ZodType | undefined): { properties?: Record<string, any> } & Record<string, any> | undefined {
  if (!schema) return undefined;
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, any>;
}
