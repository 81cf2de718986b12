import { ApiFailure, call, query, type Page } from '../lib/api';
import { h } from '../lib/dom';
import type { Job } from '../lib/api-types';
import { readStudioTail, type LogTail } from './log-tail';

/**
 * What a failed studio's card says (docs/api.md "States of a studio"): why
 * (`last_error`), the last lines of its own output, **Copy details** and
 * **Retry**. A studio that was installed and failed to start or run shows
 * the end of its console; one whose install failed points at the failed job
 * in the Jobs list, whose row shows that job's own log.
 *
 * The tail is read once per failure (keyed by the studio's `updated_at`): a
 * studio that is not running writes nothing more.
 */

export const STUDIO_TAIL_LINES = 12;

export interface FailedStudio {
  id: string;
  name: string;
  version: string;
  state: string;
  installed: boolean;
  linked: boolean;
  source: string;
  last_error: string | null;
  updated_at: string;
}

type TailState = { state: 'loading' } | { state: 'ready'; tail: LogTail } | { state: 'error'; message: string };

const tails = new Map<string, TailState>();
let onReady: (studioId: string) => void = () => undefined;

/** Called with the studio's id when its tail arrives (its card is rebuilt). */
export function onStudioTailReady(fn: (studioId: string) => void): void {
  onReady = fn;
}

function tailOf(s: FailedStudio): TailState {
  const key = `${s.id}\n${s.updated_at}`;
  let t = tails.get(key);
  if (!t) {
    t = { state: 'loading' };
    tails.set(key, t);
    readStudioTail(s.id, STUDIO_TAIL_LINES).then(
      (tail) => tails.set(key, { state: 'ready', tail }),
      (err: unknown) => tails.set(key, { state: 'error', message: err instanceof Error ? err.message : String(err) }),
    ).finally(() => onReady(s.id));
  }
  return t;
}

/** The text **Copy details** puts on the clipboard. */
export function studioDetailsText(s: FailedStudio, tail: LogTail | null): string {
  return [
    `Backlot studio ${s.name} failed`,
    `Studio: ${s.name} (${s.id}) ${s.version}`,
    `State: ${s.state}${s.installed ? '' : ' (not installed completely)'}`,
    `Error: ${s.last_error ?? '(none given)'}`,
    `Since: ${s.updated_at}`,
    `Browser: ${navigator.userAgent}`,
    '',
    tail ? `Last ${tail.lines.length} of ${tail.total} lines of its output:` : 'Output: see its failed job in Jobs',
    ...(tail?.lines.map((l) => `${String(l.n).padStart(5)}  ${l.text}`) ?? []),
  ].join('\n');
}

/**
 * Retry: start it again when it was installed; otherwise run its newest
 * failed install, build or download job again (`:retry`), or install it
 * again from its folder when no such job is left.
 */
export async function retryStudio(s: FailedStudio): Promise<void> {
  if (s.installed) {
    await call(`/launcher/studios/${encodeURIComponent(s.id)}:start`, { method: 'POST' });
    return;
  }
  const jobs = await call<Page<Job>>(`/launcher/jobs${query({ studio: s.id, limit: 20 })}`);
  const failed = jobs.items.find((j) => ['install', 'build', 'download'].includes(j.kind));
  if (failed?.state === 'failed') {
    try {
      await call(`/launcher/jobs/${failed.id}:retry`, { method: 'POST' });
      return;
    } catch (err) {
      if (!(err instanceof ApiFailure && err.code === 'not_retryable')) throw err;
    }
  }
  await call(`/launcher/studios:${s.linked ? 'link' : 'install'}`, { method: 'POST', body: { source: s.source } });
}

export function studioFailureBlock(s: FailedStudio, retry: (button: HTMLButtonElement) => void): HTMLElement {
  const t = s.installed ? tailOf(s) : null;
  const tail = t?.state === 'ready' ? t.tail : null;
  const copy = h('button', { type: 'button', class: 'copy', 'data-focus': 'copy', 'data-copy': studioDetailsText(s, tail), disabled: t?.state === 'loading' }, 'Copy details');
  copy.addEventListener('click', () => {
    navigator.clipboard.writeText(copy.dataset.copy ?? '').then(
      () => {
        copy.textContent = 'Copied';
        setTimeout(() => (copy.textContent = 'Copy details'), 2000);
      },
      () => (copy.textContent = 'Copy failed: select the lines instead'),
    );
  });
  const again = h('button', { type: 'button', class: 'primary', 'data-focus': 'retry' }, s.installed ? 'Retry: start again' : 'Retry the install');
  again.addEventListener('click', () => retry(again));
  let lines: HTMLElement;
  if (!t) lines = h('p', { class: 'muted small' }, 'Its install did not finish: the failed job in Jobs shows its log.');
  else if (t.state === 'loading') lines = h('p', { class: 'muted small' }, 'Reading the end of its output…');
  else if (t.state === 'error') lines = h('p', { class: 'error' }, t.message);
  else if (t.tail.lines.length === 0) lines = h('p', { class: 'muted small' }, 'It wrote no output.');
  else
    lines = h(
      'pre',
      { class: 'tail', tabindex: 0, 'aria-label': `Last ${t.tail.lines.length} lines of ${s.name}'s output` },
      t.tail.lines.map((l) => `${l.text}\n`).join(''),
    );
  requestAnimationFrame(() => (lines.scrollTop = lines.scrollHeight));
  return h(
    'div',
    { class: 'failure studio-failure', 'data-studio-failure': s.id },
    h('p', { class: 'error', 'data-reason': '' }, h('strong', {}, 'Why it failed: '), s.last_error ?? 'no reason was given'),
    tail && tail.lines.length > 0 ? h('p', { class: 'muted small' }, `Last ${tail.lines.length} of ${tail.total} lines of its output:`) : null,
    lines,
    h('div', { class: 'actions' }, again, copy),
  );
}
