/**
 * The task job state table (docs/api.md "Jobs and events") as data, and the
 * pure checks every task write goes through. Lifecycle jobs are moved by the
 * runner, never through these checks.
 */

export const JOB_STATES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type JobState = (typeof JOB_STATES)[number];

export const JOB_KINDS = ['task', 'install', 'build', 'download', 'update', 'export', 'uninstall'] as const;
export type JobKind = (typeof JOB_KINDS)[number];

const FINISHED_STATES: readonly JobState[] = ['succeeded', 'failed', 'cancelled'];

export function isFinished(state: JobState): boolean {
  return FINISHED_STATES.includes(state);
}

/** Every transition a PATCH may make; `null` is "no job yet" (POST /jobs). */
const TASK_TRANSITIONS: readonly { from: JobState | null; to: JobState }[] = [
  { from: null, to: 'running' },
  { from: null, to: 'queued' },
  { from: 'queued', to: 'running' },
  { from: 'queued', to: 'succeeded' },
  { from: 'queued', to: 'failed' },
  { from: 'queued', to: 'cancelled' },
  { from: 'running', to: 'succeeded' },
  { from: 'running', to: 'failed' },
  { from: 'running', to: 'cancelled' },
];

/**
 * What a change of a task job in state `from` to `to` is:
 * - `finished`: the job already ended; nothing may change (409 `job_finished`);
 * - `unchanged`: `to` is absent or the current state (other members may change);
 * - `allowed`: a transition the table lists;
 * - `conflict`: a transition the table does not list (409 `conflict`).
 */
export type TransitionVerdict = 'finished' | 'unchanged' | 'allowed' | 'conflict';

export function checkTransition(from: JobState, to: JobState | undefined): TransitionVerdict {
  if (isFinished(from)) return 'finished';
  if (to === undefined || to === from) return 'unchanged';
  return TASK_TRANSITIONS.some((t) => t.from === from && t.to === to) ? 'allowed' : 'conflict';
}

/** The state a new task job starts in: `running` unless `queued` is given. */
export function initialState(given: 'queued' | 'running' | undefined): JobState {
  return given ?? 'running';
}

/**
 * Progress is two non-negative integers; with `progress_den` > 0,
 * `progress_num` must not exceed it (0/0 is indeterminate). Returns the reason
 * a pair is refused, or null.
 */
export function progressProblem(num: number, den: number): string | null {
  if (!Number.isSafeInteger(num) || !Number.isSafeInteger(den)) return 'progress_num and progress_den must be integers';
  if (num < 0 || den < 0) return 'progress_num and progress_den must not be negative';
  if (den > 0 && num > den) return `progress_num (${num}) must not exceed progress_den (${den})`;
  return null;
}
