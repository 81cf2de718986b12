import { ApiError } from '../core/errors';
import { requireCapability } from '../core/auth';
import { route, type Route } from '../core/route';
import { listPage, type CursorCodec, type CursorValue } from '../core/pagination';
import type { HandoffsDomain } from './domain';
import {
  handoff, handoffAccept, handoffApprove, handoffCreate, handoffPage, handoffRulePage, idParams, launcherHandoff, launcherHandoffPage,
  launcherListQuery, ruleParams, rulesQuery, studioListQuery,
} from './schema';
import type { HandoffPosition, HandoffRow, HandoffScope } from './store';
import { handoffView } from './view';

/**
 * Handoffs (docs/api.md "Handoffs"):
 *   POST   /handoffs                       offer assets (an item, a session) to another studio
 *   GET    /handoffs, /handoffs/{id}       sent ones in every state; received ones once approved
 *   POST   /handoffs/{id}:accept           the recipient takes an approved one (all or nothing)
 *   DELETE /handoffs/{id}                  the sender withdraws a pending or approved one
 * The user's side (launcher credential):
 *   GET    /launcher/handoffs, /launcher/handoffs/{id}
 *   POST   /launcher/handoffs/{id}:approve  once, or `always` for the pair
 *   POST   /launcher/handoffs/{id}:decline
 *   GET    /launcher/handoff-rules, DELETE /launcher/handoff-rules/{from}/{to}
 */
export function handoffRoutes(deps: { handoffs: HandoffsDomain; cursors: CursorCodec }): Route[] {
  const { handoffs, cursors } = deps;
  const reply = (status: number, row: HandoffRow) => ({ status, body: handoffView(row) });
  const launcherReply = (row: HandoffRow) => ({ status: 200, body: handoffs.launcherView(row) });
  const page = (binding: string, scope: HandoffScope, query: { limit?: number; cursor?: string }) => {
    const view = scope.kind === 'launcher' ? handoffs.launcherView : handoffView;
    handoffs.beforeRead();
    return listPage(cursors, binding, query, {
      after: toPosition,
      rows: (after, limit) => handoffs.store.page(scope, after, limit),
      position: (row) => [row.created_at, row.id],
      json: (row) => JSON.stringify(view(row)),
    });
  };

  return [
    route({
      method: 'POST',
      path: '/handoffs',
      summary: 'Offer assets to another studio (the user approves in the launcher)',
      description:
        'Checks, in this order: an asset or item the caller may not read, 404; `to` is the caller, 422 `self_handoff`; ' +
        "`session_id` not one of the caller's live sessions, 422 `unknown_session`; `to` not installed, 409 `not_installed`; " +
        '`to` accepts none of the offered kinds, 422 `not_launchable` (`details.accepts`); the same handoff open already, ' +
        '409 `already_exists` (`details.handoff`); 20 pending already, 429 `quota_exceeded`. Created `pending`, or ' +
        '`approved` when the user allowed the pair always. With `session_id` the caller also needs `kv`.',
      capability: 'assets',
      body: handoffCreate,
      success: { status: 201, description: 'Handoff', schema: handoff },
      errors: [400, 403, 404, 409, 413, 422, 429],
      handle({ body, principal }) {
        if (body.session_id !== undefined) requireCapability(principal, 'kv');
        return reply(201, handoffs.create(principal.studioId, principal.capabilities.has('gallery.read_all'), body));
      },
    }),
    route({
      method: 'GET',
      path: '/handoffs',
      summary: 'List handoffs sent and received, newest first',
      description: 'The sender sees its handoffs in every state; the recipient sees one only once the user approved it.',
      capability: 'assets',
      query: studioListQuery,
      success: { status: 200, description: 'HandoffPage', schema: handoffPage },
      errors: [400],
      handle({ query, principal }) {
        const direction = query.direction ?? 'both';
        return page(`handoffs\n${principal.studioId}\n${direction}`, { kind: 'studio', studioId: principal.studioId, direction }, query);
      },
    }),
    route({
      method: 'GET',
      path: '/handoffs/{id}',
      summary: 'Read a handoff',
      capability: 'assets',
      params: idParams,
      success: { status: 200, description: 'Handoff', schema: handoff },
      errors: [404],
      handle: ({ params, principal }) => reply(200, handoffs.get(principal.studioId, params.id)),
    }),
    route({
      method: 'POST',
      path: '/handoffs/{id}:accept',
      summary: 'Accept an approved handoff: read access to its assets, a copy of its session',
      description:
        'By the recipient only (404 for anyone else), of an `approved` handoff (409 `conflict` in any other state). ' +
        'All or nothing: an offered asset whose row or file is gone, a deleted item or a deleted session is 409 `missing` ' +
        "(`details.missing`) and nothing is granted. The session's copy is named `session_name` or the original's name " +
        '(409 `name_taken` on a clash among the live sessions).',
      capability: 'assets',
      params: idParams,
      visible: ({ params, principal }) => handoffs.requireRecipient(principal.studioId, params.id),
      body: handoffAccept,
      bodyOptional: true,
      success: { status: 200, description: 'Handoff (accepted)', schema: handoff },
      errors: [400, 404, 409, 413, 429],
      handle: ({ params, body, principal }) => reply(200, handoffs.accept(principal.studioId, params.id, body.session_name)),
    }),
    route({
      method: 'DELETE',
      path: '/handoffs/{id}',
      summary: 'Withdraw a pending or approved handoff (its sender)',
      description: 'State `withdrawn`; a handoff already accepted, declined, withdrawn or expired is 409 `conflict`.',
      capability: 'assets',
      params: idParams,
      visible: ({ params, principal }) => handoffs.requireSender(principal.studioId, params.id),
      success: { status: 204, description: 'Withdrawn' },
      errors: [404, 409],
      handle({ params, principal }) {
        handoffs.withdraw(principal.studioId, params.id);
        return { status: 204 };
      },
    }),

    route({
      method: 'GET',
      path: '/launcher/handoffs',
      summary: "Every studio's handoffs, newest first (the user's requests)",
      capability: 'launcher',
      query: launcherListQuery,
      success: { status: 200, description: 'LauncherHandoffPage', schema: launcherHandoffPage },
      errors: [400],
      handle({ query }) {
        const scope: HandoffScope = {
          kind: 'launcher',
          state: query.state ?? null,
          itemId: query.item_id ?? null,
          from: query.from ?? null,
          to: query.to ?? null,
        };
        return page(`launcher-handoffs\n${scope.state ?? ''}\n${scope.itemId ?? ''}\n${scope.from ?? ''}\n${scope.to ?? ''}`, scope, query);
      },
    }),
    route({
      method: 'GET',
      path: '/launcher/handoffs/{id}',
      summary: 'Read any handoff',
      capability: 'launcher',
      params: idParams,
      success: { status: 200, description: 'LauncherHandoff', schema: launcherHandoff },
      errors: [404],
      handle: ({ params }) => launcherReply(handoffs.getAny(params.id)),
    }),
    route({
      method: 'POST',
      path: '/launcher/handoffs/{id}:approve',
      summary: 'Approve a pending handoff, once or always for its pair',
      description:
        'pending → approved; with `always` every later handoff from this sender to this recipient is approved as it is made. ' +
        'Not pending: 409 `conflict`. A recipient no longer installed: 409 `not_installed`.',
      capability: 'launcher',
      params: idParams,
      visible: ({ params }) => handoffs.getAny(params.id),
      body: handoffApprove,
      bodyOptional: true,
      success: { status: 200, description: 'LauncherHandoff (approved)', schema: launcherHandoff },
      errors: [400, 404, 409, 413],
      handle: ({ params, body }) => launcherReply(handoffs.approve(params.id, body.always === true)),
    }),
    route({
      method: 'POST',
      path: '/launcher/handoffs/{id}:decline',
      summary: 'Decline a pending handoff',
      description: 'pending → declined; not pending: 409 `conflict`. The recipient never sees it.',
      capability: 'launcher',
      params: idParams,
      success: { status: 200, description: 'LauncherHandoff (declined)', schema: launcherHandoff },
      errors: [404, 409],
      handle: ({ params }) => launcherReply(handoffs.decline(params.id)),
    }),
    route({
      method: 'GET',
      path: '/launcher/handoff-rules',
      summary: 'The pairs the user allowed always',
      capability: 'launcher',
      query: rulesQuery,
      success: { status: 200, description: 'HandoffRulePage', schema: handoffRulePage },
      errors: [400],
      handle({ query }) {
        return listPage(cursors, 'launcher-handoff-rules', query, {
          after: toPosition,
          rows: (after, limit) => handoffs.store.rules(after, limit),
          position: (r) => [r.from_studio, r.to_studio],
          json: (r) => JSON.stringify({ from: r.from_studio, to: r.to_studio, created_at: r.created_at }),
        });
      },
    }),
    route({
      method: 'DELETE',
      path: '/launcher/handoff-rules/{from}/{to}',
      summary: 'Revoke a standing rule: later handoffs of the pair wait for the user again',
      capability: 'launcher',
      params: ruleParams,
      success: { status: 204, description: 'Revoked' },
      errors: [400, 404],
      handle({ params }) {
        if (!handoffs.store.removeRule(params.from, params.to)) throw ApiError.notFound('The rule');
        return { status: 204 };
      },
    }),
  ];
}

function toPosition(values: CursorValue[]): HandoffPosition {
  if (values.length !== 2 || !values.every((v) => typeof v === 'string')) throw ApiError.badCursor();
  return values as HandoffPosition;
}
