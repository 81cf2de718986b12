import { ApiFailure, call, query, type Page } from '../lib/api';
import { announce, h, renderKeyed, replace } from '../lib/dom';
import { duration } from '../lib/format';
import { confirmUpdate } from './update';
import { galleryPanel } from './gallery';

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
  return h(
    'li',
    { class: 'job', 'data-job': job.id, 'data-state': job.state, tabindex: -1 },
    h(
      'div',
      { class: 'job-head' },
      h('strong', {}, job.title),
      h('span', { class: 'badge' }, job.kind),
      h('span', { class: 'muted' }, job.studio_id),
    ),
    progressBar(job),
    h(
      'div',
      { class: 'job-meta' },
      h('span', { class: `state state-${job.state}` }, asked && !finished ? 'cancelling' : job.state),
      h('span', { class: 'muted elapsed', 'data-since': since, 'data-end': job.finished_at ? end : '' }, duration((end - since) / 1000)),
      job.last_error ? h('span', { class: 'error' }, job.last_error) : null,
      cancel,
    ),
  );
}

function renderJobs(): void {
  const list = [...jobs.values()].sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : a.id < b.id ? 1 : -1));
  if (list.length === 0) {
    replace(jobList, h('li', { class: 'empty' }, 'No jobs yet. Installs, builds, downloads and exports show here.'));
    return;
  }
  renderKeyed(jobList, list.slice(0, 200), (j) => j.id, jobRow);
}

// ---- live ------------------------------------------------------------------

async function loadAll(): Promise<void> {
  const [s, j] = await Promise.all([
    call<Page<Studio>>(`/launcher/studios${query({ limit: 500 })}`),
    call<Page<Job>>(`/launcher/jobs${query({ limit: 100 })}`),
  ]);
  studios.clear();
  for (const st of s.items) studios.set(st.id, st);
  jobs.clear();
  for (const job of j.items) jobs.set(job.id, job);
  renderStudios();
  renderJobs();
}

function connect(): void {
  const events = new EventSource('/api/v1/launcher/events');
  events.addEventListener('studio', (e) => {
    const s = JSON.parse((e as MessageEvent<string>).data) as Studio & { removed?: boolean };
    if (s.state === 'uninstalled' || s.removed) studios.delete(s.id);
    else studios.set(s.id, s);
    renderStudios();
  });
  events.addEventListener('job', (e) => {
    const job = JSON.parse((e as MessageEvent<string>).data) as Job;
    const before = jobs.get(job.id);
    jobs.set(job.id, job);
    if (FINISHED.has(job.state)) cancelling.delete(job.id);
    renderJobs();
    // A finished export (or any job that may have added items) shows in the gallery at once.
    if (job.state === 'succeeded' && before?.state !== 'succeeded') gallery.refresh();
  });
  // After a dropped connection EventSource reconnects by itself; reload what may have been missed.
  events.addEventListener('open', () => void loadAll().catch(showProblem));
}

function signedOut(): void {
  replace(
    root,
    h(
      'main',
      { class: 'signed-out' },
      h('h1', {}, 'Sign in to Backlot'),
      h('p', {}, 'This page needs the launcher’s sign-in. Run '),
      h('pre', {}, h('code', {}, 'bin/backlot login-url')),
      h('p', {}, 'and open the link it prints (it works once, for two minutes).'),
    ),
  );
}

async function boot(): Promise<void> {
  replace(
    root,
    h('header', { class: 'top' }, h('h1', {}, 'Backlot'), h('span', { class: 'muted' }, 'Your local studios')),
    problem,
    h('main', { class: 'columns' },
      h('section', { class: 'panel', 'aria-labelledby': 'studios-title' }, h('h2', { id: 'studios-title' }, 'Studios'), installForm(), studioList),
      h('section', { class: 'panel', 'aria-labelledby': 'jobs-title' }, h('h2', { id: 'jobs-title' }, 'Jobs'), jobList),
      gallery.element,
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
  connect();
  // Elapsed times of running jobs move on their own (text only: nothing is re-rendered).
  setInterval(() => {
    for (const el of jobList.querySelectorAll<HTMLElement>('.elapsed[data-end=""]')) {
      el.textContent = duration((Date.now() - Number(el.dataset.since)) / 1000);
    }
  }, 1000);
}

/** `/#gallery/<id>` (the editor's link to an export's item) opens that item's details. */
function showLinkedItem(): void {
  const m = /^#gallery\/([0-9A-Za-z_-]{1,64})$/.exec(location.hash);
  if (m) gallery.openItem(m[1]!).catch(showProblem);
}

void boot();
