import { call } from '../lib/api';
import { announce, h } from '../lib/dom';
import { frameScheduler, syncChildren } from './frame';
import { act, showProblem } from './problem';
import { confirmUpdate } from './update';

/**
 * The launcher's studios list: state (every installed studio by id) changed by the
 * list read and by `studio` events, and one render per animation frame that rebuilds
 * only the rows of studios that changed (renderer/README.md §Jobs: the same rhythm as
 * the jobs list), so a burst of studio events cannot hold the page.
 */

export interface Studio {
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

interface BacklotBridge {
  pickFolder(): Promise<string | null>;
}

const BUSY = ['installing', 'starting', 'stopping', 'uninstalling'];

const studios = new Map<string, Studio>();
/** Studios whose row must be rebuilt at the next frame. */
const pending = new Set<string>();
const rows = new Map<string, HTMLLIElement>();
let listChanged = true;
const listeners: (() => void)[] = [];

export const studioList = h('ul', { class: 'studios', 'aria-label': 'Installed studios' });
const empty = h('li', { class: 'empty' }, 'No studio is installed yet. Install one from a folder above: try examples/studios/sketchpad in the Backlot folder.');
const schedule = frameScheduler(render);

export function studioById(id: string): Studio | undefined {
  return studios.get(id);
}

/** Called after a render in which a studio was added, removed or changed (names and versions show in the jobs list). */
export function onStudiosChanged(fn: () => void): void {
  listeners.push(fn);
}

/** The list read (`GET /launcher/studios`) replaces what is known. */
export function setStudios(list: Studio[]): void {
  for (const id of studios.keys()) pending.add(id);
  studios.clear();
  for (const s of list) {
    studios.set(s.id, s);
    pending.add(s.id);
  }
  listChanged = true;
  schedule();
}

/** A `studio` event: the studio as it is now, or gone. */
export function studioEvent(s: Studio & { removed?: boolean }): void {
  const before = studios.get(s.id);
  if (s.state === 'uninstalled' || s.removed) studios.delete(s.id);
  else studios.set(s.id, s);
  if (!before || !studios.has(s.id) || before.name !== s.name) listChanged = true;
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

function studioRow(s: Studio): HTMLLIElement {
  const running = s.state === 'running';
  const busy = BUSY.includes(s.state);
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
    { class: 'studio', 'data-studio': s.id, 'data-key': s.id, 'data-state': s.state, tabindex: -1 },
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

export function installForm(): HTMLFormElement {
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
  const browse = bridge ? h('button', { type: 'button' }, 'Choose folder…') : null;
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
