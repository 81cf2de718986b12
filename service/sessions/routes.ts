import { ApiError } from '../core/errors';
import type { Principal } from '../core/auth';
import { IF_MATCH_HEADER, route, type Route } from '../core/route';
import { listPage, type CursorCodec } from '../core/pagination';
import { idParams, listQuery, session, sessionCreate, sessionDuplicate, sessionPage, sessionUpdate } from './schema';
import { positionOf, type SessionPosition, type SessionRow, type SessionsStore } from './store';

/**
 *   GET    /sessions                   live sessions: opened_at desc, never opened last, created_at desc
 *   POST   /sessions                   create
 *   GET    /sessions/{id}              one session
 *   PATCH  /sessions/{id}              merge patch over name and state (If-Match optional)
 *   DELETE /sessions/{id}              soft delete; frees the name
 *   POST   /sessions/{id}:activate     opened_at = now, nothing else changes
 *   POST   /sessions/{id}:duplicate    copy of the state under a new name, never opened
 */
export function sessionRoutes(deps: { sessions: SessionsStore; cursors: CursorCodec }): Route[] {
  const { sessions, cursors } = deps;
  const live = ({ params, principal }: { params: { id: string }; principal: Principal }) => {
    sessions.get(principal.studioId, params.id);
  };

  return [
    route({
      method: 'GET',
      path: '/sessions',
      summary: 'List live sessions',
      capability: 'kv',
      query: listQuery,
      success: { status: 200, description: 'SessionPage', schema: sessionPage },
      errors: [400],
      handle({ query, principal }) {
        return listPage(cursors, `sessions\n${principal.studioId}`, query, {
          after: toPosition,
          rows: (after, limit) => sessions.list(principal.studioId, after, limit),
          position: positionOf,
          json: sessionJson,
        });
      },
    }),
    route({
      method: 'POST',
      path: '/sessions',
      documentBody: true,
      summary: 'Create a session',
      capability: 'kv',
      body: sessionCreate,
      success: { status: 201, description: 'Session', schema: session, etag: true },
      errors: [400, 409, 413, 429],
      handle({ body, principal }) {
        return reply(201, sessions.create(principal.studioId, body.name, body.state));
      },
    }),
    route({
      method: 'GET',
      path: '/sessions/{id}',
      summary: 'Read a session',
      capability: 'kv',
      params: idParams,
      success: { status: 200, description: 'Session', schema: session, etag: true },
      errors: [404],
      handle({ params, principal }) {
        return reply(200, sessions.get(principal.studioId, params.id));
      },
    }),
    route({
      method: 'PATCH',
      path: '/sessions/{id}',
      documentBody: true,
      summary: 'Rename a session or merge-patch its state',
      description: 'Members of `state` merge into the stored state; a null member removes that key. `name` cannot be null.',
      capability: 'kv',
      params: idParams,
      visible: live,
      body: sessionUpdate,
      bodyType: 'application/merge-patch+json',
      headers: [IF_MATCH_HEADER],
      success: { status: 200, description: 'Session', schema: session, etag: true },
      errors: [400, 404, 409, 413, 429],
      handle({ params, body, principal, ifMatch }) {
        return reply(200, sessions.patch(principal.studioId, params.id, body, ifMatch));
      },
    }),
    route({
      method: 'DELETE',
      path: '/sessions/{id}',
      summary: 'Delete a session (soft; its name becomes free)',
      capability: 'kv',
      params: idParams,
      visible: live,
      headers: [IF_MATCH_HEADER],
      success: { status: 204, description: 'Deleted' },
      errors: [404, 409],
      handle({ params, principal, ifMatch }) {
        sessions.delete(principal.studioId, params.id, ifMatch);
        return { status: 204 };
      },
    }),
    route({
      method: 'POST',
      path: '/sessions/{id}:activate',
      summary: 'Mark a session opened now',
      description: 'Sets `opened_at`; state, etag and `updated_at` are unchanged.',
      capability: 'kv',
      params: idParams,
      success: { status: 204, description: 'Activated' },
      errors: [404],
      handle({ params, principal }) {
        sessions.activate(principal.studioId, params.id);
        return { status: 204 };
      },
    }),
    route({
      method: 'POST',
      path: '/sessions/{id}:duplicate',
      summary: 'Copy a session under a new name',
      capability: 'kv',
      params: idParams,
      visible: live,
      body: sessionDuplicate,
      success: { status: 201, description: 'Session (the copy, never opened)', schema: session, etag: true },
      errors: [400, 404, 409, 429],
      handle({ params, body, principal }) {
        return reply(201, sessions.duplicate(principal.studioId, params.id, body.name));
      },
    }),
  ];
}

function toPosition(values: unknown[]): SessionPosition {
  if (values.length !== 3 || !values.every((v) => typeof v === 'string')) throw ApiError.badCursor();
  return values as SessionPosition;
}

/** Session as JSON text; the stored state is already JSON. */
function sessionJson(row: SessionRow): string {
  return (
    `{"id":"${row.id}","name":${JSON.stringify(row.name)},"state":${row.state},` +
    `"opened_at":${row.opened_at === null ? 'null' : `"${row.opened_at}"`},"created_at":"${row.created_at}",` +
    `"updated_at":"${row.updated_at}","etag":"${row.etag}"}`
  );
}


function reply(status: number, row: SessionRow) {
  return { status, rawJson: sessionJson(row), etag: row.etag };
}
