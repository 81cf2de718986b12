import { completeSignIn, credential, onCredentialChange } from '../lib/credential';
import { EventStream } from '../lib/sse';
import { ApiFailure, call, query, type Page } from '../lib/api';
import { h, replace } from '../lib/dom';
import { galleryPanel } from './gallery';
import type { ItemEvent } from './gallery/types';
import type { Handoff } from '../lib/api-types';
import { DiskPanel } from './disk';
import { JobsList, PER_STUDIO, type Job } from './jobs';
import { problem, showProblem } from './problem';
import { examplesSection, installForm } from './install';
import { onStudiosChanged, setStudios, studioById, studioEvent, studioList, type Studio } from './studios';
import { diagnosticsControl } from './diagnostics';
import { handoffsPanels } from './handoffs';

/**
 * The launcher UI: studios (install, start, stop, open, uninstall) and every studio's
 * jobs with progress and Cancel, kept current by the launcher's event channel
 * (`/api/v1/launcher/events`), never by polling. The lists keep their own state and
 * render at most once per animation frame (studios.ts, jobs.ts; renderer/README.md "Launcher: jobs and disk").
 */

const root = document.getElementById('app')!;
const gallery = galleryPanel();
const disk = new DiskPanel((id) => studioById(id)?.name);
const handoffs = handoffsPanels();

/** Runs `work` now, or once more after the run in flight: a burst of finished jobs is one or two reloads, not one each. */
function coalesced(work: () => Promise<unknown> | void): () => void {
  let running = false;
  let again = false;
  const run = (): void => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    Promise.resolve()
      .then(work)
      .catch(() => undefined) // each panel shows its own failure
      .finally(() => {
        running = false;
        if (again) {
          again = false;
          run();
        }
      });
  };
  return run;
}

const reloadDisk = coalesced(() => disk.load());
/** Disk follows the gallery's item events, read at most once a second (a burst of saves is one or two reads). */
const reloadDiskSoon = throttled(reloadDisk, 1000);
const refreshGallery = coalesced(() => gallery.refresh());

/** Runs `work` at once, then at most once per `ms` while calls keep coming (the last call always gets its run). */
function throttled(work: () => void, ms: number): () => void {
  let last = 0;
  let timer = 0;
  return () => {
    if (timer) return;
    const wait = Math.max(0, last + ms - Date.now());
    timer = window.setTimeout(() => {
      timer = 0;
      last = Date.now();
      work();
    }, wait);
  };
}

const jobs = new JobsList({
  studio: (id) => studioById(id),
  finished(job, before) {
    reloadDisk(); // an export adds an asset, an uninstall may free some
    // A finished export (or any job that may have added items) shows in the gallery at once.
    if (job.state === 'succeeded' && before?.state !== 'succeeded') refreshGallery();
  },
});
onStudiosChanged(() => jobs.studiosChanged());

// ---- live ------------------------------------------------------------------

async function loadAll(): Promise<void> {
  const since = performance.now(); // the studio list is merged by time with the events that arrive meanwhile
  const [s, j] = await Promise.all([
    call<Page<Studio>>(`/launcher/studios${query({ limit: 500 })}`),
    call<Page<Job>>(`/launcher/jobs${query({ limit: 100 })}`),
  ]);
  setStudios(s.items, since);
  jobs.merge(j.items);
  // The newest jobs overall may all be one busy studio's: each studio's own newest are read
  // too, so no studio's running jobs are missing after a load (renderer/README.md "Launcher: jobs and disk").
  const each = await Promise.all(
    s.items.map((st) => call<Page<Job>>(`/launcher/jobs${query({ studio: st.id, limit: PER_STUDIO })}`).catch(() => null)),
  );
  for (const page of each) if (page) jobs.merge(page.items);
}

function connect(): void {
  const events = new EventStream('/api/v1/launcher/events');
  // Each event only changes state; the lists render at the next animation frame.
  events.addEventListener('studio', (e) => {
    const s = JSON.parse((e as MessageEvent<string>).data) as Studio & { removed?: boolean };
    studioEvent(s);
    handoffs.studioEvent(s); // "Allow and open" waits for its recipient to run
  });
  // A handoff asked for, answered or withdrawn: the Requests region applies them once per frame.
  events.addEventListener('handoff', (e) => handoffs.handoffEvent(JSON.parse((e as MessageEvent<string>).data) as Handoff));
  events.addEventListener('job', (e) => jobs.jobEvent(JSON.parse((e as MessageEvent<string>).data) as Job));
  // Any studio's item made, changed or deleted (purges too): the gallery applies them once per frame, Disk reads again.
  events.addEventListener('item', (e) => {
    gallery.itemEvent(JSON.parse((e as MessageEvent<string>).data) as ItemEvent);
    reloadDiskSoon();
  });
  // A job wrote log lines (at most one event per job every 2 s): it is not stalled.
  events.addEventListener('job_output', (e) => jobs.outputEvent(JSON.parse((e as MessageEvent<string>).data) as { id: string; text: string }));
  // After a dropped connection the stream reconnects by itself; reload what may have been missed.
  // The first open reads the newest items too: one made between the gallery's first read and the
  // subscription would otherwise be missed.
  events.addEventListener('open', () => {
    void loadAll().catch(showProblem);
    refreshGallery(); // items made while the stream was down
    handoffs.load(); // requests asked or answered while it was down
    reloadDiskSoon();
  });
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
    h('header', { class: 'top' }, h('h1', {}, 'Backlot'), h('span', { class: 'muted' }, 'Your local studios'), h('a', { href: '/editor/', class: 'editor-link' }, 'Editor'), diagnosticsControl()),
    problem,
    h('main', { class: 'columns' },
      handoffs.requests,
      h('section', { class: 'panel', 'aria-labelledby': 'studios-title' }, h('h2', { id: 'studios-title' }, 'Studios'), installForm(), studioList, examplesSection()),
      h('section', { class: 'panel', 'aria-labelledby': 'jobs-title' }, h('h2', { id: 'jobs-title' }, 'Jobs'), jobs.list, jobs.details),
      gallery.element,
      disk.element,
      handoffs.permissions,
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
  reloadDisk();
  setInterval(() => jobs.tick(), 1000);
}

/** `/#gallery/<id>` (the editor's link to an export's item) opens that item's details. */
function showLinkedItem(): void {
  const m = /^#gallery\/([0-9A-Za-z_-]{1,64})$/.exec(location.hash);
  if (m) gallery.openItem(m[1]!).catch(showProblem);
}

void boot();
