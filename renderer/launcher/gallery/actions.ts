import { ApiFailure, call } from '../../lib/api';
import { announce } from '../../lib/dom';
import { mediaUrl } from '../../lib/media';
import { assetInfo } from './media';
import { removeFromOrder, targets, type GalleryState } from './state';
import type { GalleryList } from './list';
import type { Item, ItemChange } from './types';

/**
 * The gallery's commands. Each is named, has its key binding (shown in the
 * panel's key list) and acts on the selection, else on the focused tile; the
 * views call the same commands from their buttons. Changes go through
 * `PATCH` / `DELETE /launcher/gallery/items/{id}`, as the studio that owns the item.
 *
 * Delete waits out an undo window (UNDO_MS) before anything is sent: the items
 * leave the grid at once, Undo puts them back, and only when the window closes
 * are the deletes sent. A page closed or reloaded within the window sends
 * nothing, so the items are still there: an undo can never lose an item.
 */

export const UNDO_MS = 6000;

export interface Command {
  id: string;
  label: string;
  /** As shown in the key list. */
  keys: string;
  /** Whether a keydown is this command's binding. */
  matches(e: KeyboardEvent): boolean;
  run(): void;
}

export interface ActionHooks {
  schedule(): void;
  list: GalleryList;
  /** A failure to show in the panel (and to screen readers). */
  problem(message: string): void;
  openDetails(index: number): void;
  openViewer(index: number): void;
  /** Moves the tag field of the selection bar into view and focuses it. */
  focusTagField(): void;
}

const plain = (e: KeyboardEvent) => !e.ctrlKey && !e.metaKey && !e.altKey;
const primary = (e: KeyboardEvent) => (e.ctrlKey || e.metaKey) && !e.altKey;
const key = (k: string) => (e: KeyboardEvent) => plain(e) && !e.shiftKey && e.key.toLowerCase() === k;

export function describe(err: unknown): string {
  return err instanceof ApiFailure ? `${err.message} (${err.code})` : err instanceof Error ? err.message : String(err);
}

export function createActions(state: GalleryState, hooks: ActionHooks) {
  /** Changes items one by one (a PATCH each); each answer replaces its record. */
  async function change(items: Item[], what: ItemChange, done: string): Promise<void> {
    if (items.length === 0) return;
    const failed: string[] = [];
    await Promise.all(
      items.map((item) =>
        call<Item>(`/launcher/gallery/items/${encodeURIComponent(item.id)}`, {
          method: 'PATCH',
          body: what,
          contentType: 'application/merge-patch+json',
        }).then(
          (next) => {
            state.records.set(next.id, next);
          },
          (err) => failed.push(describe(err)),
        ),
      ),
    );
    hooks.schedule();
    if (failed.length > 0) hooks.problem(`${failed.length} of ${items.length} could not be changed: ${failed[0]}`);
    else announce(done);
  }

  function star(items: Item[] = targets(state)): Promise<void> {
    // Any unstarred one: star them all; all starred: unstar them.
    const on = items.some((i) => !i.starred);
    return change(items, { starred: on }, `${items.length === 1 ? 'Item' : `${items.length} items`} ${on ? 'starred' : 'unstarred'}`);
  }

  function addTags(tags: string[], items: Item[] = targets(state)): Promise<void> {
    if (tags.length === 0 || items.length === 0) return Promise.resolve();
    return Promise.all(
      items.map((item) => change([item], { tags: [...new Set([...item.tags, ...tags])] }, '')),
    ).then(() => announce(`Tagged ${items.length === 1 ? 'the item' : `${items.length} items`} ${tags.join(', ')}`));
  }

  function edit(item: Item, what: ItemChange): Promise<void> {
    return change([item], what, 'Saved');
  }

  /** Takes the items out of the grid now; sends the deletes when the undo window closes. */
  function remove(items: Item[] = targets(state)): void {
    if (items.length === 0) return;
    sendPending();
    const index = new Map(state.order.map((id, i) => [id, i]));
    const gone = items.filter((i) => index.has(i.id)).map((item) => ({ item, index: index.get(item.id)! }));
    if (gone.length === 0) return;
    removeFromOrder(state, new Set(gone.map((g) => g.item.id)));
    if (state.viewing !== null && gone.some((g) => g.item.id === state.viewing)) state.viewing = state.order[Math.min(gone[0]!.index, state.order.length - 1)] ?? null;
    state.pendingDelete = { items: gone, timer: window.setTimeout(sendPending, UNDO_MS), sent: false };
    announce(`Deleted ${gone.length === 1 ? '1 item' : `${gone.length} items`}. Undo with Ctrl+Z.`);
    hooks.schedule();
  }

  /** Undo: the items waiting to be deleted go back where they were, selected. */
  function undo(): void {
    const pending = state.pendingDelete;
    if (!pending || pending.sent) return;
    clearTimeout(pending.timer);
    state.pendingDelete = null;
    restore(pending.items);
    state.selected = new Set(pending.items.map((p) => p.item.id));
    state.active = Math.min(...pending.items.map((p) => p.index));
    announce(`Restored ${pending.items.length === 1 ? '1 item' : `${pending.items.length} items`}`);
    hooks.schedule();
  }

  function restore(items: { item: Item; index: number }[]): void {
    const sorted = [...items].sort((a, b) => a.index - b.index);
    for (const { item, index } of sorted) {
      if (state.order.includes(item.id)) continue;
      state.records.set(item.id, item);
      state.order.splice(Math.min(index, state.order.length), 0, item.id);
    }
  }

  /** The undo window closed (or another delete began): the deletes are sent now. */
  function sendPending(): void {
    const pending = state.pendingDelete;
    if (!pending || pending.sent) return;
    clearTimeout(pending.timer);
    pending.sent = true;
    state.pendingDelete = null;
    hooks.schedule();
    const failed: { item: Item; index: number }[] = [];
    let why = '';
    void Promise.all(
      pending.items.map((p) =>
        call(`/launcher/gallery/items/${encodeURIComponent(p.item.id)}`, { method: 'DELETE' }).catch((err) => {
          // Already gone (deleted elsewhere, purged): what was asked for.
          if (err instanceof ApiFailure && err.status === 404) return;
          failed.push(p);
          why = describe(err);
        }),
      ),
    ).then(() => {
      for (const p of pending.items) if (!failed.includes(p)) state.records.delete(p.item.id);
      if (failed.length > 0) {
        restore(failed);
        hooks.problem(`${failed.length} ${failed.length === 1 ? 'item was' : 'items were'} not deleted: ${why}`);
      }
      hooks.schedule();
    });
  }

  async function download(item: Item | undefined = targets(state)[0]): Promise<void> {
    if (!item) return;
    try {
      const [info, url] = await Promise.all([assetInfo(item.asset_id), mediaUrl(item.asset_id, 'file', true)]);
      if (!url) throw new Error('No studio can read this file any more.');
      // Same origin: the browser keeps the `download` name, the file name the studio gave it.
      const a = Object.assign(document.createElement('a'), { href: url, download: info?.filename ?? `${item.id}` });
      a.hidden = true;
      document.body.append(a);
      a.click();
      a.remove();
      announce(`Downloading ${a.download}`);
    } catch (err) {
      hooks.problem(`The download did not start: ${describe(err)}`);
    }
  }

  async function copy(text: string, what: string): Promise<void> {
    try {
      await navigator.clipboard.writeText(text);
      announce(`${what} copied`);
    } catch (err) {
      hooks.problem(`${what} could not be copied: ${describe(err)}`);
    }
  }

  const promptOf = (item: Item) => (typeof item.params.prompt === 'string' ? item.params.prompt : null);
  function copyPrompt(item: Item | undefined = targets(state)[0]): Promise<void> {
    const prompt = item ? promptOf(item) : null;
    if (prompt === null) {
      announce('This item has no prompt');
      return Promise.resolve();
    }
    return copy(prompt, 'Prompt');
  }
  function copyParams(item: Item | undefined = targets(state)[0]): Promise<void> {
    if (!item) return Promise.resolve();
    return copy(JSON.stringify(item.params, null, 2), 'Parameters');
  }

  function selectAll(): void {
    state.selected = new Set(state.order);
    announce(`${state.selected.size} items selected`);
    hooks.schedule();
  }

  function clearSelection(): boolean {
    if (state.selected.size === 0) return false;
    state.selected.clear();
    state.anchor = null;
    announce('Selection cleared');
    hooks.schedule();
    return true;
  }

  function toggle(index: number): void {
    const id = state.order[index];
    if (id === undefined) return;
    if (state.selected.has(id)) state.selected.delete(id);
    else state.selected.add(id);
    state.anchor = index;
    hooks.schedule();
  }

  /** Selects from the anchor (or the tab stop) to `index`, as Shift-click and Shift+arrows do. */
  function extendTo(index: number, from = state.anchor ?? state.active): void {
    state.anchor = from;
    const [a, b] = from <= index ? [from, index] : [index, from];
    state.selected = new Set(state.order.slice(a, b + 1));
    hooks.schedule();
  }

  const commands: Command[] = [
    { id: 'details', label: 'Details and editing', keys: 'Enter', matches: (e) => plain(e) && !e.shiftKey && e.key === 'Enter', run: () => hooks.openDetails(state.active) },
    { id: 'view', label: 'View full size', keys: 'V', matches: key('v'), run: () => hooks.openViewer(state.active) },
    { id: 'select', label: 'Select or unselect', keys: 'Space', matches: (e) => plain(e) && !e.shiftKey && e.key === ' ', run: () => toggle(state.active) },
    { id: 'select-all', label: 'Select all loaded items', keys: 'Ctrl+A', matches: (e) => primary(e) && e.key.toLowerCase() === 'a', run: selectAll },
    { id: 'clear', label: 'Clear the selection', keys: 'Esc', matches: (e) => e.key === 'Escape' && state.selected.size > 0, run: () => void clearSelection() },
    { id: 'star', label: 'Star or unstar', keys: 'S', matches: key('s'), run: () => void star() },
    { id: 'tag', label: 'Add a tag', keys: 'T', matches: key('t'), run: () => hooks.focusTagField() },
    { id: 'delete', label: 'Delete (with Undo)', keys: 'Delete', matches: (e) => plain(e) && (e.key === 'Delete' || e.key === 'Backspace'), run: () => remove() },
    { id: 'undo', label: 'Undo the delete', keys: 'Ctrl+Z', matches: (e) => primary(e) && !e.shiftKey && e.key.toLowerCase() === 'z', run: undo },
    { id: 'download', label: 'Download', keys: 'D', matches: key('d'), run: () => void download() },
    { id: 'copy-prompt', label: 'Copy the prompt', keys: 'C', matches: key('c'), run: () => void copyPrompt() },
    { id: 'copy-params', label: 'Copy the parameters', keys: 'Shift+C', matches: (e) => plain(e) && e.shiftKey && e.key.toLowerCase() === 'c', run: () => void copyParams() },
  ];

  return { commands, star, addTags, edit, remove, undo, sendPending, download, copyPrompt, copyParams, selectAll, clearSelection, toggle, extendTo };
}

export type GalleryActions = ReturnType<typeof createActions>;
