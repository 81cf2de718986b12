import { ApiError } from '../core/errors';
import { listPage, stringPosition, type CursorCodec } from '../core/pagination';
import { eventStreamReply, route, type Reply, type Route } from '../core/route';
import { parseLastEventId } from '../core/sse';
import { jobJson, jobPageSchema, jobSchema, type JobRow, type JobsDomain } from '../jobs';
import type { Lifecycle } from './lifecycle';
import type { Runtime } from './runtime';
import { exampleList, jobListQuery, jobParams, sourceBody, studio, studioListQuery, studioPage, studioParams, uninstallBody, updateBody } from './schema';
import type { InstalledStudio, LauncherStore } from './store';

/**
 * The launcher's side of the API (docs/api.md "Launcher"), launcher credential only:
 *
 *   GET  /launcher/studios                      installed studios, by id
 *   GET  /launcher/studios/{id}                 one studio
 *   POST /launcher/studios:install              copy a folder in, then install/build/download jobs
 *   POST /launcher/studios:link                 install by reference (studio authors)
 *   POST /launcher/studios/{id}:start           200 studio (`starting`)
 *   POST /launcher/studios/{id}:stop            204 once its process group is gone
 *   POST /launcher/studios/{id}:update          update job (prepared beside, swapped on success)
 *   POST /launcher/studios/{id}:uninstall       uninstall job
 *   GET  /launcher/studios/{id}/logs            the studio's own output (job log stream format)
 *   GET  /launcher/jobs                         every studio's jobs, newest first
 *   GET  /launcher/jobs/{id}                    one job
 *   GET  /launcher/jobs/{id}/logs               its log stream
 *   POST /launcher/jobs/{id}:cancel             cancel any running job
 *   POST /launcher/jobs/{id}:retry              run a failed install, build, download or update again
 *   GET  /launcher/examples                     the example studios that ship with Backlot
 *   GET  /launcher/events                       `job`, `studio` and `item` events
 */

export interface LauncherRoutesDeps {
  store: LauncherStore;
  runtime: Runtime;
  lifecycle: Lifecycle;
  jobs: JobsDomain;
  cursors: CursorCodec;
  studioJson(s: InstalledStudio): Record<string, unknown>;
  examples(): Promise<unknown[]>;
}

export function launcherRoutes(d: LauncherRoutesDeps): Route[] {
  const { store, runtime, lifecycle, jobs, cursors } = d;
  const studioReply = (status: number, s: InstalledStudio): Reply => ({ status, body: d.studioJson(s) });
  const jobReply = (status: number, row: JobRow): Reply => ({ status, rawJson: jobJson(row) });
  const visibleStudio = ({ params }: { params: { id: string } }) => store.require(params.id);
  const visibleJob = ({ params }: { params: { id: string } }) => {
    const row = jobs.store.get(params.id);
    if (!row) throw ApiError.notFound('The job');
    return row;
  };

  return [
    route({
      method: 'GET',
      path: '/launcher/studios',
      summary: 'List the installed studios',
      capability: 'launcher',
      query: studioListQuery,
      success: { status: 200, description: 'StudioPage', schema: studioPage },
      errors: [400],
      handle({ query }) {
        return listPage(cursors, 'launcher-studios', query, {
          after: stringPosition,
          rows: (after, limit) => store.page(after, limit),
          position: (s) => [s.id],
          json: (s) => JSON.stringify(d.studioJson(s)),
        });
      },
    }),
    route({
      method: 'GET',
      path: '/launcher/studios/{id}',
      summary: 'Read an installed studio',
      capability: 'launcher',
      params: studioParams,
      visible: visibleStudio,
      success: { status: 200, description: 'Studio', schema: studio },
      errors: [400, 404],
      handle: ({ seen }) => studioReply(200, seen),
    }),
    route({
      method: 'POST',
      path: '/launcher/studios:install',
      summary: 'Install a studio from a folder',
      description:
        'Copies the folder into DIR/studios/<id>/app/ and runs its `install` steps as the install job; `build` and `download` run ' +
        'as their own jobs after it. 409 `id_taken`, 422 `not_launchable` (no folder or no backlot.json), 422 `blocked`, 400 for a bad manifest.',
      capability: 'launcher',
      body: sourceBody,
      success: { status: 202, description: 'The install job', schema: jobSchema },
      errors: [400, 409, 413, 422],
      handle: async ({ body }) => jobReply(202, await lifecycle.install(body.source)),
    }),
    route({
      method: 'POST',
      path: '/launcher/studios:link',
      summary: 'Install a studio by reference (for studio authors)',
      description: 'The app folder is the source folder itself: edits show at the next start. 422 `not_linkable`.',
      capability: 'launcher',
      body: sourceBody,
      success: { status: 202, description: 'The install job', schema: jobSchema },
      errors: [400, 409, 413, 422],
      handle: async ({ body }) => jobReply(202, await lifecycle.link(body.source)),
    }),
    route({
      method: 'POST',
      path: '/launcher/studios/{id}:start',
      summary: 'Start a studio',
      description:
        'Answers at once with the studio `starting`; it becomes `running` when `ready_path` answers, `failed` when its process exits first ' +
        'or is not ready in 60 s. 409 `not_installed`, `already_running`, `heavy_conflict`, `port_conflict`, `not_fetched`.',
      capability: 'launcher',
      params: studioParams,
      visible: visibleStudio,
      success: { status: 200, description: 'Studio', schema: studio },
      errors: [400, 404, 409],
      handle: async ({ params }) => studioReply(200, await runtime.start(params.id)),
    }),
    route({
      method: 'POST',
      path: '/launcher/studios/{id}:stop',
      summary: 'Stop a studio',
      description: "Ends the studio's whole process group and revokes its runtime token; answers once none of it is alive. 409 `not_running`.",
      capability: 'launcher',
      params: studioParams,
      visible: visibleStudio,
      success: { status: 204, description: 'Stopped' },
      errors: [400, 404, 409],
      handle: async ({ params }) => {
        await runtime.stop(params.id);
        return { status: 204 };
      },
    }),
    route({
      method: 'POST',
      path: '/launcher/studios/{id}:update',
      summary: 'Update a studio from a folder',
      description:
        'Prepares the new version beside the old one and swaps only when every step succeeded. 409 `approval_required` ' +
        '(`details.approval.capabilities`), `in_use` (`details.job`), `not_installed`; 422 `not_launchable`, `blocked`, `not_linkable` (linked studios).',
      capability: 'launcher',
      params: studioParams,
      visible: visibleStudio,
      body: updateBody,
      success: { status: 202, description: 'The update job', schema: jobSchema },
      errors: [400, 404, 409, 413, 422],
      handle: async ({ params, body }) => jobReply(202, await lifecycle.update(params.id, body.source, body.approve === true)),
    }),
    route({
      method: 'POST',
      path: '/launcher/studios/{id}:uninstall',
      summary: 'Uninstall a studio',
      description:
        "Stops it, removes its app folder (not a linked source) and revokes its tokens; its data stays unless `purge`. 409 `confirm_required`, `in_use`.",
      capability: 'launcher',
      params: studioParams,
      visible: visibleStudio,
      body: uninstallBody,
      success: { status: 202, description: 'The uninstall job', schema: jobSchema },
      errors: [400, 404, 409, 413],
      handle: async ({ params, body }) => jobReply(202, await lifecycle.uninstall(params.id, body.confirm === true, body.purge === true)),
    }),
    route({
      method: 'GET',
      path: '/launcher/studios/{id}/logs',
      summary: "Stream a studio's own output (server-sent events)",
      description: 'The job log stream format: a `step` event at each start, then `line` events; live while it runs; never `end`.',
      capability: 'launcher',
      params: studioParams,
      visible: visibleStudio,
      headers: [{ name: 'Last-Event-ID', description: 'Resume after this line number.' }],
      successType: 'text/event-stream',
      success: { status: 200, description: 'Event stream' },
      errors: [400, 404],
      handle({ params, ctx }) {
        ctx.req.socket.setTimeout(0);
        return eventStreamReply(runtime.logStream(params.id, parseLastEventId(ctx.get('Last-Event-ID') || undefined)));
      },
    }),
    route({
      method: 'GET',
      path: '/launcher/jobs',
      summary: "List every studio's jobs, newest first",
      capability: 'launcher',
      query: jobListQuery,
      success: { status: 200, description: 'JobPage', schema: jobPageSchema },
      errors: [400],
      handle({ query }) {
        const scope = query.studio ? { studioId: query.studio } : { all: true as const };
        return listPage(cursors, `launcher-jobs\n${query.studio ?? ''}`, query, {
          after: stringPosition,
          rows: (after, limit) => jobs.store.rows(scope, after, limit),
          position: (r) => [r.id],
          json: jobJson,
        });
      },
    }),
    route({
      method: 'GET',
      path: '/launcher/jobs/{id}',
      summary: 'Read any job',
      capability: 'launcher',
      params: jobParams,
      visible: visibleJob,
      success: { status: 200, description: 'Job', schema: jobSchema },
      errors: [404],
      handle: ({ seen }) => jobReply(200, seen),
    }),
    route({
      method: 'GET',
      path: '/launcher/jobs/{id}/logs',
      summary: "Stream any job's log (server-sent events)",
      description: 'The same stream as a studio gets: replay, live, `end`.',
      capability: 'launcher',
      params: jobParams,
      visible: visibleJob,
      headers: [{ name: 'Last-Event-ID', description: 'Resume after this line number.' }],
      successType: 'text/event-stream',
      success: { status: 200, description: 'Event stream' },
      errors: [404],
      handle({ seen, ctx }) {
        ctx.req.socket.setTimeout(0);
        return eventStreamReply(jobs.logStream(seen, parseLastEventId(ctx.get('Last-Event-ID') || undefined)));
      },
    }),
    route({
      method: 'POST',
      path: '/launcher/jobs/{id}:cancel',
      summary: 'Cancel any running job',
      description:
        'A lifecycle job or export: its process group ends, partial output is removed, and the job ends `cancelled` before the 204. ' +
        'A task job: `cancel_requested_at` is recorded for its studio to act on. 409 `job_finished`.',
      capability: 'launcher',
      params: jobParams,
      visible: visibleJob,
      success: { status: 204, description: 'Cancelled (or, for a task job, requested)' },
      errors: [404, 409],
      handle: async ({ params }) => {
        await jobs.cancelJob(params.id);
        return { status: 204 };
      },
    }),
    route({
      method: 'POST',
      path: '/launcher/jobs/{id}:retry',
      summary: 'Run a failed install, build, download or update job again',
      description:
        'For a job that failed or was interrupted by a restart: answers the new job. An install starts over from the studio\'s source, ' +
        'a build or download resumes the install from that phase, an update runs again from the folder it was asked for. ' +
        '409 `not_retryable` (`details.reason`: `kind`, `state`, `gone`, `superseded`, `no_source`); otherwise the install\'s ' +
        'or update\'s own refusals (409 `id_taken`, `in_use`, `approval_required`; 422 `not_launchable`, `blocked`, `not_linkable`; 400 a bad manifest).',
      capability: 'launcher',
      params: jobParams,
      visible: visibleJob,
      success: { status: 202, description: 'The new job', schema: jobSchema },
      errors: [400, 404, 409, 422],
      handle: async ({ seen }) => jobReply(202, await lifecycle.retry(seen)),
    }),
    route({
      method: 'GET',
      path: '/launcher/examples',
      summary: 'List the example studios that ship with Backlot',
      description:
        'Each with its absolute folder (install it with `POST /launcher/studios:install {"source": folder}`), what it needs, ' +
        'and whether a studio with its id is installed.',
      capability: 'launcher',
      success: { status: 200, description: 'ExampleList', schema: exampleList },
      errors: [],
      handle: async () => ({ status: 200, body: { items: await d.examples() } }),
    }),
    route({
      method: 'GET',
      path: '/launcher/events',
      summary: "The launcher's event channel (server-sent events)",
      description:
        '`job` (a Job) whenever any studio\'s job changes, `studio` (a Studio, or `{"id", "removed": true}`) whenever a studio changes, ' +
        'and `item` (`{"id", "studio_id", "change"}`, `change` = `created`, `updated` or `deleted`) whenever any studio\'s gallery item changes, purges included.',
      capability: 'launcher',
      successType: 'text/event-stream',
      success: { status: 200, description: 'Event stream' },
      errors: [],
      handle({ ctx }) {
        ctx.req.socket.setTimeout(0);
        return eventStreamReply(jobs.channelStream(null));
      },
    }),
  ];
}


