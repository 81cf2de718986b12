import { h } from '../lib/dom';
import { readLogTail, type LogTail } from './log-tail';

/**
 * What a failed job shows in its own row, never only in a toast
 * (renderer/README.md "Launcher: jobs and disk"): the step that failed, the last 20 lines of its log, a **Copy
 * details** button (step, error, tail, versions) and **Open log**.
 *
 * Tails are read from the job's log stream once per failed job (a finished
 * log never changes), one job at a time, newest first, and kept here.
 */

export const TAIL_LINES = 20;

export interface FailedJob {
  id: string;
  studio_id: string;
  kind: string;
  title: string;
  state: string;
  last_error: string | null;
  created_at: string;
  finished_at: string | null;
}

type TailState = { state: 'loading' } | { state: 'ready'; tail: LogTail } | { state: 'error'; message: string };

const tails = new Map<string, TailState>();
const queue: string[] = [];
let reading = false;
let onReady: (id: string) => void = () => undefined;

/** Called with the job's id whenever its tail arrives (its row is brought up to date). */
export function onTailReady(fn: (id: string) => void): void {
  onReady = fn;
}

function pump(): void {
  if (reading) return;
  const id = queue.shift();
  if (id === undefined) return;
  reading = true;
  readLogTail(id, TAIL_LINES)
    .then(
      (tail) => tails.set(id, { state: 'ready', tail }),
      (err: unknown) => tails.set(id, { state: 'error', message: err instanceof Error ? err.message : String(err) }),
    )
    .finally(() => {
      reading = false;
      onReady(id);
      pump();
    });
}

function tailOf(id: string): TailState {
  let t = tails.get(id);
  if (!t) {
    t = { state: 'loading' };
    tails.set(id, t);
    queue.push(id);
    pump();
  }
  return t;
}

/** The failed step: the last step the log began, else the one `last_error` names, else the job's kind. */
export function failedStep(job: FailedJob, tail: LogTail | null): string {
  if (tail?.step) return tail.step;
  const named = /^Step "([^"]+)"/.exec(job.last_error ?? '');
  return named ? named[1]! : `${job.kind} (no steps)`;
}

/** The text **Copy details** puts on the clipboard. */
export function detailsText(job: FailedJob, tail: LogTail | null, studioVersion: string | null): string {
  const lines = [
    `Backlot job ${job.id} failed`,
    `Job: ${job.title} (${job.kind})`,
    `Studio: ${job.studio_id}${studioVersion ? ` ${studioVersion}` : ''}`,
    `Step: ${failedStep(job, tail)}`,
    `Error: ${job.last_error ?? '(none given)'}`,
    `Started: ${job.created_at}`,
    `Ended: ${job.finished_at ?? '-'}`,
    `Browser: ${navigator.userAgent}`,
    '',
    tail ? `Last ${tail.lines.length} of ${tail.total} log lines:` : 'Log: not read',
    ...(tail?.lines.map((l) => `${String(l.n).padStart(5)}  ${l.text}`) ?? []),
  ];
  return lines.join('\n');
}

/** The block shown in a failed job's row. `openLog` opens the job's details with its whole log. */
export function failureBlock(job: FailedJob, studioVersion: string | null, openLog: () => void): HTMLElement {
  const t = tailOf(job.id);
  const tail = t.state === 'ready' ? t.tail : null;
  const text = detailsText(job, tail, studioVersion);
  const copy = h('button', { type: 'button', class: 'copy', 'data-copy': text, 'data-focus': 'copy', disabled: t.state === 'loading' }, 'Copy details');
  copy.addEventListener('click', () => {
    navigator.clipboard.writeText(copy.dataset.copy ?? '').then(
      () => {
        copy.textContent = 'Copied';
        setTimeout(() => (copy.textContent = 'Copy details'), 2000);
      },
      () => {
        copy.textContent = 'Copy failed: select the lines instead';
      },
    );
  });
  const open = h('button', { type: 'button', 'data-focus': 'open-log' }, 'Open log');
  open.addEventListener('click', openLog);
  let lines: HTMLElement;
  if (t.state === 'loading') lines = h('p', { class: 'muted' }, 'Reading the end of its log…');
  else if (t.state === 'error') lines = h('p', { class: 'error' }, t.message);
  else if (t.tail.lines.length === 0) lines = h('p', { class: 'muted' }, 'Its log is empty.');
  else
    lines = h(
      'pre',
      { class: 'tail', tabindex: 0, 'aria-label': `Last ${t.tail.lines.length} log lines of ${job.title}` },
      t.tail.lines.map((l) => `${l.text}\n`).join(''),
    );
  // The newest lines (where the error usually is) in view when very long lines make the block scroll.
  requestAnimationFrame(() => (lines.scrollTop = lines.scrollHeight));
  return h(
    'div',
    { class: 'failure', 'data-failure': job.id },
    h('p', { class: 'failed-step' }, h('strong', {}, 'Failed step: '), h('span', { 'data-step': '' }, failedStep(job, tail))),
    job.last_error ? h('p', { class: 'error' }, job.last_error) : null,
    t.state === 'ready' && t.tail.lines.length > 0
      ? h('p', { class: 'muted small' }, `Last ${t.tail.lines.length} of ${t.tail.total} log lines:`)
      : null,
    lines,
    h('div', { class: 'actions' }, copy, open),
  );
}
