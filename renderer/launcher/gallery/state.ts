import type { Item } from './types';

/**
 * The gallery's one state object. Everything the views show is here; views
 * only read it, and every change goes through `schedule()`, which renders at
 * most once per animation frame (launcher/frame.ts), so a burst of events or
 * keys costs one render.
 */
export interface GalleryState {
  /** One record per id, read by the grid, the details and the viewer alike. */
  records: Map<string, Item>;
  /** The list's order: ids, newest first, as far as loaded (without items waiting to be deleted). */
  order: string[];
  cursor: string | null;
  done: boolean;
  loading: boolean;
  /** A number per list (filters): answers for an older list are dropped. */
  generation: number;
  failure: unknown;
  /** The tile that is the grid's tab stop (an index of `order`). */
  active: number;
  /** Selected item ids (bulk actions) and where a Shift range starts. */
  selected: Set<string>;
  anchor: number | null;
  /** Deletes waiting out their undo window: the items and where they were. */
  pendingDelete: { items: { item: Item; index: number }[]; timer: number; sent: boolean } | null;
  /** The item the viewer shows, or null when it is closed. */
  viewing: string | null;
  /** Layout of the window (gallery/grid.ts). */
  cols: number;
  rowH: number;
  tileW: number;
  started: boolean;
  stale: boolean;
  /** Studios and tags seen, for the filter fields. */
  studioIds: Set<string>;
  tagsSeen: Set<string>;
}

export function createState(): GalleryState {
  return {
    records: new Map(),
    order: [],
    cursor: null,
    done: false,
    loading: false,
    generation: 0,
    failure: null,
    active: 0,
    selected: new Set(),
    anchor: null,
    pendingDelete: null,
    viewing: null,
    cols: 1,
    rowH: 0,
    tileW: 0,
    started: false,
    stale: false,
    studioIds: new Set(),
    tagsSeen: new Set(),
  };
}

/** The items the bulk actions act on: the selection, else the focused tile. */
export function targets(state: GalleryState): Item[] {
  const ids = state.selected.size > 0 ? state.order.filter((id) => state.selected.has(id)) : [state.order[state.active]].filter(Boolean) as string[];
  return ids.map((id) => state.records.get(id)).filter((i): i is Item => i !== undefined);
}

/** Takes ids out of the list (deleted, purged, waiting to be deleted); the tab stop stays on the same item or the next one. */
export function removeFromOrder(state: GalleryState, ids: ReadonlySet<string>): number {
  if (ids.size === 0) return 0;
  const activeId = state.order[state.active];
  const before = state.order.length;
  let removedBefore = 0;
  state.order = state.order.filter((id, i) => {
    const gone = ids.has(id);
    if (gone && i < state.active) removedBefore++;
    return !gone;
  });
  for (const id of ids) state.selected.delete(id);
  if (activeId !== undefined && !ids.has(activeId)) state.active -= removedBefore;
  else state.active = Math.min(state.active - removedBefore, Math.max(0, state.order.length - 1));
  state.active = Math.max(0, state.active);
  state.anchor = null;
  return before - state.order.length;
}
