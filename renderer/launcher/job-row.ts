import { h } from '../lib/dom';
import { duration } from '../lib/format';
import { failureBlock } from './failure';
import { setAttr, setText, syncChildren } from './frame';
import { isFinished } from './job-plan';
import type { Job } from '../lib/api-types';

/**
 * One job's row in the launcher's list: built once, then brought up to date in place by
 * `update` (only what differs is written), so its controls stay the same elements
 * across updates and the focus, a text selection and a pressed button survive them.
 */

export type { Job };

/** What a row reads from the list's state, and the list's actions it calls. */
export interface RowContext {
  isOpen(id: string): boolean;
  /** A cancel was asked (from this page or elsewhere) and the job has not finished. */
  asked(job: Job): boolean;
  /** "No output for 30 s" and the like, or null while the job is not stalled. */
  stallText(job: Job, now?: number): string | null;
  lastLine(id: string): string | undefined;
  /** The failed job's log tail has been read (its failure block is complete). */
  tailRead(id: string): boolean;
  studioVersion(studioId: string): string | null;
  /** The studio's name while it is installed, else null (its id is shown then). */
  studioName(studioId: string): string | null;
  toggle(id: string): void;
  cancel(id: string): void;
  openLog(id: string): void;
  retry(id: string): Promise<boolean>;
  /** Why the job's last retry was refused, or null. */
  retryError(id: string): { message: string; code: string } | null;
}

export class JobRow {
  readonly el: HTMLLIElement;
  readonly title = h('button', { type: 'button', class: 'job-open', 'aria-controls': 'job-details', 'data-focus': 'open' });
  private readonly head: HTMLDivElement;
  private readonly kind = h('span', { class: 'badge' });
  private readonly studio = h('span', { class: 'muted' });
  private readonly fill = h('span');
  private readonly bar = h('div', { class: 'bar', role: 'progressbar' }, this.fill);
  private readonly stateLabel = h('span');
  private readonly pct = h('span', { class: 'pct' });
  private readonly elapsed = h('span', { class: 'muted elapsed' });
  private readonly error = h('span', { class: 'error' });
  private readonly cancel = h('button', { type: 'button', 'data-focus': 'cancel' });
  private readonly meta = h('div', { class: 'job-meta' });
  private readonly stallText = h('strong');
  private readonly stallLine = h('span', { class: 'muted' });
  private readonly stall: HTMLParagraphElement;
  private failure: HTMLElement | null = null;
  private failureKey = '';

  constructor(
    readonly id: string,
    private readonly ctx: RowContext,
  ) {
    this.title.addEventListener('click', () => ctx.toggle(id));
    this.cancel.addEventListener('click', () => ctx.cancel(id));
    this.stall = h('p', { class: 'stall', 'data-stall': id, hidden: true }, this.stallText, this.stallLine);
    this.head = h('div', { class: 'job-head' }, this.title, this.kind, this.studio);
    this.el = h('li', { class: 'job', 'data-job': id, 'data-key': id, tabindex: -1 }, this.head);
    // Enter on the row (or a click outside its controls) opens it, like its title.
    this.el.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && e.target === this.el) ctx.toggle(id);
    });
    this.el.addEventListener('click', (e) => {
      if (e.target instanceof Element && e.target.closest('button, a, pre, input')) return;
      if (window.getSelection()?.toString()) return; // selecting text is not a click
      ctx.toggle(id);
    });
  }

  /** Once a second for a running job: its elapsed time and its stall notice. */
  tick(job: Job, now: number): void {
    setText(this.elapsed, duration((now - Date.parse(job.created_at)) / 1000));
    this.updateStall(job, now);
  }

  private updateStall(job: Job, now = Date.now()): void {
    const text = this.ctx.stallText(job, now);
    const line = this.ctx.lastLine(job.id);
    setText(this.stallText, text ?? '');
    setText(this.stallLine, line ? ` · last line: ${line}` : '');
    this.stallLine.hidden = !line;
    this.stall.hidden = text === null;
    this.bar.classList.toggle('stalled', text !== null);
  }

  /** Brings the row up to date with its job, changing only what differs. */
  update(job: Job): void {
    const finished = isFinished(job.state);
    const asked = this.ctx.asked(job) && !finished;
    const isOpen = this.ctx.isOpen(job.id);
    const el = this.el;
    setAttr(el, 'data-state', job.state);
    setAttr(el, 'data-studio', job.studio_id);
    el.classList.toggle('open', isOpen);
    setAttr(el, 'aria-current', isOpen ? 'true' : null);
    setText(this.title, job.title);
    setAttr(this.title, 'aria-expanded', String(isOpen));
    setText(this.kind, job.kind);
    setText(this.studio, this.ctx.studioName(job.studio_id) ?? job.studio_id);
    setAttr(this.studio, 'title', job.studio_id);

    const pct = job.progress_den > 0 ? Math.min(100, Math.round((job.progress_num / job.progress_den) * 100)) : null;
    this.bar.classList.toggle('indeterminate', pct === null);
    if (pct === null) {
      // Indeterminate: no value to announce, so no aria-valuenow.
      for (const a of ['aria-valuemin', 'aria-valuemax', 'aria-valuenow']) setAttr(this.bar, a, null);
      setAttr(this.bar, 'aria-label', `${job.title}: in progress`);
      this.fill.style.width = '';
    } else {
      setAttr(this.bar, 'aria-valuemin', '0');
      setAttr(this.bar, 'aria-valuemax', '100');
      setAttr(this.bar, 'aria-valuenow', String(pct));
      setAttr(this.bar, 'aria-label', `${job.title}: ${pct}%`);
      // Set through CSSOM: a style="" attribute is refused by the page's policy.
      this.fill.style.width = `${pct}%`;
    }

    setAttr(this.stateLabel, 'class', `state state-${asked ? 'cancelling' : job.state}`);
    setText(this.stateLabel, asked ? 'cancelling' : job.state);
    setText(this.pct, pct === null ? '' : `${pct} %`);
    const since = Date.parse(job.created_at);
    const end = job.finished_at ? Date.parse(job.finished_at) : Date.now();
    setAttr(this.elapsed, 'data-since', String(since));
    setAttr(this.elapsed, 'data-end', job.finished_at ? String(end) : '');
    setText(this.elapsed, duration((end - since) / 1000));
    setText(this.error, job.last_error ?? '');
    const cancelWasFocused = document.activeElement === this.cancel;
    if (!finished) {
      this.cancel.disabled = asked;
      setText(this.cancel, asked ? 'Cancelling…' : 'Cancel');
      setAttr(this.cancel, 'aria-label', `Cancel ${job.title}`);
    }
    syncChildren(this.meta, [
      this.stateLabel,
      ...(!finished && pct !== null ? [this.pct] : []),
      this.elapsed,
      ...(job.last_error && job.state !== 'failed' ? [this.error] : []),
      ...(!finished ? [this.cancel] : []),
    ]);
    // A focused Cancel that went away or turned "Cancelling…" (disabled) leaves the focus on its row.
    if (cancelWasFocused && (finished || asked)) el.focus({ preventScroll: true });

    if (!finished) this.updateStall(job);
    const failure = job.state === 'failed' ? this.failureOf(job) : null;
    syncChildren(el, [this.head, ...(finished ? [] : [this.bar]), this.meta, ...(finished ? [] : [this.stall]), ...(failure ? [failure] : [])]);
  }

  /** A failed job's block (failure.ts), rebuilt only when what it shows changed; a focused control in it keeps the focus. */
  private failureOf(job: Job): HTMLElement {
    const version = this.ctx.studioVersion(job.studio_id);
    const retryError = this.ctx.retryError(job.id);
    const key = `${job.last_error}\n${this.ctx.tailRead(job.id)}\n${version}\n${job.title}\n${retryError?.message}`;
    if (this.failure && this.failureKey === key) return this.failure;
    const old = this.failure;
    const block = failureBlock(job, version, { openLog: () => this.ctx.openLog(job.id), retry: () => this.ctx.retry(job.id), retryError });
    this.failure = block;
    this.failureKey = key;
    const active = document.activeElement;
    if (old && active instanceof HTMLElement && old.contains(active)) {
      const name = active.dataset.focus;
      old.replaceWith(block);
      const target = name ? block.querySelector<HTMLElement>(`[data-focus="${CSS.escape(name)}"]`) : null;
      if (target && !target.hasAttribute('disabled')) target.focus({ preventScroll: true });
      else this.el.focus({ preventScroll: true });
    }
    return block;
  }
}
