import { rmSync } from 'node:fs';
import type { PassThrough } from 'node:stream';
import type { Db } from '../db/open';
import { ApiError } from '../core/errors';
import { newId } from '../core/ids';
import { nowIso } from '../core/time';
import { JobHub } from './hub';
import { OutputNotices } from './output-notice';
import { cutLine, JobLogs, MAX_LINE_BYTES, MAX_LOG_BYTES, splitLines } from './logs';
import { runSteps, StepControl, type GroupWatch, type RunStep, type StepsOutcome } from './runner';
import type { ProcessLedger } from '../db/process-ledger';
import type { TaskUpdate } from './schema';
import { formatEvent, streamTuning } from '../core/sse';
import { isFinished, type JobKind } from './states';
import { openChannelStream, openLogStream, recordFrame, type StreamCredential } from './streams';
import type { RevocationWatch } from '../core/revocation';
import { applyTaskUpdate, dataBytes, newTaskRow, requestTaskCancel, requireDataPatch, requireTask, requireUnfinished } from './task';
import type { StudiosStore } from '../studios';
import { createJobsStore, jobJson, type JobRow } from './store';

/**
 * The jobs domain: the store, the log files, the hub and the runner, and the
 * one place where a job change is written and then announced (a `job`
 * channel event; `end` on the log stream once it finished).
 */

export const INTERRUPTED_MESSAGE =
  'The service stopped while this job was running (crash or kill); it was not finished.';

export interface JobsOptions {
  db: Db;
  /** Task jobs' `data` counts toward the studio's `kv_bytes` quota (charged in the write's transaction). */
  studios: StudiosStore;
  /** Ends a studio's open streams when its token is revoked (core/revocation.ts); without it they end at nothing. */
  revocations?: RevocationWatch;
  dataDir: string;
  /** Heartbeat comment interval of event streams (default 15 s, or BACKLOT_SSE_HEARTBEAT_MS; test only). */
  heartbeatMs?: number;
  /** Unread bytes a stream client may have before it is paused (logs) or dropped (events). Default 1 MiB. */
  highWater?: number;
  /** SIGTERM-to-SIGKILL grace on cancel (default 5 s). */
  killGraceMs?: number;
  /** Records the process groups of steps, so a crash's leftovers are ended at the next start. */
  ledger?: ProcessLedger;
}

export interface RunJobSpec {
  studioId: string;
  kind: Exclude<JobKind, 'task'>;
  title: string;
  timelineId?: string | null;
  data?: Record<string, unknown>;
  /**
   * Either steps (child processes run one after another by the runner) or
   * `work` (the job's own code, e.g. an export running ffmpeg through the
   * media module).
   */
  steps?: RunStep[];
  work?: JobWork;
  /** Steps only: sees every output line; a returned pair sets the job's progress. */
  onLine?: (line: string, step: RunStep, index: number) => { num: number; den: number } | void;
  /** Steps only: after every step exited 0; what it returns becomes `data`. Throwing fails the job (cleanup runs). */
  onSuccess?: (job: JobRow) => Promise<Record<string, unknown> | void> | Record<string, unknown> | void;
  /** After a failure or a cancel, before the job ends: remove partial output. */
  cleanup?: () => Promise<void> | void;
}

/** What a job's own code gets from the runner. */
export interface JobContext {
  job: JobRow;
  /** Aborted when the job is cancelled (or the service stops): end what runs, then return or throw. */
  signal: AbortSignal;
  /** SIGTERM-to-SIGKILL grace for the processes the work ends on abort. */
  graceMs(): number;
  /** Lines for the job's log (cut and capped as for runner steps). */
  log(texts: string[]): void;
  /** progress_num / progress_den; out-of-range values are clamped or ignored, repeats cost nothing. */
  progress(num: number, den: number): void;
  /**
   * Runs steps as the runner does (a `step` event each, output to the log, the
   * group ended on abort). Step indexes continue across calls within one job.
   * Rejects with the failed step's error, or when the job was cancelled.
   */
  runSteps(steps: RunStep[], onLine?: (line: string, step: RunStep) => void): Promise<void>;
  /**
   * For a process group the work starts itself (an export's ffmpeg, through
   * the media module's `groups` option): recorded in the process ledger while
   * it lives, so a crash's leftover is ended at the next start. Undefined
   * without a ledger.
   */
  groups?: GroupWatch;
}

/**
 * A job's own work. Resolving ends the job `succeeded` (what it returns
 * becomes `data`); throwing ends it `failed` with the error's message, or
 * `cancelled` when the signal was aborted. Resolving after an abort still
 * succeeds: the work decides its point of no return (check the signal right
 * before a commit that cannot be undone).
 */
export type JobWork = (ctx: JobContext) => Promise<Record<string, unknown> | void>;

export interface RunHandle {
  job: JobRow;
  /** Resolves with the finished job. */
  done: Promise<JobRow>;
  /** Ends the job `cancelled` (process group stopped, cleanup run); resolves with the finished job. */
  cancel(): Promise<JobRow>;
}

export function createJobsDomain(o: JobsOptions) {
  const store = createJobsStore(o.db);
  const logs = new JobLogs(o.dataDir);
  const hub = new JobHub();
  const tuning = streamTuning(o);
  const killGraceMs = o.killGraceMs ?? 5000;
  /** Runner jobs of this process: abort ends their work (with the grace given), done settles once they ended. */
  const running = new Map<string, { abort(graceMs: number): void; aborted(): boolean; done: Promise<JobRow> }>();

  // The launcher's channel only (studioId null): a studio's own /events never carries it.
  const notices = new OutputNotices((note) =>
    hub.publishChannel({ studioId: null, frame: formatEvent({ event: 'job_output', data: JSON.stringify(note) }) }),
  );

  const announce = (row: JobRow): JobRow => {
    hub.publishChannel({ studioId: row.studio_id, frame: formatEvent({ event: 'job', data: jobJson(row) }) });
    if (isFinished(row.state)) {
      notices.forget(row.id);
      logs.release(row.id);
      hub.publishLog(row.id, { type: 'end', frame: endFrame(row) });
    }
    return row;
  };

  /** `owner`: the job's studio, for the launcher's `job_output` notice (null: a studio's own output log). */
  const writeLines = (jobId: string, texts: string[], step: string | null, owner: string | null): void => {
    const at = nowIso();
    const written = logs.appendLines(jobId, texts, step, at);
    const items = written.map((r) => recordFrame(r.json, r.n));
    const end = written[written.length - 1]?.end ?? 0;
    hub.publishLog(jobId, { type: 'records', items, end, frame: Buffer.from(items.map((i) => i.frame).join('')) });
    const last = written[written.length - 1];
    if (owner !== null && last) notices.note(jobId, owner, last.n!, texts[texts.length - 1]!, at);
  };

  /** A studio's stream credential: the token's hash, still live in the token store. */
  const credentialOf = (tokenHash: Buffer | undefined): StreamCredential | undefined =>
    tokenHash && o.revocations ? { valid: () => o.studios.resolveToken(tokenHash) !== null, watch: o.revocations } : undefined;

  // Service start: runner jobs a crash left unfinished have no process any more.
  for (const row of store.failInterrupted(INTERRUPTED_MESSAGE)) announce(row);

  function runJob(spec: RunJobSpec): RunHandle {
    if ((spec.steps === undefined) === (spec.work === undefined)) throw new Error('runJob needs steps or work, not both');
    const now = nowIso();
    const job = announce(
      store.insert({
        id: newId(),
        studio_id: spec.studioId,
        kind: spec.kind,
        title: spec.title,
        state: 'running',
        progress_num: 0,
        progress_den: 0,
        last_error: null,
        cancel_requested_at: null,
        data: JSON.stringify(spec.data ?? {}),
        timeline_id: spec.timelineId ?? null,
        created_at: now,
        updated_at: now,
        finished_at: null,
      }),
    );
    const controller = new AbortController();
    let graceMs = killGraceMs;
    let truncated = false;
    const log = (texts: string[], stepName: string | null) => {
      if (logs.stats(job.id).bytes > MAX_LOG_BYTES) {
        if (!truncated) writeLines(job.id, ['[log limit reached: further output is not kept]'], stepName, job.studio_id);
        truncated = true;
      } else {
        writeLines(job.id, texts, stepName, job.studio_id);
      }
    };
    let lastNum = NaN;
    let lastDen = NaN;
    const progress = (num: number, den: number) => {
      // Most lines repeat the last progress (or have none): no transaction for those.
      if (num === lastNum && den === lastDen) return;
      lastNum = num;
      lastDen = den;
      setProgress(job.id, num, den);
    };
    let nextStep = 0;
    const ctx: JobContext = {
      job,
      signal: controller.signal,
      graceMs: () => graceMs,
      log: (texts) => log(texts.flatMap((t) => cutLine(t)), null),
      progress,
      groups: groupWatch(job.id),
      async runSteps(steps, onLine) {
        const first = nextStep;
        nextStep += steps.length;
        const result = await runStepsFor(ctx, steps, first, log, onLine);
        if (result.outcome === 'failed') throw new Error(result.error);
        if (result.outcome === 'cancelled') throw new Error('cancelled');
      },
    };
    const work = spec.work ?? stepsWork(spec, progress);

    const finish = (patch: Partial<JobRow>): JobRow => {
      const now = nowIso();
      return announce(store.change(job.id, (row) => ({ ...row, ...patch, updated_at: now, finished_at: now })));
    };
    const done = (async (): Promise<JobRow> => {
      let result: StepsOutcome;
      let data: Record<string, unknown> | void = undefined;
      try {
        data = await work(ctx);
        result = { outcome: 'succeeded' };
      } catch (err) {
        result = controller.signal.aborted
          ? { outcome: 'cancelled' }
          : { outcome: 'failed', error: (err as Error)?.message || String(err) };
      }
      if (result.outcome !== 'succeeded') {
        try {
          await spec.cleanup?.();
        } catch (err) {
          console.error(`job ${job.id}: cleanup failed:`, err);
        }
      }
      running.delete(job.id);
      if (result.outcome === 'succeeded') return finish({ state: 'succeeded', ...(data ? { data: JSON.stringify(data) } : {}) });
      if (result.outcome === 'cancelled') return finish({ state: 'cancelled', last_error: null });
      return finish({ state: 'failed', last_error: result.error });
    })();
    running.set(job.id, {
      abort(grace) {
        graceMs = grace;
        controller.abort();
      },
      aborted: () => controller.signal.aborted,
      done,
    });
    return { job, done, cancel: () => cancelRunner(job.id) };
  }

  /** Runner steps as a job's work: `onLine` may set progress; `onSuccess` gives `data`. */
  function stepsWork(spec: RunJobSpec, progress: (num: number, den: number) => void): JobWork {
    const steps = spec.steps!;
    return async (ctx) => {
      await ctx.runSteps(steps, (line, step) => {
        const p = spec.onLine?.(line, step, steps.indexOf(step));
        if (p) progress(p.num, p.den);
      });
      const data = spec.onSuccess ? await spec.onSuccess(store.get(ctx.job.id)!) : undefined;
      // A cancel that came while onSuccess ran still cancels a runner job (cleanup runs).
      if (ctx.signal.aborted) throw new Error('cancelled');
      return data;
    };
  }

  /** The process ledger's watch for a job's groups (owner `job:<id>`). */
  function groupWatch(jobId: string): GroupWatch | undefined {
    const ledger = o.ledger;
    return ledger && { started: (pgid) => ledger.record(pgid, `job:${jobId}`), ended: (pgid) => ledger.forget(pgid) };
  }

  /** Runs steps inside a job: step records, output lines, the group ended on abort and recorded in the ledger. */
  async function runStepsFor(
    ctx: JobContext,
    steps: RunStep[],
    firstIndex: number,
    log: (texts: string[], step: string | null) => void,
    onLine?: (line: string, step: RunStep) => void,
  ): Promise<StepsOutcome> {
    const control = new StepControl(killGraceMs);
    if (ctx.signal.aborted) return { outcome: 'cancelled' };
    const onAbort = () => void control.cancel(ctx.graceMs());
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    let current = 0;
    const sink = {
      step(name: string, index: number) {
        current = index - firstIndex;
        const r = logs.appendStep(ctx.job.id, { step: name, index, at: nowIso() });
        const item = recordFrame(r.json, null);
        hub.publishLog(ctx.job.id, { type: 'records', items: [item], end: r.end, frame: Buffer.from(item.frame) });
      },
      lines(texts: string[], stepName: string) {
        log(texts, stepName);
        if (onLine) for (const text of texts) onLine(text, steps[current]!);
      },
    };
    const groups = groupWatch(ctx.job.id);
    try {
      return await runSteps(steps, sink, control, groups, firstIndex);
    } catch (err) {
      return { outcome: 'failed', error: `The runner failed: ${(err as Error).message}` };
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
    }
  }

  /** A runner job's progress from its line parser; out-of-range values are clamped or ignored. */
  function setProgress(id: string, num: number, den: number): void {
    if (!(Number.isSafeInteger(num) && Number.isSafeInteger(den) && num >= 0 && den >= 0)) return;
    const value = den > 0 ? Math.min(num, den) : num;
    let changed = false;
    const row = store.change(id, (r) => {
      if (isFinished(r.state) || (r.progress_num === value && r.progress_den === den)) return r;
      changed = true;
      return { ...r, progress_num: value, progress_den: den, updated_at: nowIso() };
    });
    if (changed) announce(row);
  }

  async function cancelRunner(id: string, graceMs = killGraceMs): Promise<JobRow> {
    const live = running.get(id);
    if (!live) {
      // Not running in this process (cannot happen after start-up recovery): it just ends.
      const row = store.get(id);
      if (!row) throw ApiError.notFound('The job');
      requireUnfinished(row);
      const now = nowIso();
      return announce(store.change(id, (r) => ({ ...r, state: 'cancelled', cancel_requested_at: now, updated_at: now, finished_at: now })));
    }
    if (!live.aborted()) {
      const now = nowIso();
      announce(store.change(id, (row) => ({ ...row, cancel_requested_at: now, updated_at: now })));
    }
    live.abort(graceMs);
    return live.done;
  }

  return {
    store,
    hub,

    /** The body (400, 413), then the `kv_bytes` quota for its data (429). */
    createTask(studioId: string, body: Parameters<typeof newTaskRow>[1]): JobRow {
      const row = newTaskRow({ id: newId(), studioId, now: nowIso() }, body);
      return announce(store.insert(row, () => o.studios.charge(studioId, 'kv_bytes', dataBytes(row))));
    },

    /** docs/api.md §Jobs order of checks; the merged data's size (413) and the quota (429) come last. */
    patchTask(studioId: string, id: string, patch: TaskUpdate): JobRow {
      if (patch.data) requireDataPatch(patch.data);
      return announce(
        store.change(id, (row) => {
          const next = applyTaskUpdate(owned(studioId, row), patch, nowIso());
          o.studios.charge(studioId, 'kv_bytes', dataBytes(next) - dataBytes(row));
          return next;
        }),
      );
    },

    cancelTask(studioId: string, id: string): JobRow {
      return announce(store.change(id, (row) => requestTaskCancel(owned(studioId, row), nowIso())));
    },

    /** POST /jobs/{id}/logs: kind (403), finished (409), each line's size (400), the log's size (413). */
    appendTaskLog(studioId: string, id: string, given: string[]): void {
      const row = store.visible(studioId, id);
      requireTask(row);
      requireUnfinished(row);
      const lines = splitLines(given);
      const long = lines.findIndex((l) => Buffer.byteLength(l) > MAX_LINE_BYTES);
      if (long !== -1) throw ApiError.badRequest(`Line ${long + 1} is longer than ${MAX_LINE_BYTES} bytes.`, { limit: MAX_LINE_BYTES });
      const adding = lines.reduce((sum, l) => sum + Buffer.byteLength(l) + 80, 0);
      if (logs.stats(id).bytes + adding > MAX_LOG_BYTES) throw ApiError.tooLarge(MAX_LOG_BYTES, "The job's log");
      writeLines(id, lines, null, row.studio_id);
    },

    /** `tokenHash`: a studio's stream, ended when that token is revoked. */
    logStream(row: JobRow, after: number, tokenHash?: Buffer): PassThrough {
      return openLogStream({
        ...tuning,
        credential: credentialOf(tokenHash),
        jobId: row.id,
        logPath: logs.path(row.id),
        after,
        hub,
        endFrame: () => {
          const now = store.get(row.id);
          return now && isFinished(now.state) ? endFrame(now) : null;
        },
      });
    },

    /**
     * A log that belongs to no job: a running studio's own output
     * (`GET /launcher/studios/{id}/logs`), in the job log's file format and
     * stream (`step` at each start, `line`s, never `end`). `name` must be
     * safe as a file name (it is `studio-<id>`, never a ULID).
     */
    outputLog(name: string) {
      return {
        step(title: string, index: number): void {
          const r = logs.appendStep(name, { step: title, index, at: nowIso() });
          const item = recordFrame(r.json, null);
          hub.publishLog(name, { type: 'records', items: [item], end: r.end, frame: Buffer.from(item.frame) });
        },
        lines(texts: string[], step: string | null): void {
          if (logs.stats(name).bytes > MAX_LOG_BYTES) return;
          writeLines(name, texts.flatMap((t) => cutLine(t)), step, null);
        },
        /** Lines and bytes so far. */
        stats: () => logs.stats(name),
        /** Starts the log afresh (a new run of a studio whose log grew past `maxBytes`). */
        restartIfOver(maxBytes: number): void {
          if (logs.stats(name).bytes <= maxBytes) return;
          logs.release(name);
          rmSync(logs.path(name), { force: true });
        },
        release: () => logs.release(name),
        stream: (after: number): PassThrough =>
          openLogStream({ ...tuning, jobId: name, logPath: logs.path(name), after, hub, endFrame: () => null }),
      };
    },

    /** `studioId: null`: every studio's events (the launcher). */
    channelStream(studioId: string | null, tokenHash?: Buffer): PassThrough {
      return openChannelStream({ ...tuning, studioId, hub, credential: credentialOf(tokenHash) });
    },

    /** Publishes a channel event on a studio's channel (the launcher hears it too). */
    publish(studioId: string, event: string, data: unknown): void {
      hub.publishChannel({ studioId, frame: formatEvent({ event, data: JSON.stringify(data) }) });
    },

    /** Publishes an event only the studio's own `/events` hears (the launcher is told in its own words: `handoff` events). */
    publishStudio(studioId: string, event: string, data: unknown): void {
      hub.publishChannel({ studioId, launcher: false, frame: formatEvent({ event, data: JSON.stringify(data) }) });
    },

    /** Publishes an event only the launcher's channel hears (`studio` events): never a studio's own `/events`. */
    publishLauncher(event: string, data: unknown): void {
      hub.publishChannel({ studioId: null, frame: formatEvent({ event, data: JSON.stringify(data) }) });
    },

    runJob,

    /**
     * Cancel from the launcher or an export cancel: a runner job stops
     * (process group ended, cleanup run, `cancelled`); a task job records the
     * request as POST /jobs/{id}:cancel does. 404 unknown, 409 finished.
     */
    async cancelJob(id: string): Promise<JobRow> {
      const row = store.get(id);
      if (!row) throw ApiError.notFound('The job');
      if (row.kind === 'task') return announce(store.change(id, (r) => requestTaskCancel(r, nowIso())));
      requireUnfinished(row);
      return cancelRunner(id);
    },

    /** Service shutdown: running runner jobs are cancelled (shorter grace), streams end, files close. */
    async close(graceMs = 1500): Promise<void> {
      await Promise.all([...running.keys()].map((id) => cancelRunner(id, graceMs).catch(() => undefined)));
      notices.close();
      hub.closeAll();
      logs.closeAll();
    },
  };
}

export type JobsDomain = ReturnType<typeof createJobsDomain>;

/** The row when it is the studio's, else 404 (another studio's job is never shown), as `store.visible`. */
function owned(studioId: string, row: JobRow): JobRow {
  if (row.studio_id !== studioId) throw ApiError.notFound('The job');
  return row;
}

function endFrame(row: JobRow): string {
  return formatEvent({ event: 'end', data: JSON.stringify({ state: row.state, last_error: row.last_error }) });
}
