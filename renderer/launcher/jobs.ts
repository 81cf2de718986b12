import { call } from '../lib/api';
import { announce, h, replace } from '../lib/dom';
import { duration } from '../lib/format';
import { failureBlock, onTailReady } from './failure';
import { frameScheduler, setAttr, setText, syncChildren } from './frame';
import { isFinished, planJobRows, type PlanRow } from './job-plan';
import { JobLogView } from './job-log';
import { showProblem } from './problem';

/**
 * The launcher's jobs list (renderer/README.md §Jobs). State first: every known job by
 * id, what this page asked (cancels, the open job, expanded studios) and each job's last
 * sign of life. Events and actions change the state and mark the ids they touched; one
 * render per animation frame then updates only those rows in place (keyed by id: the
 * same elements, so focus, selection and the open log stay), and lays the list out again
 * (job-plan.ts: the per-studio cap) only when a job appeared, changed state, or the
 * person expanded a studio. However many events arrive, the page does one frame's work.
 */

export interface Job {
  id: string;
  studio_id: string;
  kind: string;
  title: string;
  state: string;
  progress_num: number;
  progress_den: number;
  last_error: string | null;
  cancel_requested_at: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

export interface JobsOptions {
  /** A studio's display name and version (the jobs name their studio; a failure's details carry its version). */
  studio(id: string): { name: string; version: string } | undefined;
  /** A job reached a finished state it was not in before (the disk and gallery may have changed). */
  finished(job: Job, before: Job | undefined): void;
}

/** Rows per studio before the rest fold into "N more from …", and rows in the whole list. */
export const PER_STUDIO = 5;
export const TOTAL_ROWS = 200;
/** A running job with no output (log line, progress or state change) for this long says so. */
const STALL_MS = 30_000;

interface RowView {
  el: HTMLLIElement;
  title: HTMLButtonElement;
  kind: HTMLSpanElement;
  studio: HTMLSpanElement;
  bar: HTMLDivElement;
  fill: HTMLSpanElement;
  stateLabel: HTMLSpanElement;
  pct: HTMLSpanElement;
  elapsed: HTMLSpanElement;
  error: HTMLSpanElement;
  cancel: HTMLButtonElement;
  meta: HTMLDivElement;
  stall: HTMLParagraphElement;
  stallText: HTMLElement;
  stallLine: HTMLSpanElement;
  failure: HTMLElement | null;
  failureKey: string;
}

interface MoreView {
  el: HTMLLIElement;
  text: HTMLSpanElement;
  toggle: HTMLButtonElement;
}

export class JobsList {
  readonly list = h('ul', { class: 'jobs', 'aria-label': 'Jobs, newest first' });
  readonly details = h('section', { id: 'job-details', class: 'job-details', 'aria-labelledby': 'job-details-title', hidden: true });

  // ---- state -----------------------------------------------------------------
  private readonly jobs = new Map<string, Job>();
  /** Cancels asked from this page and not yet answered by a finished state. */
  private readonly cancelling = new Set<string>();
  /** When each job last showed a sign of life, by this page's clock (a `job` change, a `job_output` event, a log line). */
  private readonly activity = new Map<string, number>();
  /** The newest line each job wrote, from `job_output` events or its open log. */
  private readonly lastLine = new Map<string, string>();
  /** Studios the person expanded past the per-studio cap. */
  private readonly expanded = new Set<string>();
  /** Failed jobs whose log tail has been read (their failure block is complete). */
  private readonly tails = new Set<string>();
  private readonly bootedAt = Date.now();
  private openJobId: string | null = null;
  private logView: JobLogView | null = null;

  // ---- what the next frame must do ------------------------------------------
  /** Jobs whose row must be brought up to date. */
  private readonly pending = new Set<string>();
  /** Which rows are shown, and in which order, may have changed. */
  private layoutDirty = true;
  private readonly schedule = frameScheduler(() => this.render());

  // ---- views ------------------------------------------------------------------
  private readonly rows = new Map<string, RowView>();
  private readonly more = new Map<string, MoreView>();
  private readonly empty = h('li', { class: 'empty' }, 'No jobs yet. Installs, builds, downloads and exports show here.');

  constructor(private readonly o: JobsOptions) {
    onTailReady((id) => {
      this.tails.add(id);
      this.touch(id);
    });
  }

  // ---- actions (events and the person's clicks) -------------------------------

  /** A `job` event: the job as it is now. */
  jobEvent(job: Job): void {
    const before = this.jobs.get(job.id);
    if (!before || before.state !== job.state || before.progress_num !== job.progress_num || before.progress_den !== job.progress_den) {
      this.activity.set(job.id, Date.now());
    }
    this.jobs.set(job.id, job);
    if (!before || before.state !== job.state) this.layoutDirty = true;
    if (isFinished(job.state)) {
      if (this.cancelling.delete(job.id)) this.layoutDirty = true;
      if (before && !isFinished(before.state)) this.o.finished(job, before);
    }
    this.touch(job.id);
  }

  /** A `job_output` event: the job wrote lines, so it is not stalled. */
  outputEvent(note: { id: string; text: string }): void {
    this.activity.set(note.id, Date.now());
    this.lastLine.set(note.id, note.text);
    this.touch(note.id);
  }

  /**
   * A list read (`GET /launcher/jobs`): merged, not replaced. A job event that arrived
   * while the list was read is newer than the list (jobs are never deleted, so none needs to go).
   */
  merge(items: Job[]): void {
    for (const job of items) {
      const known = this.jobs.get(job.id);
      if (!known || known.updated_at <= job.updated_at) {
        this.jobs.set(job.id, job);
        this.pending.add(job.id);
      }
    }
    this.layoutDirty = true;
    this.schedule();
  }

  /** Studio names or versions changed: the rows that show them are refreshed. */
  studiosChanged(): void {
    for (const id of this.rows.keys()) this.pending.add(id);
    this.layoutDirty = true;
    this.schedule();
  }

  cancel(id: string): void {
    const job = this.jobs.get(id);
    if (!job || isFinished(job.state) || this.cancelling.has(id)) return;
    this.cancelling.add(id);
    // "Cancelling…" at the click, not a frame later: this row only.
    const view = this.rows.get(id);
    if (view) this.updateRow(view, job);
    this.layoutDirty = true;
    this.touch(id);
    call(`/launcher/jobs/${id}:cancel`, { method: 'POST' }).catch((err: unknown) => {
      this.cancelling.delete(id);
      showProblem(err);
      this.layoutDirty = true;
      this.touch(id);
    });
  }

  toggleJob(id: string): void {
    if (this.openJobId === id) this.closeJob();
    else this.openJob(id);
  }

  toggleStudio(studio: string): void {
    if (this.expanded.has(studio)) this.expanded.delete(studio);
    else this.expanded.add(studio);
    this.layoutDirty = true;
    this.schedule();
  }

  /** Opens a job's details below the list: its head and its live log. */
  openJob(id: string): void {
    const job = this.jobs.get(id);
    if (!job) return;
    this.logView?.close();
    const previous = this.openJobId;
    this.openJobId = id;
    this.logView = new JobLogView(id, job.title, {
      onLine: (text) => {
        this.activity.set(id, Date.now());
        this.lastLine.set(id, text);
      },
    });
    this.details.hidden = false;
    replace(this.details, h('div', { class: 'details-head' }), this.logView.element);
    this.renderDetailsHead();
    this.logView.open();
    this.logView.focus();
    if (previous) this.touch(previous);
    this.layoutDirty = true;
    this.touch(id);
    // Its row shows it open at once (the click's own feedback), the rest at the next frame.
    const view = this.rows.get(id);
    if (view) this.updateRow(view, job);
    this.details.scrollIntoView({ block: 'nearest' });
    announce(`Log of ${job.title} opened below the jobs`);
  }

  closeJob(): void {
    const id = this.openJobId;
    this.logView?.close();
    this.logView = null;
    this.openJobId = null;
    this.details.hidden = true;
    this.details.replaceChildren();
    if (!id) return;
    const view = this.rows.get(id);
    const job = this.jobs.get(id);
    if (view && job) {
      this.updateRow(view, job);
      view.title.focus();
    }
    this.layoutDirty = true;
    this.touch(id);
  }

  /** Once a second: elapsed times of running jobs and stall notices move (text only). */
  tick(): void {
    const now = Date.now();
    for (const [id, view] of this.rows) {
      const job = this.jobs.get(id);
      if (!job || isFinished(job.state)) continue;
      setText(view.elapsed, duration((now - Date.parse(job.created_at)) / 1000));
      this.updateStall(view, job, now);
    }
  }

  // ---- render ----------------------------------------------------------------

  private touch(id: string): void {
    this.pending.add(id);
    this.schedule();
  }

  private render(): void {
    if (this.layoutDirty) {
      this.layoutDirty = false;
      this.layout();
    }
    for (const id of this.pending) {
      const view = this.rows.get(id);
      const job = this.jobs.get(id);
      if (view && job) this.updateRow(view, job);
    }
    if (this.openJobId && this.pending.has(this.openJobId)) this.renderDetailsHead();
    this.pending.clear();
  }

  /** Which rows are shown (job-plan.ts), placed in order; new rows are built, rows no longer shown leave. */
  private layout(): void {
    if (this.jobs.size === 0) {
      syncChildren(this.list, [this.empty]);
      return;
    }
    const pinned = new Set(this.cancelling);
    if (this.openJobId) pinned.add(this.openJobId);
    const focused = document.activeElement?.closest?.('li.job[data-job]')?.getAttribute('data-job');
    if (focused && this.list.contains(document.activeElement)) pinned.add(focused);
    const plan = planJobRows(this.jobs.values(), { perStudio: PER_STUDIO, total: TOTAL_ROWS, expanded: this.expanded, pinned });
    const nodes: HTMLElement[] = [];
    const shownJobs = new Set<string>();
    const shownMore = new Set<string>();
    for (const row of plan) {
      if (row.kind === 'job') {
        shownJobs.add(row.id);
        let view = this.rows.get(row.id);
        if (!view) {
          view = this.createRow(row.id);
          this.rows.set(row.id, view);
          this.updateRow(view, this.jobs.get(row.id)!);
        }
        nodes.push(view.el);
      } else {
        shownMore.add(row.studio);
        nodes.push(this.moreRow(row));
      }
    }
    for (const id of this.rows.keys()) if (!shownJobs.has(id)) this.rows.delete(id);
    for (const studio of this.more.keys()) if (!shownMore.has(studio)) this.more.delete(studio);
    syncChildren(this.list, nodes);
  }

  private studioName(id: string): string {
    return this.o.studio(id)?.name ?? id;
  }

  /** "N more from <studio>": its hidden jobs, and a button to show them all (or fewer again). */
  private moreRow(row: Extract<PlanRow, { kind: 'more' }>): HTMLLIElement {
    let view = this.more.get(row.studio);
    if (!view) {
      const text = h('span');
      const toggle = h('button', { type: 'button', 'data-focus': 'more' });
      const studio = row.studio;
      toggle.addEventListener('click', () => this.toggleStudio(studio));
      const el = h('li', { class: 'job-more', 'data-more': studio, 'data-key': `more:${studio}` }, text, toggle);
      view = { el, text, toggle };
      this.more.set(studio, view);
    }
    const name = this.studioName(row.studio);
    const unfinished = row.unfinished > 0 ? ` (${row.unfinished} not finished)` : '';
    setText(view.text, `${row.hidden} more from ${name}${unfinished}`);
    setText(view.toggle, row.expanded ? 'Show fewer' : 'Show all');
    setAttr(view.toggle, 'aria-expanded', String(row.expanded));
    setAttr(view.toggle, 'aria-label', `${row.expanded ? 'Show fewer' : 'Show all'} jobs of ${name}`);
    return view.el;
  }

  private createRow(id: string): RowView {
    const title = h('button', { type: 'button', class: 'job-open', 'aria-controls': 'job-details', 'data-focus': 'open' });
    title.addEventListener('click', () => this.toggleJob(id));
    const kind = h('span', { class: 'badge' });
    const studio = h('span', { class: 'muted' });
    const fill = h('span');
    const bar = h('div', { class: 'bar', role: 'progressbar' }, fill);
    const stateLabel = h('span');
    const pct = h('span', { class: 'pct' });
    const elapsed = h('span', { class: 'muted elapsed' });
    const error = h('span', { class: 'error' });
    const cancel = h('button', { type: 'button', 'data-focus': 'cancel' });
    cancel.addEventListener('click', () => this.cancel(id));
    const meta = h('div', { class: 'job-meta' });
    const stallText = h('strong');
    const stallLine = h('span', { class: 'muted' });
    const stall = h('p', { class: 'stall', 'data-stall': id, hidden: true }, stallText, stallLine);
    const el = h('li', { class: 'job', 'data-job': id, 'data-key': id, tabindex: -1 }, h('div', { class: 'job-head' }, title, kind, studio));
    // Enter on the row (or a click outside its controls) opens it, like its title.
    el.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && e.target === el) this.toggleJob(id);
    });
    el.addEventListener('click', (e) => {
      if (e.target instanceof Element && e.target.closest('button, a, pre, input')) return;
      if (window.getSelection()?.toString()) return; // selecting text is not a click
      this.toggleJob(id);
    });
    return { el, title, kind, studio, bar, fill, stateLabel, pct, elapsed, error, cancel, meta, stall, stallText, stallLine, failure: null, failureKey: '' };
  }

  private lastActive(job: Job): number {
    return this.activity.get(job.id) ?? Math.max(Date.parse(job.updated_at), this.bootedAt);
  }

  private asked(job: Job): boolean {
    return this.cancelling.has(job.id) || job.cancel_requested_at !== null;
  }

  /** "No output for 30 s" (then by minutes), or null while the job is not stalled. */
  private stallText(job: Job, now = Date.now()): string | null {
    if (job.state !== 'running' || this.asked(job)) return null;
    const quiet = now - this.lastActive(job);
    if (quiet < STALL_MS) return null;
    const s = Math.floor(quiet / 1000);
    return s < 60 ? `No output for ${Math.floor(s / 30) * 30} s` : `No output for ${Math.floor(s / 60)} min`;
  }

  private updateStall(view: RowView, job: Job, now = Date.now()): void {
    const text = this.stallText(job, now);
    const line = this.lastLine.get(job.id);
    setText(view.stallText, text ?? '');
    setText(view.stallLine, line ? ` · last line: ${line}` : '');
    view.stallLine.hidden = !line;
    view.stall.hidden = text === null;
    view.bar.classList.toggle('stalled', text !== null);
  }

  /** Brings one row up to date with its job, changing only what differs. */
  private updateRow(view: RowView, job: Job): void {
    const finished = isFinished(job.state);
    const asked = this.asked(job) && !finished;
    const isOpen = this.openJobId === job.id;
    const { el } = view;
    setAttr(el, 'data-state', job.state);
    setAttr(el, 'data-studio', job.studio_id);
    el.classList.toggle('open', isOpen);
    setAttr(el, 'aria-current', isOpen ? 'true' : null);
    setText(view.title, job.title);
    setAttr(view.title, 'aria-expanded', String(isOpen));
    setText(view.kind, job.kind);
    setText(view.studio, job.studio_id);

    const pct = job.progress_den > 0 ? Math.min(100, Math.round((job.progress_num / job.progress_den) * 100)) : null;
    view.bar.classList.toggle('indeterminate', pct === null);
    if (pct === null) {
      // Indeterminate: no value to announce, so no aria-valuenow.
      for (const a of ['aria-valuemin', 'aria-valuemax', 'aria-valuenow']) setAttr(view.bar, a, null);
      setAttr(view.bar, 'aria-label', `${job.title}: in progress`);
      view.fill.style.width = '';
    } else {
      setAttr(view.bar, 'aria-valuemin', '0');
      setAttr(view.bar, 'aria-valuemax', '100');
      setAttr(view.bar, 'aria-valuenow', String(pct));
      setAttr(view.bar, 'aria-label', `${job.title}: ${pct}%`);
      // Set through CSSOM: a style="" attribute is refused by the page's policy.
      view.fill.style.width = `${pct}%`;
    }

    setAttr(view.stateLabel, 'class', `state state-${asked ? 'cancelling' : job.state}`);
    setText(view.stateLabel, asked ? 'cancelling' : job.state);
    setText(view.pct, pct === null ? '' : `${pct} %`);
    const since = Date.parse(job.created_at);
    const end = job.finished_at ? Date.parse(job.finished_at) : Date.now();
    setAttr(view.elapsed, 'data-since', String(since));
    setAttr(view.elapsed, 'data-end', job.finished_at ? String(end) : '');
    setText(view.elapsed, duration((end - since) / 1000));
    setText(view.error, job.last_error ?? '');
    const cancelWasFocused = document.activeElement === view.cancel;
    if (!finished) {
      view.cancel.disabled = asked;
      setText(view.cancel, asked ? 'Cancelling…' : 'Cancel');
      setAttr(view.cancel, 'aria-label', `Cancel ${job.title}`);
    }
    syncChildren(view.meta, [
      view.stateLabel,
      ...(!finished && pct !== null ? [view.pct] : []),
      view.elapsed,
      ...(job.last_error && job.state !== 'failed' ? [view.error] : []),
      ...(!finished ? [view.cancel] : []),
    ]);
    // A focused Cancel that went away or turned "Cancelling…" (disabled) leaves the focus on its row.
    if (cancelWasFocused && (finished || asked)) el.focus({ preventScroll: true });

    if (!finished) this.updateStall(view, job);
    const failure = job.state === 'failed' ? this.failureOf(view, job) : null;
    syncChildren(el, [el.firstChild!, ...(finished ? [] : [view.bar]), view.meta, ...(finished ? [] : [view.stall]), ...(failure ? [failure] : [])]);
  }

  /** A failed job's block (failure.ts), rebuilt only when what it shows changed; a focused control in it keeps the focus. */
  private failureOf(view: RowView, job: Job): HTMLElement {
    const version = this.o.studio(job.studio_id)?.version ?? null;
    const key = `${job.last_error}\n${this.tails.has(job.id)}\n${version}\n${job.title}`;
    if (view.failure && view.failureKey === key) return view.failure;
    const old = view.failure;
    const block = failureBlock(job, version, () => this.openJob(job.id));
    view.failure = block;
    view.failureKey = key;
    const active = document.activeElement;
    if (old && active instanceof HTMLElement && old.contains(active)) {
      const name = active.dataset.focus;
      old.replaceWith(block);
      const target = name ? block.querySelector<HTMLElement>(`[data-focus="${CSS.escape(name)}"]`) : null;
      if (target && !target.hasAttribute('disabled')) target.focus({ preventScroll: true });
      else view.el.focus({ preventScroll: true });
    }
    return block;
  }

  private renderDetailsHead(): void {
    const job = this.openJobId ? this.jobs.get(this.openJobId) : undefined;
    const head = this.details.querySelector('.details-head');
    if (!job || !head) return;
    const close = h('button', { type: 'button', class: 'close', 'aria-label': `Close the log of ${job.title}` }, 'Close');
    close.addEventListener('click', () => this.closeJob());
    const hadFocus = head.contains(document.activeElement);
    replace(
      head,
      h(
        'div',
        { class: 'details-title' },
        h('h3', { id: 'job-details-title' }, job.title),
        h('span', { class: 'badge' }, job.kind),
        h('span', { class: `state state-${job.state}` }, job.state),
        h('code', { class: 'muted' }, job.id),
      ),
      close,
    );
    if (hadFocus) close.focus({ preventScroll: true });
  }
}
