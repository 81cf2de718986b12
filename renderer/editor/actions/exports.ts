import { ApiFailure, call } from '../../lib/api';
import type { Job } from '../../lib/job';
import { base, clipReasons, failureText } from '../read';
import { requestRender, state } from '../state';
import { say, showProblem } from './notice';

export const FINISHED = new Set(['succeeded', 'failed', 'cancelled']);

export async function startExport(): Promise<void> {
  if (!state.tl) return;
  state.exportStarting = true;
  requestRender('exports');
  showProblem(null);
  try {
    const job = await call<Job>(`${base()}:export`, { method: 'POST', body: { preset: state.preset } });
    state.exportJobs.set(job.id, job);
    say(`Export started (${state.preset}).`);
  } catch (err) {
    say('The export did not start.');
    showProblem(failureText(err), clipReasons(err));
  } finally {
    state.exportStarting = false;
  }
  requestRender('exports');
}

export async function cancelExport(job: Job): Promise<void> {
  state.cancelling.add(job.id);
  requestRender('exports');
  say(`Cancelling ${job.title}…`);
  try {
    await call(`${base()}/exports/${job.id}:cancel`, { method: 'POST' });
  } catch (err) {
    if (!(err instanceof ApiFailure && err.code === 'job_finished')) {
      state.cancelling.delete(job.id);
      showProblem(failureText(err));
      requestRender('exports');
    }
  }
}

/** A job event from the launcher's live channel: only this sequence's exports are kept. */
export function jobChanged(job: Job): void {
  if (!state.tl || job.kind !== 'export' || job.timeline_id !== state.tl.id) return;
  const before = state.exportJobs.get(job.id);
  state.exportJobs.set(job.id, job);
  if (FINISHED.has(job.state)) {
    state.cancelling.delete(job.id);
    if (!before || !FINISHED.has(before.state)) say(job.state === 'succeeded' ? `Export finished: ${job.title}. It is in the gallery.` : `Export ${job.state}: ${job.title}.`);
  }
  requestRender('exports');
}
