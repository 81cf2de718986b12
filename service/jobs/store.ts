import type { Db } from '../db/open';
import { ApiError } from '../core/errors';
import { nowIso } from '../core/time';
import type { JobKind, JobState } from './states';

/**
 * All SQL of jobs. Every change is read, decided (pure code in task.ts or
 * the runner) and written inside one immediate transaction, so two writers
 * never both act on the same state.
 */

export interface JobRow {
  id: string;
  studio_id: string;
  kind: JobKind;
  title: string;
  state: JobState;
  progress_num: number;
  progress_den: number;
  last_error: string | null;
  cancel_requested_at: string | null;
  /** JSON object text. */
  data: string;
  timeline_id: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

const columns =
  'id, studio_id, kind, title, state, progress_num, progress_den, last_error, cancel_requested_at, data, timeline_id, created_at, updated_at, finished_at';

/** The hot reads, exported so a test can check their query plans. Newest first = id descending (ULIDs). */
export const JOBS_SQL = {
  byStudio: `SELECT ${columns} FROM jobs WHERE studio_id = ? ORDER BY id DESC LIMIT ?`,
  byStudioAfter: `SELECT ${columns} FROM jobs WHERE studio_id = ? AND id < ? ORDER BY id DESC LIMIT ?`,
  byTimeline: `SELECT ${columns} FROM jobs WHERE timeline_id = ? ORDER BY id DESC LIMIT ?`,
  byTimelineAfter: `SELECT ${columns} FROM jobs WHERE timeline_id = ? AND id < ? ORDER BY id DESC LIMIT ?`,
  unfinished: `SELECT ${columns} FROM jobs WHERE state IN ('queued', 'running')`,
};

export type JobScope = { studioId: string } | { timelineId: string } | { all: true };

export function createJobsStore(db: Db) {
  const stmts = {
    get: db.prepare<[string], JobRow>(`SELECT ${columns} FROM jobs WHERE id = ?`),
    byStudio: db.prepare<[string, number], JobRow>(JOBS_SQL.byStudio),
    byStudioAfter: db.prepare<[string, string, number], JobRow>(JOBS_SQL.byStudioAfter),
    byTimeline: db.prepare<[string, number], JobRow>(JOBS_SQL.byTimeline),
    byTimelineAfter: db.prepare<[string, string, number], JobRow>(JOBS_SQL.byTimelineAfter),
    all: db.prepare<[number], JobRow>(`SELECT ${columns} FROM jobs ORDER BY id DESC LIMIT ?`),
    allAfter: db.prepare<[string, number], JobRow>(`SELECT ${columns} FROM jobs WHERE id < ? ORDER BY id DESC LIMIT ?`),
    unfinished: db.prepare<[], JobRow>(JOBS_SQL.unfinished),
    activeRunner: db.prepare<[string], JobRow>(
      `SELECT ${columns} FROM jobs WHERE state IN ('queued', 'running') AND kind != 'task' AND studio_id = ? ORDER BY id LIMIT 1`,
    ),
    insert: db.prepare(
      `INSERT INTO jobs (${columns}) VALUES (@id, @studio_id, @kind, @title, @state, @progress_num, @progress_den,
        @last_error, @cancel_requested_at, @data, @timeline_id, @created_at, @updated_at, @finished_at)`,
    ),
    update: db.prepare(
      `UPDATE jobs SET title = @title, state = @state, progress_num = @progress_num, progress_den = @progress_den,
        last_error = @last_error, cancel_requested_at = @cancel_requested_at, data = @data,
        updated_at = @updated_at, finished_at = @finished_at WHERE id = @id`,
    ),
  };

  const insert = db.transaction((row: JobRow, charge?: () => void): void => {
    charge?.();
    stmts.insert.run(row);
  });

  const change = db.transaction((id: string, decide: (row: JobRow) => JobRow): JobRow => {
    const row = stmts.get.get(id);
    if (!row) throw ApiError.notFound('The job');
    const next = decide(row);
    if (next !== row) stmts.update.run(next);
    return next;
  });

  /** A page's rows, newest first, read one at a time (core/pagination.ts cuts the page). */
  function rows(scope: JobScope, afterId: string | null, limit: number): IterableIterator<JobRow> {
    if ('studioId' in scope) {
      return afterId ? stmts.byStudioAfter.iterate(scope.studioId, afterId, limit) : stmts.byStudio.iterate(scope.studioId, limit);
    }
    if ('timelineId' in scope) {
      return afterId
        ? stmts.byTimelineAfter.iterate(scope.timelineId, afterId, limit)
        : stmts.byTimeline.iterate(scope.timelineId, limit);
    }
    return afterId ? stmts.allAfter.iterate(afterId, limit) : stmts.all.iterate(limit);
  }

  return {
    get(id: string): JobRow | undefined {
      return stmts.get.get(id);
    },

    /** The job when it is the studio's, else 404 (another studio's job is never shown). */
    visible(studioId: string, id: string): JobRow {
      const row = stmts.get.get(id);
      if (!row || row.studio_id !== studioId) throw ApiError.notFound('The job');
      return row;
    },

    rows,

    list(scope: JobScope, afterId: string | null, limit: number): JobRow[] {
      return [...rows(scope, afterId, limit)];
    },

    /** Inserts a job; `charge` runs first in the same transaction (a quota it throws writes nothing). */
    insert(row: JobRow, charge?: () => void): JobRow {
      insert.immediate(row, charge);
      return row;
    },

    /**
     * Reads the job, lets `decide` return its next row (or throw), writes it.
     * `decide` returning the row unchanged writes nothing.
     */
    change(id: string, decide: (row: JobRow) => JobRow): JobRow {
      return change.immediate(id, decide);
    },

    /**
     * Service start: every runner job (not a task job) a crash left queued or
     * running ends `failed` with `message`. Task jobs are the studio's to end.
     */
    /** A lifecycle job or export of the studio that has not finished, if any (the launcher's `in_use`). */
    activeRunner(studioId: string): JobRow | undefined {
      return stmts.activeRunner.get(studioId);
    },

    failInterrupted(message: string): JobRow[] {
      return db
        .transaction(() => {
          const now = nowIso();
          const failed: JobRow[] = [];
          for (const row of stmts.unfinished.all()) {
            if (row.kind === 'task') continue;
            const next: JobRow = { ...row, state: 'failed', last_error: message, updated_at: now, finished_at: now };
            stmts.update.run(next);
            failed.push(next);
          }
          return failed;
        })
        .immediate();
    },
  };
}

/** A job as JSON text; `data` is stored as JSON already. */
export function jobJson(row: JobRow): string {
  const str = (v: string | null) => (v === null ? 'null' : JSON.stringify(v));
  return (
    `{"id":"${row.id}","studio_id":${str(row.studio_id)},"kind":"${row.kind}","title":${str(row.title)},` +
    `"state":"${row.state}","progress_num":${row.progress_num},"progress_den":${row.progress_den},` +
    `"last_error":${str(row.last_error)},"cancel_requested_at":${str(row.cancel_requested_at)},"data":${row.data},` +
    `"timeline_id":${str(row.timeline_id)},"created_at":"${row.created_at}","updated_at":"${row.updated_at}",` +
    `"finished_at":${str(row.finished_at)}}`
  );
}

/**
 * Uninstall with purge: jobs stay (a record of what ran), so their task data
 * still counts toward `kv_bytes` after the kv purge's recount: added back
 * here. In the caller's transaction, after purgeStudioKv.
 */
export function recountTaskData(db: Db, studioId: string): void {
  db.prepare(
    `UPDATE studios SET kv_bytes_used = kv_bytes_used +
       (SELECT coalesce(sum(length(CAST(data AS BLOB))), 0) FROM jobs WHERE studio_id = ? AND kind = 'task') WHERE id = ?`,
  ).run(studioId, studioId);
}
