import { call } from '../lib/api';
import { announce, h } from '../lib/dom';
import { mergeByTime } from '../lib/merge';
import { frameScheduler, syncChildren } from './frame';
import { JobLogView, studioLogSource } from './job-log';
import { act, showProblem } from './problem';
import { onStudioTailReady, retryStudio, studioFailureBlock } from './studio-failure';
import { confirmUpdate } from './update';
import type { Studio } from '../lib/api-types';

/**
 * The launcher's studios list: state (every installed studio by id) changed by the
 * list read and by `studio` events, and one render per animation frame that rebuilds
 * only the rows of studios that changed (renderer/README.md "Launcher: jobs and disk": the same rhythm as
 * the jobs list), so a burst of studio events cannot hold the page. Each card shows
 * where the studio lives (its origin, as a link), why it failed, and its Console (its
 * own output, live, through the job log reader).
 */

export type { Studio };

const BUSY = ['installing', 'starting', 'stopping', 'uninstalling'];
const LIVE = ['starting', 'running', 'stopping'];

const studios = new Map<string, Studio>();
/** Studios whose row must be rebuilt at the next frame. */
const pending = new Set<string>();
const rows = new Map<string, HTMLLIElement>();
/** Open consoles by studio: the same view across rebuilds of its row (its lines and scroll stay). */
const consoles = new Map<string, JobLogView>();
let listChanged = true;
const listeners: (() => void)[] = [];

export const studioList = h('ul', { class: 'studios', 'aria-label': 'Installed studios' });
const empty = h(
  'li',
  { class: 'empty' },
  'No studio is installed yet. Install one of the examples below with one click, or a studio of your own from its folder.',
);
const schedule = frameScheduler(render);

onStudioTailReady((id) => {
  pending.add(id);
  schedule();
});

export function studioById(id: string): Studio | undefined {
  return studios.get(id);
}

/** Called after a render in which a studio was added, removed or changed (names and versions show in the jobs list). */
export function onStudiosChanged(fn: () => void): void {
  listeners.push(fn);
}

/** Every heavy studio's row shows whether another heavy one blocks it: they change together. */
function touchHeavy(): void {
  for (const s of studios.values()) if (s.heavy) pending.add(s.id);
}

/**
 * The list read (`GET /launcher/studios`, complete) merged by time into what events
 * said: a studio an event changed while the list was read keeps the event's state, and
 * one the list lacks goes unless an event named it after the read began (`since`, this
 * page's clock when the read was sent).
 */
export function setStudios(list: Studio[], since = 0): void {
  const listed = new Set(list.map((s) => s.id));
  for (const id of [...studios.keys()]) {
    if (!listed.has(id) && (seenAt.get(id) ?? 0) < since) {
      studios.delete(id);
      pending.add(id);
      listChanged = true;
    }
  }
  const live = list.filter((s) => (removedAt.get(s.id) ?? -1) < since);
  for (const id of mergeByTime(studios, live)) pending.add(id);
  touchHeavy();
  listChanged = true;
  schedule();
}

/** When an event last named each studio, and when one said it was removed (this page's clock). */
const seenAt = new Map<string, number>();
const removedAt = new Map<string, number>();

/** A `studio` event: the studio as it is now, or gone. */
export function studioEvent(s: Studio & { removed?: boolean }): void {
  const before = studios.get(s.id);
  const now = performance.now();
  seenAt.set(s.id, now);
  if (s.removed) {
    studios.delete(s.id);
    removedAt.set(s.id, now);
    consoles.get(s.id)?.close();
    consoles.delete(s.id);
  } else {
    studios.set(s.id, s);
    removedAt.delete(s.id);
  }
  if (!before || !studios.has(s.id) || before.name !== s.name) listChanged = true;
  if (s.heavy || before?.heavy) touchHeavy();
  pending.add(s.id);
  schedule();
}

function render(): void {
  if (pending.size === 0 && !listChanged) return;
  for (const id of pending) {
    const s = studios.get(id);
    const old = rows.get(id);
    if (!s) {
      rows.delete(id);
      continue;
    }
    const row = studioRow(s);
    rows.set(id, row);
    if (old?.isConnected) swapRow(old, row);
  }
  pending.clear();
  if (listChanged) {
    listChanged = false;
    const list = [...studios.values()].sort((a, b) => a.name.localeCompare(b.name));
    syncChildren(studioList, list.length === 0 ? [empty] : list.map((s) => rows.get(s.id)!));
  }
  for (const fn of listeners) fn();
}

/** Puts a rebuilt row in place of the old one; a focused control gets its focus back in the new row (by `data-focus`, else the row). */
function swapRow(old: HTMLElement, row: HTMLElement): void {
  const active = document.activeElement;
  const focus = active instanceof HTMLElement && old.contains(active) ? (active.dataset.focus ?? '') : null;
  old.replaceWith(row);
  if (focus === null) return;
  const target = focus ? row.querySelector<HTMLElement>(`[data-focus="${CSS.escape(focus)}"]`) : null;
  if (target && !target.hasAttribute('disabled')) target.focus({ preventScroll: true });
  else row.focus({ preventScroll: true });
}

/** The heavy studio that keeps `s` from starting (one heavy studio runs at a time), if any. */
function blockingHeavy(s: Studio): Studio | undefined {
  if (!s.heavy || LIVE.includes(s.state)) return undefined;
  return [...studios.values()].find((o) => o.id !== s.id && o.heavy && LIVE.includes(o.state));
}

/** `http://sketchpad.localhost:7391/` shown without its scheme. */
const hostOf = (origin: string) => origin.replace(/^https?:\/\//, '');

function studioRow(s: Studio): HTMLLIElement {
  const running = s.state === 'running';
  const busy = BUSY.includes(s.state);
  const blocker = blockingHeavy(s);
  const start = h('button', { type: 'button', disabled: busy || !s.installed || LIVE.includes(s.state) || !!blocker, 'data-focus': 'start' }, 'Start');
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
  const view = consoles.get(s.id);
  const consoleToggle = h(
    'button',
    { type: 'button', 'data-focus': 'console', 'aria-expanded': String(!!view), 'aria-controls': `console-${s.id}` },
    view ? 'Hide console' : 'Console',
  );
  consoleToggle.addEventListener('click', () => toggleConsole(s));
  const where = running
    ? h('a', { class: 'origin', href: `${s.origin}/`, target: '_blank', rel: 'noopener', title: `Open ${s.name}` }, hostOf(`${s.origin}/`))
    : h('span', { class: 'origin muted' }, hostOf(`${s.origin}/`));
  return h(
    'li',
    { class: 'studio', 'data-studio': s.id, 'data-key': s.id, 'data-state': s.state, tabindex: -1 },
    h(
      'div',
      { class: 'studio-head' },
      h('strong', {}, s.name),
      h('span', { class: 'muted' }, ` ${s.version}`),
      s.heavy ? h('span', { class: 'badge', title: 'Heavy: it needs much memory, so one heavy studio runs at a time' }, 'heavy') : null,
    ),
    h('div', { class: 'studio-meta' }, h('span', { class: `state state-${s.state}` }, s.state), where),
    blocker
      ? h(
          'p',
          { class: 'blocked', 'data-blocked-by': blocker.id },
          `${s.name} is a heavy studio, and ${blocker.name} (also heavy) is ${blocker.state}: only one heavy studio runs at a time, so both don't fill your memory. Stop ${blocker.name} to start ${s.name}.`,
        )
      : null,
    s.state === 'failed' ? studioFailureBlock(s, (button) => void act(button, () => retryStudio(s))) : null,
    h('div', { class: 'actions' }, open, start, stop, consoleToggle, update, remove),
    view ? consolePanel(s, view) : null,
  );
}

function consolePanel(s: Studio, view: JobLogView): HTMLElement {
  return h('div', { class: 'console', id: `console-${s.id}`, 'data-console': s.id }, view.element);
}

/** Opens (or closes) the studio's console below its card: its output, replayed then live. */
function toggleConsole(s: Studio): void {
  const open = consoles.get(s.id);
  if (open) {
    open.close();
    consoles.delete(s.id);
  } else {
    const view = new JobLogView(s.id, `${s.name} console`, {}, studioLogSource(s.id));
    consoles.set(s.id, view);
    view.open();
  }
  pending.add(s.id);
  render();
  if (!open) consoles.get(s.id)?.focus({ preventScroll: true });
}

function confirmUninstall(s: Studio): void {
  const purge = h('input', { type: 'checkbox', id: 'purge', 'aria-describedby': 'purge-hint' });
  const dialog = h(
    'dialog',
    { class: 'confirm', 'aria-labelledby': 'uninstall-title' },
    h('h2', { id: 'uninstall-title' }, `Uninstall ${s.name}?`),
    h('p', {}, 'Its program files are removed. What it made (its gallery, records, documents and assets) stays unless you also delete its data.'),
    h('label', { class: 'check' }, purge, ' Also delete its data'),
    h(
      'p',
      { class: 'hint muted', id: 'purge-hint' },
      'Its gallery items, records, documents (shared ones stay), sessions, sequences and folders go; files no other studio uses can then be reclaimed under Disk.',
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
