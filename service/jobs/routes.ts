import type { Principal } from '../core/auth';
import { listPage, stringPosition, type CursorCodec } from '../core/pagination';
import { eventStreamReply, route, type Reply, type Route } from '../core/route';
import type { JobsDomain } from './domain';
import { idParams, job, jobPage, listQuery, logAppend, taskCreate, taskUpdate } from './schema';
import { parseLastEventId } from '../core/sse';
import { jobJson, type JobRow } from './store';
import { requireTask } from './task';

/**
 *   GET   /jobs                 the studio's jobs of every kind, newest first
 *   POST  /jobs                 create a task job (running, or queued)
 *   GET   /jobs/{id}            one job
 *   PATCH /jobs/{id}            task job: state, progress, title, last_error, data
 *   GET   /jobs/{id}/logs       server-sent events: replay, then live, then `end`
 *   POST  /jobs/{id}/logs       append lines to a task job's log
 *   POST  /jobs/{id}:cancel     task job: record a cancel request
 *   GET   /events               the studio's `job` events
 */
export function jobRoutes(deps: { jobs: JobsDomain; cursors: CursorCodec }): Route[] {
  const { jobs, cursors } = deps;
  type Input = { params: { id: string }; principal: Principal };
  // The kind before the state and before the body (docs/api.md "Jobs and events"): 403 `not_a_task`.
  const visibleTask = ({ params, principal }: Input) => {
    requireTask(jobs.store.visible(principal.studioId, params.id));
  };

  return [
    route({
      method: 'GET',
      path: '/jobs',
      summary: "List the studio's jobs (task and lifecycle), newest first",
      capability: 'jobs',
      query: listQuery,
      success: { status: 200, description: 'JobPage', schema: jobPage },
      errors: [400],
      handle({ query, principal }) {
        return listPage(cursors, `jobs\n${principal.studioId}`, query, {
          after: stringPosition,
          rows: (after, limit) => jobs.store.rows({ studioId: principal.studioId }, after, limit),
          position: (r) => [r.id],
          json: jobJson,
        });
      },
    }),
    route({
      method: 'POST',
      path: '/jobs',
      documentBody: true,
      summary: 'Create a task job',
      description: 'The service runs nothing for it: the studio reports progress and state by PATCH, appends log lines and ends it.',
      capability: 'jobs',
      body: taskCreate,
      success: { status: 201, description: 'Job', schema: job },
      errors: [400, 413, 429],
      handle({ body, principal }) {
        return reply(201, jobs.createTask(principal.studioId, body));
      },
    }),
    route({
      method: 'GET',
      path: '/jobs/{id}',
      summary: 'Read a job',
      capability: 'jobs',
      params: idParams,
      success: { status: 200, description: 'Job', schema: job },
      errors: [404],
      handle({ params, principal }) {
        return reply(200, jobs.store.visible(principal.studioId, params.id));
      },
    }),
    route({
      method: 'PATCH',
      path: '/jobs/{id}',
      documentBody: true,
      summary: 'Update a task job (merge patch)',
      description: 'See the task job state table. A lifecycle job is 403 `not_a_task`; a finished job 409 `job_finished`.',
      capability: 'jobs',
      params: idParams,
      visible: visibleTask,
      body: taskUpdate,
      bodyType: 'application/merge-patch+json',
      success: { status: 200, description: 'Job', schema: job },
      errors: [400, 403, 404, 409, 413, 429],
      handle({ params, body, principal }) {
        return reply(200, jobs.patchTask(principal.studioId, params.id, body));
      },
    }),
    route({
      method: 'GET',
      path: '/jobs/{id}/logs',
      summary: "Stream a job's log (server-sent events)",
      description:
        'Replays the log from the start (or after `Last-Event-ID`), then live; `step`, `line` and `end` events; ' +
        'a comment heartbeat at least every 15 s; closes after `end`.',
      capability: 'jobs',
      params: idParams,
      headers: [{ name: 'Last-Event-ID', description: 'Resume after this line number.' }],
      successType: 'text/event-stream',
      success: { status: 200, description: 'Event stream' },
      errors: [404],
      handle({ params, principal, ctx }) {
        const row = jobs.store.visible(principal.studioId, params.id);
        ctx.req.socket.setTimeout(0);
        return eventStreamReply(jobs.logStream(row, parseLastEventId(ctx.get('Last-Event-ID') || undefined), principal.tokenHash));
      },
    }),
    route({
      method: 'POST',
      path: '/jobs/{id}/logs',
      summary: "Append lines to a task job's log",
      capability: 'jobs',
      params: idParams,
      visible: visibleTask,
      body: logAppend,
      success: { status: 204, description: 'Appended' },
      errors: [400, 403, 404, 409, 413],
      handle({ params, body, principal }) {
        jobs.appendTaskLog(principal.studioId, params.id, body.lines);
        return { status: 204 };
      },
    }),
    route({
      method: 'POST',
      path: '/jobs/{id}:cancel',
      summary: 'Ask the studio to cancel a task job',
      description: 'Records `cancel_requested_at` and emits a `job` event; the state stays for the studio to end.',
      capability: 'jobs',
      params: idParams,
      visible: visibleTask,
      success: { status: 204, description: 'Cancellation requested' },
      errors: [403, 404, 409],
      handle({ params, principal }) {
        jobs.cancelTask(principal.studioId, params.id);
        return { status: 204 };
      },
    }),
    route({
      method: 'GET',
      path: '/events',
      summary: "The studio's event channel (server-sent events)",
      description: '`event: job` with the Job as data whenever one of the studio\'s jobs changes; live only, nothing replayed.',
      capability: 'jobs',
      successType: 'text/event-stream',
      success: { status: 200, description: 'Event stream' },
      errors: [],
      handle({ principal, ctx }) {
        ctx.req.socket.setTimeout(0);
        return eventStreamReply(jobs.channelStream(principal.studioId, principal.tokenHash));
      },
    }),
  ];
}



function reply(status: number, row: JobRow): Reply {
  return { status, rawJson: jobJson(row) };
}
