import { ApiFailure, call } from '../../lib/api';
import type { Job } from '../../lib/api-types';
import { base, clipReasons, failureText } from '../read';
import { requestRender, state } from '../state';
import { say, showProblem } from './notice';

export const FINISHED = new Set(['succeeded', 'failed', 'cancelled']);

/** The name the service gives the file (docs/api.md "Export"): `.mp4` added unless it ends so. */
export function exportFileName(asked: string): string {
  const name = asked.trim();
  return /\.mp4$/i.test(name) ? name : `${name}.mp4`;
}

/** Starts an export; `filename` (else the sequence's name) is the file's name in the library and on download. */
export async function startExport(filename?: string): Promise<void> {
  if (!state.tl) return;
  const name = filename?.trim() ? filename.trim() : null;
  const sequenceName = state.tl.name;
  state.exportStarting = true;
  requestRender('exports');
  showProblem(null);
  try {
    const job = await call<Job>(`${base()}:export`, { method: 'POST', body: { preset: state.preset, ...(name ? { filename: name } : {}) } });
    state.exportJobs.set(job.id, job);
    state.exportNames.set(job.id, exportFileName(name ?? sequenceName));
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
