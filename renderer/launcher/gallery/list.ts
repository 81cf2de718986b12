import { ApiFailure, call, type Page } from '../../lib/api';
import { announce } from '../../lib/dom';
import { removeFromOrder, type GalleryState } from './state';
import type { Filters, Item, ItemEvent } from './types';

/**
 * The list: pages by cursor (`GET /launcher/gallery/items`), new items put in
 * front, and the `item` events of `/launcher/events` applied in batches: the
 * events of one animation frame are one change of state (a thousand
 * `deleted` events are one filter of the list), one read of the newest page
 * for any number of `created` ones, and one read per changed item shown
 * (at most UPDATE_READS at a time); the same coalescing the job list uses
 * for `job` events, so a storm of events never freezes the page.
 */

/** Items per page: enough to fill a tall screen twice. */
export const PAGE_SIZE = 120;
/** Item reads in flight at once for `updated` events. */
const UPDATE_READS = 4;

export interface ListHooks {
  filters(): Filters;
  schedule(): void;
  /** A record arrived (the filter fields learn its studio and tags). */
  remembered(item: Item): void;
  /** The list restarted from its first page (the grid scrolls to the top). */
  restarted(): void;
  /** `count` new items went in front of the list (the grid keeps the same item in view). */
  prepended(count: number): void;
}

export function listPath(f: Filters, pageCursor: string | null, limit = PAGE_SIZE): string {
  const q = new URLSearchParams();
  if (f.q) q.set('q', f.q);
  for (const tag of f.tags) q.append('tag', tag);
  if (f.studio) q.set('studio', f.studio);
  if (f.starred) q.set('starred', 'true');
  q.set('limit', String(limit));
  if (pageCursor) q.set('cursor', pageCursor);
  return `/launcher/gallery/items?${q}`;
}

export function createList(state: GalleryState, hooks: ListHooks) {
  let controller = new AbortController();
  let refreshing: Promise<void> | null = null;
  let refreshAgain = false;
  const events: ItemEvent[] = [];
  let eventsQueued = false;
  const toRead = new Set<string>();
  let reading = 0;

  function remember(item: Item): void {
    const known = state.records.get(item.id);
    // The same version keeps its record: its tile is not drawn again.
    if (known && known.updated_at === item.updated_at && known.starred === item.starred) return;
    state.records.set(item.id, item);
    hooks.remembered(item);
  }

  /** A new list from the first page: the previous request is aborted, its answer never shown. */
  function reload(): void {
    controller.abort();
    controller = new AbortController();
    state.generation++;
    state.order = [];
    state.cursor = null;
    state.done = false;
    state.loading = false;
    state.failure = null;
    state.active = 0;
    state.selected.clear();
    state.anchor = null;
    hooks.restarted();
    hooks.schedule();
    void loadMore();
  }

  async function loadMore(): Promise<void> {
    if (state.loading || state.done || state.failure) return;
    state.loading = true;
    const gen = state.generation;
    hooks.schedule();
    try {
      const page = await call<Page<Item>>(listPath(hooks.filters(), state.cursor), { signal: controller.signal });
      if (gen !== state.generation) return;
      const seen = new Set(state.order);
      const hidden = pendingIds(state);
      for (const item of page.items) {
        remember(item);
        if (!seen.has(item.id) && !hidden.has(item.id)) state.order.push(item.id);
      }
      state.cursor = page.next_cursor;
      state.done = state.cursor === null;
    } catch (err) {
      if ((err as Error).name === 'AbortError' || gen !== state.generation) return;
      state.failure = err;
    } finally {
      if (gen === state.generation) state.loading = false;
    }
    hooks.schedule();
  }

  /** New items in front: the newest page read again, joined to the list where they meet. One at a time; a call meanwhile reads once more after it. */
  function refresh(): Promise<void> {
    if (refreshing) {
      refreshAgain = true;
      return refreshing;
    }
    refreshing = readNewest().finally(() => {
      refreshing = null;
      if (refreshAgain) {
        refreshAgain = false;
        void refresh();
      }
    });
    return refreshing;
  }

  async function readNewest(): Promise<void> {
    state.stale = false;
    if (state.order.length === 0 && state.loading && !state.failure) return; // the first page is on its way
    // A filter the service refused (400) stays refused until it changes: a new item or a
    // reconnect does not ask again. A read that failed otherwise (the service was away) is retried.
    if (state.failure instanceof ApiFailure && state.failure.status === 400) return;
    if (state.order.length === 0 || state.failure) return reload();
    const gen = state.generation;
    const known = new Set(state.order);
    try {
      const page = await call<Page<Item>>(listPath(hooks.filters(), null), { signal: controller.signal });
      if (gen !== state.generation) return;
      const at = page.items.findIndex((i) => known.has(i.id));
      // Nothing of the list is on the newest page: more than a page arrived; start over.
      if (at < 0 && page.items.length > 0) return reload();
      const hidden = pendingIds(state);
      const fresh = (at < 0 ? page.items : page.items.slice(0, at)).filter((i) => !known.has(i.id) && !hidden.has(i.id));
      for (const item of page.items) remember(item);
      if (fresh.length > 0) {
        state.order = [...fresh.map((i) => i.id), ...state.order];
        state.active += fresh.length;
        hooks.prepended(fresh.length);
        announce(`${fresh.length} new ${fresh.length === 1 ? 'item' : 'items'} in the gallery`);
      }
      if (page.items.length === 0) state.done = true;
      hooks.schedule();
    } catch (err) {
      if ((err as Error).name !== 'AbortError' && gen === state.generation) {
        state.failure = err;
        hooks.schedule();
      }
    }
  }

  /** An `item` event: kept until the next frame, then applied with the others of that frame. */
  function itemEvent(event: ItemEvent): void {
    events.push(event);
    if (eventsQueued) return;
    eventsQueued = true;
    requestAnimationFrame(applyEvents);
  }

  function applyEvents(): void {
    eventsQueued = false;
    const batch = events.splice(0);
    const gone = new Set<string>();
    let created = false;
    for (const e of batch) {
      if (e.change === 'deleted') {
        gone.add(e.id);
        toRead.delete(e.id);
      } else if (e.change === 'created') {
        created = true;
        gone.delete(e.id);
      } else if (state.records.has(e.id) && !gone.has(e.id)) toRead.add(e.id);
    }
    if (gone.size > 0) {
      for (const id of gone) state.records.delete(id);
      // Deleted elsewhere while waiting out its Undo window: Undo has nothing to bring back.
      const pending = state.pendingDelete;
      if (pending) {
        pending.items = pending.items.filter((p) => !gone.has(p.item.id));
        if (pending.items.length === 0) {
          clearTimeout(pending.timer);
          state.pendingDelete = null;
        }
      }
      if (state.viewing !== null && gone.has(state.viewing)) state.viewing = null;
      removeFromOrder(state, gone);
    }
    if (created && state.started) void refresh();
    pump();
    hooks.schedule();
  }

  /** Reads changed items again, a few at a time. */
  function pump(): void {
    while (reading < UPDATE_READS && toRead.size > 0) {
      const id = toRead.values().next().value as string;
      toRead.delete(id);
      reading++;
      call<Item>(`/launcher/gallery/items/${encodeURIComponent(id)}`)
        .then(
          (item) => {
            if (state.records.has(item.id)) remember(item);
          },
          () => undefined, // deleted meanwhile: its `deleted` event removes it
        )
        .finally(() => {
          reading--;
          hooks.schedule();
          pump();
        });
    }
  }

  return { reload, loadMore, refresh, itemEvent, remember };
}

export type GalleryList = ReturnType<typeof createList>;

function pendingIds(state: GalleryState): Set<string> {
  return new Set(state.pendingDelete?.items.map((p) => p.item.id) ?? []);
}
