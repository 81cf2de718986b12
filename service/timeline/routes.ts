import type { Principal } from '../core/auth';
import { ApiError } from '../core/errors';
import { checkIfMatch } from '../core/etag';
import { integerPosition, listPage, stringPosition, type CursorCodec } from '../core/pagination';
import { actingPrincipal, findRoute, IF_MATCH_HEADER, launcherMirror, route, type Method, type Route } from '../core/route';
import { jobJson, jobPageSchema, jobSchema, type JobsDomain } from '../jobs';
import type { Exporter } from './export';
import { launcherTimelineRoutes } from './launcher-routes';
import type { TimelineOps } from './operations';
import {
  exportParams,
  exportPlan,
  exportRequest,
  idParams,
  listQuery,
  planQuery,
  revisionPage,
  timeline,
  timelineAppend,
  timelineCreate,
  timelineOpened,
  timelinePage,
  timelineRevert,
  timelineUpdate,
} from './schema';
import type { RevisionRow, TimelineRow, TimelineStore, Viewer } from './store';

/**
 *   GET    /timeline                     own sequences, or every studio's with gallery.read_all; newest first
 *   POST   /timeline                     create from `clips` (laid end to end) or `tracks`
 *   GET    /timeline/{id}                one sequence; ETag = revision
 *   PATCH  /timeline/{id}                merge patch of name, target, tracks (If-Match required)
 *   DELETE /timeline/{id}                soft delete (If-Match checked when sent)
 *   GET    /timeline/{id}/revisions      the replaced documents, newest first (100 kept)
 *   POST   /timeline/{id}:revert         write an earlier revision forward (If-Match required)
 *   GET    /timeline/{id}:plan           copy or conform, with a reason per video clip
 *   POST   /timeline/{id}:export         start the export job (202); one at a time per sequence
 *   GET    /timeline/{id}/exports        the sequence's export jobs, newest first
 *   POST   /timeline/{id}/exports/{job}:cancel   end a running export (204 once it is cancelled)
 *   POST   /timeline/{id}:open           show it on every connected editor page
 *   POST   /timeline:append              one asset at the end of a track
 *
 * The launcher's side (docs/api.md "Launcher-side reads and edits", "The opened sequence"): the
 * routes of one sequence mirrored under /launcher/timeline/{id}, the same handlers acting
 * as the sequence's owning studio, for a live sequence that is open on the editor surface
 * (its studio's `:open` reached a page while this service runs): GET, PATCH, /revisions,
 * :revert, :plan, :export, /exports, /exports/{job}:cancel. The launcher's own list of
 * every studio's sequences and its :open are in launcher-routes.ts.
 */
export function timelineRoutes(deps: { store: TimelineStore; ops: TimelineOps; exporter: Exporter; jobs: JobsDomain; cursors: CursorCodec }): Route[] {
  const { store, ops, exporter, jobs, cursors } = deps;
  const viewerOf = (principal: Principal): Viewer => ({
    studioId: principal.studioId,
    readAll: principal.capabilities.has('gallery.read_all'),
  });
  const readable = ({ params, principal }: { params: { id: string }; principal: Principal }) => store.readable(viewerOf(principal), params.id);
  const own = ({ params, principal }: { params: { id: string }; principal: Principal }) => store.own(principal.studioId, params.id);
  const one = (row: TimelineRow, status = 200) => ({ status, rawJson: timelineJson(row), etag: String(row.revision) });

  const routes: Route[] = [
    route({
      method: 'GET',
      path: '/timeline',
      summary: 'List sequences',
      description: "The caller's own live sequences, or every studio's with `gallery.read_all`; newest first (by creation).",
      capability: 'timeline',
      query: listQuery,
      success: { status: 200, description: 'TimelinePage', schema: timelinePage },
      errors: [400],
      handle({ query, principal }) {
        const viewer = viewerOf(principal);
        return listPage(cursors, `timeline-list\n${viewer.studioId}\n${viewer.readAll}`, query, {
          after: stringPosition,
          rows: (after, limit) => store.listRows(viewer, after, limit),
          position: (r) => [r.id],
          json: timelineJson,
        });
      },
    }),
    route({
      method: 'POST',
      path: '/timeline',
      summary: 'Create a sequence',
      description: 'Give `clips` (laid end to end from 0: video and images on V1, sound on A1) or `tracks`, not both; neither makes an empty sequence.',
      capability: 'timeline',
      body: timelineCreate,
      success: { status: 201, description: 'Timeline as stored after snapping', schema: timeline, etag: true },
      errors: [400, 413, 422],
      async handle({ body, principal }) {
        return one(await ops.create(principal.studioId, body), 201);
      },
    }),
    route({
      method: 'GET',
      path: '/timeline/{id}',
      summary: 'Read a sequence',
      capability: 'timeline',
      params: idParams,
      visible: readable,
      success: { status: 200, description: 'Timeline; the ETag header is its revision', schema: timeline, etag: true },
      errors: [404],
      handle: ({ seen }) => one(seen),
    }),
    route({
      method: 'PATCH',
      path: '/timeline/{id}',
      summary: 'Change a sequence',
      description: '`name` and `target` members merge (null: back to the default), `tracks` is replaced whole. The replaced document becomes a revision.',
      capability: 'timeline',
      params: idParams,
      visible: own,
      headers: [{ ...IF_MATCH_HEADER, required: true }],
      body: timelineUpdate,
      bodyType: 'application/merge-patch+json',
      success: { status: 200, description: 'Timeline at its new revision', schema: timeline, etag: true },
      errors: [400, 404, 409, 413, 422],
      async handle({ params, body, principal, ifMatch }) {
        return one(await ops.update(principal.studioId, params.id, body, ifMatch));
      },
    }),
    route({
      method: 'DELETE',
      path: '/timeline/{id}',
      summary: 'Delete a sequence (soft)',
      description: 'Its exports and their lineage remain; its clips stop holding their assets against reclaim. No restore.',
      capability: 'timeline',
      params: idParams,
      visible: own,
      headers: [IF_MATCH_HEADER],
      success: { status: 204, description: 'Deleted' },
      errors: [404, 409],
      handle({ params, principal, ifMatch }) {
        store.delete(principal.studioId, params.id, (row) => checkIfMatch(ifMatch, String(row.revision)));
        return { status: 204 };
      },
    }),
    route({
      method: 'GET',
      path: '/timeline/{id}/revisions',
      summary: 'List the revisions a sequence replaced',
      description: 'The documents earlier writes replaced (not the current one), newest first; the newest 100 are kept.',
      capability: 'timeline',
      params: idParams,
      query: listQuery,
      visible: readable,
      success: { status: 200, description: 'TimelineRevisionPage', schema: revisionPage },
      errors: [400, 404],
      handle({ params, query }) {
        return listPage(cursors, `timeline-revisions\n${params.id}`, query, {
          after: integerPosition,
          rows: (after, limit) => store.revisionRows(params.id, after, limit),
          position: (r) => [r.revision],
          json: revisionJson,
        });
      },
    }),
    route({
      method: 'POST',
      path: '/timeline/{id}:revert',
      summary: 'Write an earlier revision forward',
      description: 'The revision becomes the newest one (nothing is rewound); every clip must name an asset the caller can read now.',
      capability: 'timeline',
      params: idParams,
      visible: own,
      headers: [{ ...IF_MATCH_HEADER, required: true }],
      body: timelineRevert,
      success: { status: 200, description: 'Timeline at its new revision', schema: timeline, etag: true },
      errors: [400, 404, 409, 413, 422],
      handle({ params, body, principal, ifMatch }) {
        return one(ops.revert(principal.studioId, params.id, body.revision, ifMatch, body.description));
      },
    }),
    route({
      method: 'GET',
      path: '/timeline/{id}:plan',
      summary: 'Plan an export: copy or conform',
      description: 'Probes every video clip (once per file) and compares it with the target and the first video clip.',
      capability: 'timeline',
      params: idParams,
      query: planQuery,
      visible: readable,
      success: { status: 200, description: 'ExportPlan', schema: exportPlan },
      errors: [400, 404, 422, 501],
      async handle({ seen, query }) {
        return { status: 200, body: await ops.plan(seen, query.preset ?? 'auto') };
      },
    }),
    route({
      method: 'POST',
      path: '/timeline/{id}:export',
      summary: 'Export a sequence to an MP4 file',
      description:
        'Starts an export job (kind `export`): video by stream copy when the plan allows and the preset agrees, else encoded ' +
        '(H.264 + AAC); sound is always encoded once. On success the file becomes an asset and a gallery item with `timeline_id`.',
      capability: 'timeline',
      params: idParams,
      visible: own,
      body: exportRequest,
      success: { status: 202, description: 'The export Job', schema: jobSchema },
      errors: [400, 404, 409, 413, 422, 501],
      async handle({ seen, body }) {
        return { status: 202, rawJson: jobJson(await exporter.start(seen, body)) };
      },
    }),
    route({
      method: 'GET',
      path: '/timeline/{id}/exports',
      summary: "List a sequence's exports",
      description: 'Its export jobs, newest first (the same jobs appear in `/jobs` for studios holding `jobs`).',
      capability: 'timeline',
      params: idParams,
      query: listQuery,
      visible: readable,
      success: { status: 200, description: 'JobPage', schema: jobPageSchema },
      errors: [400, 404],
      handle({ params, query }) {
        return listPage(cursors, `timeline-exports\n${params.id}`, query, {
          after: stringPosition,
          rows: (after, limit) => jobs.store.rows({ timelineId: params.id }, after, limit),
          position: (r) => [r.id],
          json: jobJson,
        });
      },
    }),
    route({
      method: 'POST',
      path: '/timeline/{id}/exports/{job}:cancel',
      summary: 'Cancel an export',
      description: 'Ends the export: ffmpeg\'s process group is stopped and the partial file removed; answers once the job is `cancelled`.',
      capability: 'timeline',
      params: exportParams,
      visible: own,
      success: { status: 204, description: 'Cancelled' },
      errors: [404, 409],
      async handle({ seen, params }) {
        await exporter.cancel(seen, params.job);
        return { status: 204 };
      },
    }),
    route({
      method: 'POST',
      path: '/timeline/{id}:open',
      summary: 'Show a sequence on the editor surface',
      capability: 'timeline',
      params: idParams,
      visible: own,
      success: { status: 200, description: 'TimelineOpened', schema: timelineOpened },
      errors: [404, 501],
      handle({ seen }) {
        return { status: 200, body: ops.open(seen, JSON.parse(timelineJson(seen)) as Record<string, unknown>) };
      },
    }),
    route({
      method: 'POST',
      path: '/timeline:append',
      summary: 'Append an asset to a track',
      description:
        "To `timeline_id`, or the caller's most recently written sequence; at the end of `track` (default V1 for video and images, A1 for sound). Needs no If-Match.",
      capability: 'timeline',
      body: timelineAppend,
      success: { status: 200, description: 'Timeline with the clip appended', schema: timeline, etag: true },
      errors: [400, 404, 409, 413, 422],
      async handle({ body, principal }) {
        return one(await ops.append(principal.studioId, body));
      },
    }),
  ];

  /** The owner of a live, opened sequence, as whom the launcher's side acts; else 404. */
  const asOwner = ({ id }: { id: string }) => {
    const row = store.get(id);
    if (!row || row.deleted_at !== null) throw ApiError.notFound('The sequence');
    if (!ops.isOpen(id)) {
      throw new ApiError(404, 'not_found', 'The sequence is not open on the editor surface; its studio opens it with POST /timeline/{id}:open.');
    }
    return actingPrincipal(row.studio_id, ['timeline']);
  };
  const mirrored: [Method, string][] = [
    ['GET', '/timeline/{id}'],
    ['PATCH', '/timeline/{id}'],
    ['GET', '/timeline/{id}/revisions'],
    ['POST', '/timeline/{id}:revert'],
    ['GET', '/timeline/{id}:plan'],
    ['POST', '/timeline/{id}:export'],
    ['GET', '/timeline/{id}/exports'],
    ['POST', '/timeline/{id}/exports/{job}:cancel'],
  ];
  return [
    ...routes,
    ...launcherTimelineRoutes({ store, ops, cursors }),
    ...mirrored.map(([method, path]) => {
      const r = findRoute(routes, method, path);
      return launcherMirror(r, {
        actingAs: asOwner,
        description:
          `As \`${method} ${path}\`, acting as the sequence's owning studio (same rules, codes and revisions), ` +
          'for a sequence open on the editor surface (404 otherwise).' +
          (r.description ? ` ${r.description}` : ''),
      });
    }),
  ];
}

/** A sequence as JSON text: its target and tracks are stored as JSON already. */
export function timelineJson(row: TimelineRow): string {
  return (
    `{"id":${JSON.stringify(row.id)},"studio_id":${JSON.stringify(row.studio_id)},"name":${JSON.stringify(row.name)},` +
    `"target":${row.target},"tracks":${row.tracks},"revision":${row.revision},"duration":${JSON.stringify(row.duration)},` +
    `"description":${JSON.stringify(row.description)},` +
    `"created_at":${JSON.stringify(row.created_at)},"updated_at":${JSON.stringify(row.updated_at)}}`
  );
}

function revisionJson(row: RevisionRow): string {
  return (
    `{"revision":${row.revision},"name":${JSON.stringify(row.name)},"target":${row.target},"tracks":${row.tracks},` +
    `"description":${JSON.stringify(row.description)},` +
    `"created_at":${JSON.stringify(row.created_at)}}`
  );
}

