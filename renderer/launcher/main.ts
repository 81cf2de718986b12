import { completeSignIn, credential, onCredentialChange } from '../lib/credential';
import { EventStream } from '../lib/sse';
import { ApiFailure, call, query, type Page } from '../lib/api';
import { announce, h, renderKeyed, replace } from '../lib/dom';
import { duration } from '../lib/format';
import { confirmUpdate } from './update';
import { galleryPanel } from './gallery';
import { DiskPanel } from './disk';
import { failureBlock, onTailReady } from './failure';
import { JobLogView } from './job-log';

/**
 * The launcher UI (issue 18): studios (install, start, stop, open, uninstall)
 * and every studio's jobs with progress and Cancel, kept current by the
 * launcher's event channel (`/api/v1/launcher/events`), never by polling.
 */

interface Studio {
  id: string;
  name: string;
  version: string;
  state: string;
  heavy: boolean;
  port: number | null;
  origin: string;
  capabilities: string[];
  linked: boolean;
  source: string;
}

interface Job {
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

interface BacklotBridge {
  pickFolder(): Promise<string | null>;
}

const FINISHED = new Set(['succeeded', 'failed', 'cancelled']);
const studios = new Map<string, Studio>();
const jobs = new Map<string, Job>();
/** Cancels asked from this page and not yet answered by a finished state. */
const cancelling = new Set<string>();

const root = document.getElementById('app')!;
const studioList = h('ul', { class: 'studios', 'aria-label': 'Installed studios' });
const jobList = h('ul', { class: 'jobs', 'aria-label': 'Jobs, newest first' });
const problem = h('p', { class: 'problem', role: 'alert', hidden: true });
const gallery = galleryPanel();
const disk = new DiskPanel();

function showProblem(err: unknown): void {
  problem.hidden = false;
  problem.textContent = err instanceof ApiFailure ? `${err.message} (${err.code})` : String(err);
}

function clearProblem(): void {
  problem.hidden = true;
  problem.textContent = '';
}

/** Runs an action from a button: disabled while it runs, its failure shown in place. */
async function act(button: HTMLButtonElement, work: () => Promise<unknown>): Promise<void> {
  button.disabled = true;
  clearProblem();
  try {
    await work();
  } catch (err) {
    showProblem(err);
  } finally {
    button.disabled = false;
  }
}

// ---- studios ---------------------------------------------------------------

function studioRow(s: Studio): HTMLLIElement {
  const running = s.state === 'running';
  const busy = ['installing', 'starting', 'stopping', 'uninstalling'].includes(s.state);
  const start = h('button', { type: 'button', disabled: busy || running, 'data-focus': 'start' }, 'Start');
  start.addEventListener('click', () => act(start, () => call(`/launcher/studios/${s.id}:start`, { method: 'POST' })));
  const stop = h('button', { type: 'button', disabled: !running, 'data-focus': 'stop' }, 'Stop');
  stop.addEventListener('click', () => act(stop, () => call(`/launcher/studios/${s.id}:stop`, { method: 'POST' })));
  const open = running
    ? h('a', { class: 'button primary', href: `${s.origin}/`, target: '_blank', rel: 'noopener', 'data-focus': 'open' }, 'Open')
    : h('span', { class: 'button primary', 'aria-disabled': 'true' }, 'Open');
  const remove = h('button', { type: 'button', class: 'danger', disabled: busy, 'data-focus': 'uninstall' }, 'Uninstall…');
  remove.addEventListener('click', () => confirmUninstall(s));
  const update = h('button', { type: 'button', disabled: busy, 'data-focus': 'update' }, 'Update…');
  update.addEventListener('click', () => confirmUpdate(s, showProblem));
  return h(
    'li',
    { class: 'studio', 'data-studio': s.id, 'data-state': s.state, tabindex: -1 },
    h(
      'div',
      { class: 'studio-head' },
      h('strong', {}, s.name),
      h('span', { class: 'muted' }, ` ${s.version}`),
      s.heavy ? h('span', { class: 'badge', title: 'Heavy: one heavy studio runs at a time' }, 'heavy') : null,
    ),
    h(
      'div',
      { class: 'studio-meta' },
      h('span', { class: `state state-${s.state}` }, s.state),
      s.port ? h('span', { class: 'muted' }, `port ${s.port}`) : null,
      h('code', { class: 'muted' }, s.id),
    ),
    h('div', { class: 'actions' }, open, start, stop, update, remove),
  );
}

function renderStudios(): void {
  const list = [...studios.values()].sort((a, b) => a.name.localeCompare(b.name));
  if (list.length === 0) {
    replace(studioList, h('li', { class: 'empty' }, 'No studio is installed yet. Install one from a folder above: try examples/studios/sketchpad in the Backlot folder.'));
    return;
  }
  renderKeyed(studioList, list, (s) => s.id, studioRow);
}

function confirmUninstall(s: Studio): void {
  const purge = h('input', { type: 'checkbox', id: 'purge' });
  const dialog = h(
    'dialog',
    { class: 'confirm', 'aria-labelledby': 'uninstall-title' },
    h('h2', { id: 'uninstall-title' }, `Uninstall ${s.name}?`),
    h('p', {}, 'Its program files are removed. What it made (its gallery, records, documents and assets) stays unless you also purge.'),
    h(
      'label',
      { class: 'check' },
      purge,
      ' Also purge its data: its gallery items, records, key-value documents (shared ones stay), sessions, sequences, library files, and its stage and data folders are deleted. Assets no other studio uses become reclaimable (Disk).',
    ),
  );
  const cancel = h('button', { type: 'button', autofocus: true }, 'Keep it');
  const confirm = h('button', { type: 'button', class: 'danger' }, 'Uninstall');
  cancel.addEventListener('click', () => dialog.close());
  confirm.addEventListener('click', () =>
    act(confirm, async () => {
      await call(`/launcher/studios/${s.id}:uninstall`, { method: 'POST', body: { confirm: true, purge: purge.checked } });
      dialog.close();
      announce(`Uninstalling ${s.name}`);
    }),
  );
  dialog.append(h('div', { class: 'actions' }, cancel, confirm));
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}

function installForm(): HTMLFormElement {
  const field = h('input', {
    id: 'source',
    name: 'source',
    type: 'text',
    placeholder: '/path/to/a/studio folder',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
  });
  const install = h('button', { type: 'submit', class: 'primary' }, 'Install');
  const bridge = (window as unknown as { backlot?: BacklotBridge }).backlot;
  const browse = bridge
    ? h('button', { type: 'button' }, 'Choose folder…')
    : null;
  browse?.addEventListener('click', async () => {
    const path = await bridge!.pickFolder();
    if (path) field.value = path;
  });
  const form = h(
    'form',
    { class: 'install' },
    h('label', { for: 'source', id: 'install-title' }, 'Install a studio from a folder'),
    h('div', { class: 'row' }, field, browse, install),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void act(install, async () => {
      await call('/launcher/studios:install', { method: 'POST', body: { source: field.value.trim() } });
      announce('Installing');
      field.value = '';
    });
  });
  return form;
}

// ---- jobs ------------------------------------------------------------------

/** A running job with no output (log line, progress or state change) for this long says so (ui-anchors lesson 3). */
const STALL_MS = 30_000;
/** When each job last showed a sign of life, by this page's clock (a `job` change, a `job_output` event, a log line). */
const activity = new Map<string, number>();
/** The newest line each job wrote, from `job_output` events or its open log. */
const lastLine = new Map<string, string>();
const bootedAt = Date.now();
/** The job whose details (and live log) are open, if any. */
let openJobId: string | null = null;
let logView: JobLogView | null = null;
const jobDetails = h('section', { id: 'job-details', class: 'job-details', 'aria-labelledby': 'job-details-title', hidden: true });

function lastActive(job: Job): number {
  return activity.get(job.id) ?? Math.max(Date.parse(job.updated_at), bootedAt);
}

/** "No output for 30 s" (then by minutes), or null while the job is not stalled. */
function stallText(job: Job, now = Date.now()): string | null {
  if (job.state !== 'running' || cancelling.has(job.id) || job.cancel_requested_at !== null) return null;
  const quiet = now - lastActive(job);
  if (quiet < STALL_MS) return null;
  const s = Math.floor(quiet / 1000);
  return s < 60 ? `No output for ${Math.floor(s / 30) * 30} s` : `No output for ${Math.floor(s / 60)} min`;
}

function stallNotice(job: Job): HTMLElement {
  const text = stallText(job);
  const line = lastLine.get(job.id);
  return h(
    'p',
    { class: 'stall', 'data-stall': job.id, hidden: text === null },
    h('strong', {}, text ?? ''),
    line ? h('span', { class: 'muted' }, ` · last line: ${line}`) : null,
  );
}

/** The bar's filled part. Set through CSSOM: a style="" attribute is refused by the page's policy. */
function fill(pct: number): HTMLSpanElement {
  const span = h('span');
  span.style.width = `${pct}%`;
  return span;
}

function progressBar(job: Job): HTMLElement | null {
  if (FINISHED.has(job.state)) return null;
  if (job.progress_den <= 0) {
    // Indeterminate: no value to announce, so no aria-valuenow.
    return h('div', { class: 'bar indeterminate', role: 'progressbar', 'aria-label': `${job.title}: in progress` }, h('span'));
  }
  const pct = Math.min(100, Math.round((job.progress_num / job.progress_den) * 100));
  return h(
    'div',
    { class: 'bar', role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': pct, 'aria-label': `${job.title}: ${pct}%` },
    fill(pct),
  );
}

function jobRow(job: Job): HTMLLIElement {
  const finished = FINISHED.has(job.state);
  const since = Date.parse(job.created_at);
  const end = job.finished_at ? Date.parse(job.finished_at) : Date.now();
  const asked = cancelling.has(job.id) || job.cancel_requested_at !== null;
  let cancel: HTMLElement | null = null;
  if (!finished) {
    const button = h('button', { type: 'button', disabled: asked, 'aria-label': `Cancel ${job.title}`, 'data-focus': 'cancel' }, asked ? 'Cancelling…' : 'Cancel');
    button.addEventListener('click', () => {
      cancelling.add(job.id);
      renderJobs();
      call(`/launcher/jobs/${job.id}:cancel`, { method: 'POST' }).catch((err: unknown) => {
        cancelling.delete(job.id);
        showProblem(err);
        renderJobs();
      });
    });
    cancel = button;
  }
  const isOpen = openJobId === job.id;
  const title = h(
    'button',
    { type: 'button', class: 'job-open', 'aria-expanded': String(isOpen), 'aria-controls': 'job-details', 'data-focus': 'open' },
    job.title,
  );
  title.addEventListener('click', () => toggleJob(job.id));
  const bar = progressBar(job);
  if (bar && stallText(job)) bar.classList.add('stalled');
  const row = h(
    'li',
    { class: `job${isOpen ? ' open' : ''}`, 'data-job': job.id, 'data-state': job.state, tabindex: -1, 'aria-current': isOpen ? 'true' : null },
    h('div', { class: 'job-head' }, title, h('span', { class: 'badge' }, job.kind), h('span', { class: 'muted' }, job.studio_id)),
    bar,
    h(
      'div',
      { class: 'job-meta' },
      h('span', { class: `state state-${asked && !finished ? 'cancelling' : job.state}` }, asked && !finished ? 'cancelling' : job.state),
      !finished && job.progress_den > 0 ? h('span', { class: 'pct' }, `${Math.min(100, Math.round((job.progress_num / job.progress_den) * 100))} %`) : null,
      h('span', { class: 'muted elapsed', 'data-since': since, 'data-end': job.finished_at ? end : '' }, duration((end - since) / 1000)),
      job.last_error && job.state !== 'failed' ? h('span', { class: 'error' }, job.last_error) : null,
      cancel,
    ),
    finished ? null : stallNotice(job),
    job.state === 'failed' ? failureBlock(job, studios.get(job.studio_id)?.version ?? null, () => openJob(job.id)) : null,
  );
  // Enter on the row (or a click outside its controls) opens it, like its title.
  row.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && e.target === row) toggleJob(job.id);
  });
  row.addEventListener('click', (e) => {
    if (e.target instanceof Element && e.target.closest('button, a, pre, input')) return;
    if (window.getSelection()?.toString()) return; // selecting text is not a click
    toggleJob(job.id);
  });
  return row;
}

function renderJobs(): void {
  const list = [...jobs.values()].sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : a.id < b.id ? 1 : -1));
  if (list.length === 0) {
    replace(jobList, h('li', { class: 'empty' }, 'No jobs yet. Installs, builds, downloads and exports show here.'));
    return;
  }
  renderKeyed(jobList, list.slice(0, 200), (j) => j.id, jobRow);
  if (openJobId) renderDetailsHead();
}

function toggleJob(id: string): void {
  if (openJobId === id) closeJob();
  else openJob(id);
}

/** Opens a job's details below the list: its head and its live log. */
function openJob(id: string): void {
  const job = jobs.get(id);
  if (!job) return;
  logView?.close();
  openJobId = id;
  logView = new JobLogView(id, job.title, {
    onLine(text) {
      activity.set(id, Date.now());
      lastLine.set(id, text);
    },
  });
  jobDetails.hidden = false;
  replace(jobDetails, h('div', { class: 'details-head' }), logView.element);
  renderDetailsHead();
  logView.open();
  // Focus into the log first: the list's re-render then restores no focus in it (which would scroll the list).
  logView.focus();
  renderJobs();
  jobDetails.scrollIntoView({ block: 'nearest' });
  announce(`Log of ${job.title} opened below the jobs`);
}

function closeJob(): void {
  const id = openJobId;
  logView?.close();
  logView = null;
  openJobId = null;
  jobDetails.hidden = true;
  jobDetails.replaceChildren();
  renderJobs();
  if (id) jobList.querySelector<HTMLElement>(`li[data-job="${CSS.escape(id)}"] .job-open`)?.focus();
}

function renderDetailsHead(): void {
  const job = openJobId ? jobs.get(openJobId) : undefined;
  const head = jobDetails.querySelector('.details-head');
  if (!job || !head) return;
  const close = h('button', { type: 'button', class: 'close', 'aria-label': `Close the log of ${job.title}` }, 'Close');
  close.addEventListener('click', closeJob);
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
}

/** Once a second: elapsed times of running jobs and stall notices move (text only: nothing is re-rendered). */
function tick(): void {
  const now = Date.now();
  for (const el of jobList.querySelectorAll<HTMLElement>('.elapsed[data-end=""]')) {
    el.textContent = duration((now - Number(el.dataset.since)) / 1000);
  }
  for (const el of jobList.querySelectorAll<HTMLElement>('.stall[data-stall]')) {
    const job = jobs.get(el.dataset.stall!);
    if (!job) continue;
    const text = stallText(job, now);
    if (text === null && el.hidden) continue;
    el.closest('li')?.querySelector('.bar')?.classList.toggle('stalled', text !== null);
    el.replaceWith(stallNotice(job));
  }
}

// ---- live ------------------------------------------------------------------

async function loadAll(): Promise<void> {
  const [s, j] = await Promise.all([
    call<Page<Studio>>(`/launcher/studios${query({ limit: 500 })}`),
    call<Page<Job>>(`/launcher/jobs${query({ limit: 100 })}`),
  ]);
  studios.clear();
  for (const st of s.items) studios.set(st.id, st);
  // Merged, not replaced: a job event that arrived while this list was read is newer than the
  // list (jobs are never deleted, so none needs to go).
  for (const job of j.items) {
    const known = jobs.get(job.id);
    if (!known || known.updated_at <= job.updated_at) jobs.set(job.id, job);
  }
  renderStudios();
  renderJobs();
}

function connect(): void {
  const events = new EventStream('/api/v1/launcher/events');
  events.addEventListener('studio', (e) => {
    const s = JSON.parse((e as MessageEvent<string>).data) as Studio & { removed?: boolean };
    if (s.state === 'uninstalled' || s.removed) studios.delete(s.id);
    else studios.set(s.id, s);
    renderStudios();
  });
  events.addEventListener('job', (e) => {
    const job = JSON.parse((e as MessageEvent<string>).data) as Job;
    const before = jobs.get(job.id);
    if (!before || before.state !== job.state || before.progress_num !== job.progress_num || before.progress_den !== job.progress_den) {
      activity.set(job.id, Date.now());
    }
    jobs.set(job.id, job);
    if (FINISHED.has(job.state)) {
      cancelling.delete(job.id);
      if (before && !FINISHED.has(before.state)) void disk.load(); // an export adds an asset, an uninstall may free some
    }
    renderJobs();
    // A finished export (or any job that may have added items) shows in the gallery at once.
    if (job.state === 'succeeded' && before?.state !== 'succeeded') gallery.refresh();
  });
  // A job wrote log lines (at most one event per job every 2 s): it is not stalled.
  events.addEventListener('job_output', (e) => {
    const note = JSON.parse((e as MessageEvent<string>).data) as { id: string; text: string };
    activity.set(note.id, Date.now());
    lastLine.set(note.id, note.text);
    const job = jobs.get(note.id);
    const el = jobList.querySelector(`.stall[data-stall="${CSS.escape(note.id)}"]`);
    if (job && el) {
      el.replaceWith(stallNotice(job));
      jobList.querySelector(`li[data-job="${CSS.escape(note.id)}"] .bar`)?.classList.remove('stalled');
    }
  });
  // After a dropped connection the stream reconnects by itself; reload what may have been missed.
  events.addEventListener('open', () => void loadAll().catch(showProblem));
}

function signedOut(problem?: string): void {
  // Another page of this origin signs in (a new login link opened in another tab): start again with it.
  onCredentialChange(() => location.reload());
  replace(
    root,
    h(
      'main',
      { class: 'signed-out' },
      h('h1', {}, 'Sign in to Backlot'),
      problem ? h('p', { class: 'error', role: 'alert' }, problem) : null,
      h('p', {}, 'This page needs the launcher’s sign-in. Run '),
      h('pre', {}, h('code', {}, 'bin/backlot login-url')),
      h('p', {}, 'and open the link it prints (it works once, for two minutes).'),
    ),
  );
}

async function boot(): Promise<void> {
  // On /login?code=...: the code becomes this origin's credential (lib/credential.ts).
  const signIn = await completeSignIn();
  if (signIn.kind === 'failed') return signedOut(signIn.message);
  if (!credential()) return signedOut();
  replace(
    root,
    h('header', { class: 'top' }, h('h1', {}, 'Backlot'), h('span', { class: 'muted' }, 'Your local studios')),
    problem,
    h('main', { class: 'columns' },
      h('section', { class: 'panel', 'aria-labelledby': 'studios-title' }, h('h2', { id: 'studios-title' }, 'Studios'), installForm(), studioList),
      h('section', { class: 'panel', 'aria-labelledby': 'jobs-title' }, h('h2', { id: 'jobs-title' }, 'Jobs'), jobList, jobDetails),
      gallery.element,
      disk.element,
    ),
    h('div', { id: 'announcer', class: 'visually-hidden', role: 'status', 'aria-live': 'polite' }),
  );
  try {
    await loadAll();
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 401) return signedOut();
    showProblem(err);
  }
  gallery.start();
  showLinkedItem();
  window.addEventListener('hashchange', showLinkedItem);
  onTailReady(renderJobs);
  connect();
  void disk.load();
  setInterval(tick, 1000);
}

/** `/#gallery/<id>` (the editor's link to an export's item) opens that item's details. */
function showLinkedItem(): void {
  const m = /^#gallery\/([0-9A-Za-z_-]{1,64})$/.exec(location.hash);
  if (m) gallery.openItem(m[1]!).catch(showProblem);
}

void boot();
