import { ApiFailure, call } from '../lib/api';
import { announce, h, replace } from '../lib/dom';
import { mergeByTime } from '../lib/merge';
import { onTailReady } from './failure';
import { frameScheduler, setAttr, setText, syncChildren } from './frame';
import { isFinished, planJobRows, type PlanRow } from './job-plan';
import { JobLogView } from './job-log';
import { JobRow, type Job, type RowContext } from './job-row';
import { showProblem } from './problem';

export type { Job } from './job-row';

/**
 * The launcher's jobs list (renderer/README.md "Launcher: jobs and disk"). State first: every known job by
 * id, what this page asked (cancels, the open job, expanded studios) and each job's last
 * sign of life. Events and actions change the state and mark the ids they touched; one
 * render per animation frame then updates only those rows in place (keyed by id: the
 * same elements, so focus, selection and the open log stay), and lays the list out again
 * (job-plan.ts: the per-studio cap) only when a job appeared, changed state, or the
 * person expanded a studio. However many events arrive, the page does one frame's work.
 */

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
  /** Why a retry asked from this page was refused, by job. */
  private readonly retryErrors = new Map<string, { message: string; code: string }>();
  /** The row that holds the list's one Tab stop (`data-key`); arrow keys move it. */
  private activeKey: string | null = null;
  private logView: JobLogView | null = null;

  // ---- what the next frame must do ------------------------------------------
  /** Jobs whose row must be brought up to date. */
  private readonly pending = new Set<string>();
  /** Which rows are shown, and in which order, may have changed. */
  private layoutDirty = true;
  private readonly schedule = frameScheduler(() => this.render());

  // ---- views ------------------------------------------------------------------
  private readonly rows = new Map<string, JobRow>();
  private readonly more = new Map<string, MoreView>();
  private readonly empty = h('li', { class: 'empty' }, 'No jobs yet. Installs, builds, downloads and exports show here.');

  /** What each row reads from this list's state, and the actions it calls. */
  private readonly rowContext: RowContext = {
    isOpen: (id) => this.openJobId === id,
    asked: (job) => this.asked(job),
    stallText: (job, now) => this.stallText(job, now),
    lastLine: (id) => this.lastLine.get(id),
    tailRead: (id) => this.tails.has(id),
    studioVersion: (studioId) => this.o.studio(studioId)?.version ?? null,
    studioName: (studioId) => this.o.studio(studioId)?.name ?? null,
    toggle: (id) => this.toggleJob(id),
    cancel: (id) => this.cancel(id),
    openLog: (id) => this.openJob(id),
    retry: (id) => this.retry(id),
    retryError: (id) => this.retryErrors.get(id) ?? null,
  };

  constructor(private readonly o: JobsOptions) {
    onTailReady((id) => {
      this.tails.add(id);
      this.touch(id);
    });
    // One Tab stop for the whole list: arrow keys, Home and End move between rows; Tab goes into a row's controls.
    this.list.addEventListener('keydown', (e) => this.moveFocus(e));
    this.list.addEventListener('focusin', (e) => {
      const row = e.target instanceof Element ? e.target.closest<HTMLElement>('li[data-key]') : null;
      if (row && row.dataset.key !== this.activeKey) {
        this.activeKey = row.dataset.key ?? null;
        this.rove();
      }
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
    for (const id of mergeByTime(this.jobs, items)) {
      if (isFinished(this.jobs.get(id)!.state)) this.cancelling.delete(id); // it ended while the channel was down
      this.pending.add(id);
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

  /** Runs a failed install, build, download or update again; the new job arrives as a `job` event. */
  retry(id: string): Promise<boolean> {
    const job = this.jobs.get(id);
    if (!job) return Promise.resolve(false);
    this.retryErrors.delete(id);
    return call<Job>(`/launcher/jobs/${id}:retry`, { method: 'POST' }).then(
      (next) => {
        announce(`Retrying ${job.title}`);
        this.jobEvent(next);
        return true;
      },
      (err: unknown) => {
        const e = err instanceof ApiFailure ? { message: err.message, code: err.code } : { message: String(err), code: 'unknown' };
        this.retryErrors.set(id, e);
        this.touch(id);
        return false;
      },
    );
  }

  cancel(id: string): void {
    const job = this.jobs.get(id);
    if (!job || isFinished(job.state) || this.cancelling.has(id)) return;
    this.cancelling.add(id);
    // "Cancelling…" at the click, not a frame later: this row only.
    const view = this.rows.get(id);
    if (view) view.update(job);
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
    // The log comes into view, but never by pushing the job's own row (its Cancel) off the screen.
    this.logView.focus({ preventScroll: true });
    if (previous) this.touch(previous);
    this.layoutDirty = true;
    this.touch(id);
    // Its row shows it open at once (the click's own feedback), the rest at the next frame.
    const view = this.rows.get(id);
    if (view) view.update(job);
    this.details.scrollIntoView({ block: 'nearest' });
    this.rows.get(id)?.el.scrollIntoView({ block: 'nearest' });
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
      view.update(job);
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
      view.tick(job, now);
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
      if (view && job) view.update(job);
    }
    if (this.openJobId && this.pending.has(this.openJobId)) this.renderDetailsHead();
    this.pending.clear();
    this.rove();
  }

  /** The rows that take part in the list's keyboard navigation: jobs and "N more" rows. */
  private rowElements(): HTMLElement[] {
    return [...this.list.children].filter((el): el is HTMLElement => el instanceof HTMLElement && el.dataset.key !== undefined);
  }

  /**
   * Roving tabindex (the gallery grid's pattern): the active row is the list's one Tab
   * stop and its controls follow it in the Tab order; every other row and its controls
   * are out of the Tab order (tabindex -1, the original kept in `data-rove-tab`).
   */
  private rove(): void {
    const rows = this.rowElements();
    const active = rows.find((r) => r.dataset.key === this.activeKey) ?? rows[0];
    for (const row of rows) {
      const on = row === active;
      row.tabIndex = on ? 0 : -1;
      for (const el of row.querySelectorAll<HTMLElement>('button, a[href], [tabindex]')) {
        if (on && el.dataset.roveTab !== undefined) {
          if (el.dataset.roveTab === '') el.removeAttribute('tabindex');
          else el.setAttribute('tabindex', el.dataset.roveTab);
          delete el.dataset.roveTab;
        } else if (!on && el.dataset.roveTab === undefined) {
          el.dataset.roveTab = el.getAttribute('tabindex') ?? '';
          el.tabIndex = -1;
        }
      }
    }
  }

  private moveFocus(e: KeyboardEvent): void {
    if (!['ArrowDown', 'ArrowUp', 'Home', 'End'].includes(e.key) || e.altKey || e.ctrlKey || e.metaKey) return;
    const target = e.target instanceof HTMLElement ? e.target : null;
    // Keys inside a log tail or a text field keep their own meaning (scrolling, the caret).
    if (!target || target.closest('pre, input, textarea')) return;
    const rows = this.rowElements();
    const current = target.closest<HTMLElement>('li[data-key]');
    const at = current ? rows.indexOf(current) : -1;
    const next = e.key === 'Home' ? 0 : e.key === 'End' ? rows.length - 1 : Math.max(0, Math.min(rows.length - 1, at + (e.key === 'ArrowDown' ? 1 : -1)));
    const row = rows[next];
    if (!row) return;
    e.preventDefault();
    this.activeKey = row.dataset.key ?? null;
    this.rove();
    row.focus();
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
          view = new JobRow(row.id, this.rowContext);
          this.rows.set(row.id, view);
          view.update(this.jobs.get(row.id)!);
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
