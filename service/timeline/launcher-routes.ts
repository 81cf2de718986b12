import { ApiError } from '../core/errors';
import { DEFAULT_LIMIT, pageJson, toPage, type CursorCodec } from '../core/pagination';
import { route, type Route } from '../core/route';
import type { TimelineOps } from './operations';
import { idParams, launcherListQuery, timelineOpened, timelinePage } from './schema';
import type { TimelineStore } from './store';
import { timelineJson } from './routes';

/**
 * The user's side of sequences (docs/api.md §Launcher, "Sequences"): the
 * editor page lists every studio's sequences and opens any of them, without
 * waiting for a studio to.
 *
 *   GET  /launcher/timelines            every studio's live sequences, most recently written first; `studio`, `q`
 *   POST /launcher/timelines/{id}:open  show one on the editor page, as its studio's :open does; then
 *                                       the /launcher/timeline/{id} mirror serves it, acting as its studio
 */
export function launcherTimelineRoutes(deps: { store: TimelineStore; ops: TimelineOps; cursors: CursorCodec }): Route[] {
  const { store, ops, cursors } = deps;
  return [
    route({
      method: 'GET',
      path: '/launcher/timelines',
      summary: "List every studio's sequences",
      description: 'Live sequences of every studio (each with `studio_id`), the most recently written first; `studio` keeps one studio\'s, `q` those whose name contains it.',
      capability: 'launcher',
      query: launcherListQuery,
      success: { status: 200, description: 'TimelinePage', schema: timelinePage },
      errors: [400],
      handle({ query }) {
        const limit = query.limit ?? DEFAULT_LIMIT;
        const filter = { studio: query.studio, q: query.q };
        // The cursor is bound to the filter: a cursor of one list is refused by another.
        const binding = `launcher-timelines\n${query.studio ?? ''}\n${query.q ?? ''}`;
        const after = query.cursor === undefined ? null : touchedOf(cursors.decode(binding, query.cursor));
        const rows = store.launcherRows(filter, after, limit + 1);
        return { status: 200, rawJson: pageJson(toPage(rows, limit, cursors, binding, (r) => [r.touched], timelineJson)) };
      },
    }),
    route({
      method: 'POST',
      path: '/launcher/timelines/{id}:open',
      summary: 'Show any sequence on the editor page',
      description:
        "As the owning studio's `POST /timeline/{id}:open`: every connected editor page shows it (501 `unsupported` when none is connected); " +
        'from then on `/launcher/timeline/{id}` serves it, acting as that studio.',
      capability: 'launcher',
      params: idParams,
      visible: ({ params }) => {
        const row = store.get(params.id);
        if (!row || row.deleted_at !== null) throw ApiError.notFound('The sequence');
        return row;
      },
      success: { status: 200, description: 'TimelineOpened', schema: timelineOpened },
      errors: [400, 404, 501],
      handle({ seen }) {
        return { status: 200, body: ops.open(seen, JSON.parse(timelineJson(seen)) as Record<string, unknown>) };
      },
    }),
  ];
}

function touchedOf(position: unknown[]): number {
  const [touched] = position;
  if (position.length !== 1 || !Number.isInteger(touched)) throw ApiError.badCursor();
  return touched as number;
}
