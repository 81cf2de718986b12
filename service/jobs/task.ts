import { ApiError } from '../core/errors';
import { boundedDocument, requireDocument } from '../core/document';
import { applyMergePatch, type Json } from '../core/merge-patch';
import { MAX_DATA_BYTES, type TaskUpdate } from './schema';
import { checkTransition, initialState, isFinished, progressProblem } from './states';
import type { JobRow } from './store';

/**
 * The task job rules (docs/api.md "Jobs and events") as
 * pure functions from a row and a request to the next row or an ApiError.
 * The kind is checked before the state: a lifecycle or export job is 403
 * `not_a_task` whether it has finished or not.
 */

export function requireTask(row: JobRow): void {
  if (row.kind !== 'task') {
    throw new ApiError(403, 'not_a_task', `The job is a ${row.kind} job; only task jobs are changed through /jobs.`, {
      kind: row.kind,
    });
  }
}

export function requireUnfinished(row: JobRow): void {
  if (isFinished(row.state)) {
    throw new ApiError(409, 'job_finished', `The job has finished (${row.state}); it cannot change.`, { state: row.state });
  }
}

export function newTaskRow(
  input: { id: string; studioId: string; now: string },
  body: { title: string; state?: 'queued' | 'running'; progress_num?: number; progress_den?: number; data?: Record<string, unknown> },
): JobRow {
  const num = body.progress_num ?? 0;
  const den = body.progress_den ?? 0;
  const problem = progressProblem(num, den);
  if (problem) throw ApiError.badRequest(`Bad progress: ${problem}.`, { progress_num: num, progress_den: den });
  return {
    id: input.id,
    studio_id: input.studioId,
    kind: 'task',
    title: body.title,
    state: initialState(body.state),
    progress_num: num,
    progress_den: den,
    last_error: null,
    cancel_requested_at: null,
    data: dataText(body.data ?? {}),
    timeline_id: null,
    created_at: input.now,
    updated_at: input.now,
    finished_at: null,
  };
}

/** PATCH /jobs/{id}: kind (403), finished (409 job_finished), transition (409 conflict), progress (400). */
export function applyTaskUpdate(row: JobRow, patch: TaskUpdate, now: string): JobRow {
  requireTask(row);
  requireUnfinished(row);
  const verdict = checkTransition(row.state, patch.state);
  if (verdict === 'conflict') {
    throw new ApiError(409, 'conflict', `A task job cannot go from ${row.state} to ${patch.state}.`, {
      from: row.state,
      to: patch.state,
    });
  }
  const num = patch.progress_num ?? row.progress_num;
  const den = patch.progress_den ?? row.progress_den;
  const problem = progressProblem(num, den);
  if (problem) throw ApiError.badRequest(`Bad progress: ${problem}.`, { progress_num: num, progress_den: den });
  let data = row.data;
  if (patch.data === null) data = '{}';
  else if (patch.data !== undefined) data = dataText(applyMergePatch(JSON.parse(row.data) as Json, requireDataPatch(patch.data)));
  const state = patch.state ?? row.state;
  return {
    ...row,
    title: patch.title ?? row.title,
    state,
    progress_num: num,
    progress_den: den,
    last_error: patch.last_error === undefined ? row.last_error : patch.last_error,
    data,
    updated_at: now,
    finished_at: isFinished(state) ? now : null,
  };
}

/** A task job's data as stored: a document (400 `invalid_document`) of at most MAX_DATA_BYTES (413 `too_large`). */
export function dataText(value: unknown): string {
  return boundedDocument(value, "The job's data", MAX_DATA_BYTES).text;
}

/** A `data` merge patch, checked as a document before the merge recurses over it (400 `invalid_document`). */
export function requireDataPatch(value: unknown) {
  return requireDocument(value, 'The data patch');
}

/** The bytes a job's stored data counts toward the `kv_bytes` quota (task jobs only: the studio writes them). */
export function dataBytes(row: Pick<JobRow, 'kind' | 'data'>): number {
  return row.kind === 'task' ? Buffer.byteLength(row.data, 'utf8') : 0;
}

/**
 * POST /jobs/{id}:cancel on a task job, queued or running: records
 * `cancel_requested_at` (the first request's time is kept) and leaves the
 * state to the studio.
 */
export function requestTaskCancel(row: JobRow, now: string): JobRow {
  requireTask(row);
  requireUnfinished(row);
  return { ...row, cancel_requested_at: row.cancel_requested_at ?? now, updated_at: now };
}
