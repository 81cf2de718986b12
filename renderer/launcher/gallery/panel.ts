import { call } from '../../lib/api';
import { announce, h, replace } from '../../lib/dom';
import { frameScheduler } from '../frame';
import { createActions, describe } from './actions';
import { createBars } from './bars';
import { createDetails } from './details';
import { createFilters } from './filters';
import { createGrid } from './grid';
import { createList } from './list';
import { createState } from './state';
import { createViewer } from './viewer';
import type { Item, ItemEvent } from './types';

/**
 * The launcher's Gallery panel: every studio's items (`GET
 * /launcher/gallery/items`), searched as the person types, filtered by tag,
 * studio and star, kept live by the `item` events of `/launcher/events`, and
 * acted on: star, tag, edit, delete with Undo, download, copy, bulk select,
 * a full-size viewer. State is one object (state.ts) rendered once per frame;
 * commands are actions.ts; the views (grid.ts, details.ts, viewer.ts,
 * filters.ts, bars.ts) only read the state. renderer/README.md §Gallery.
 */

export interface GalleryPanel {
  /** The panel's section, to place in the page. */
  element: HTMLElement;
  /** Loads the studios and the first page. */
  start(): void;
  /** Reads the newest page again and puts new items in front (the rest stays). */
  refresh(): void;
  /** An `item` event of `/launcher/events` (applied with the others of the same frame). */
  itemEvent(event: ItemEvent): void;
  /** Shows one item's details by id (the editor links to `/#gallery/<id>`); a missing item is said in place. */
  openItem(id: string): Promise<void>;
}

export function galleryPanel(): GalleryPanel {
  const state = createState();
  const schedule = frameScheduler(render);
  const grid = createGrid(state);
  const reload = () => list.reload();
  const filters = createFilters(state, reload);
  const list = createList(state, {
    filters: filters.current,
    schedule,
    remembered: filters.learn,
    restarted() {
      grid.clearRows();
      grid.scroller.scrollTop = 0;
    },
    prepended: (count) => grid.shifted(count),
  });
  const focusTile = () => grid.tileAt(state.active)?.focus({ preventScroll: true });
  const actions = createActions(state, {
    schedule,
    list,
    problem: (message) => bars.problem(message),
    openDetails(index) {
      const item = state.records.get(state.order[index] ?? '');
      if (item) details.open(item);
    },
    openViewer: (index) => viewer.open(index),
    focusTagField() {
      if (state.selected.size === 0 && state.order[state.active] !== undefined) state.selected.add(state.order[state.active]!);
      render();
      bars.focusTagInput();
    },
  });
  const bars = createBars(state, actions, { focusTile });
  const details = createDetails({
    actions,
    current: (id) => state.records.get(id),
    remember: list.remember,
    filterByTag: filters.byTag,
    openViewer(item) {
      details.close();
      const index = state.order.indexOf(item.id);
      if (index >= 0) viewer.open(index);
    },
  });
  const viewer = createViewer(state, {
    actions,
    schedule,
    loadMore: () => void list.loadMore(),
    closed(index) {
      if (details.isOpen()) return;
      state.active = Math.max(0, Math.min(index, state.order.length - 1));
      grid.reveal(state.active);
      render();
      focusTile();
    },
    details: (item) => {
      const index = state.order.indexOf(item.id);
      if (index >= 0) state.active = index;
      details.open(item);
    },
  });
  details.dialog.addEventListener('close', () => {
    if (viewer.isOpen() || document.activeElement === filters.tagField) return;
    // Focus goes back to the tile the details were opened from (always rendered: it is the tab stop).
    render();
    focusTile();
  });

  const refreshButton = h('button', { type: 'button', 'aria-label': 'Refresh the gallery' }, 'Refresh');
  const status = h('span', { class: 'muted g-count', role: 'status', 'aria-live': 'polite' });
  const problem = h('div', { class: 'g-problem', role: 'alert', hidden: true });
  const empty = h('div', { class: 'g-empty', hidden: true });
  const element = h(
    'section',
    { class: 'panel gallery-panel', id: 'gallery', 'aria-labelledby': 'gallery-title' },
    h('div', { class: 'g-head' }, h('h2', { id: 'gallery-title' }, 'Gallery'), status, refreshButton),
    filters.form,
    problem,
    bars.notice,
    bars.bulk,
    bars.undo,
    empty,
    grid.scroller,
    bars.keys,
    bars.help,
  );

  // ---- render ----------------------------------------------------------------------
  function render(): void {
    grid.render();
    renderStatus();
    renderMore();
    bars.render();
    viewer.render();
    details.refresh();
  }

  function countText(): string {
    const n = state.order.length.toLocaleString();
    if (state.failure) return state.order.length === 0 ? 'Not loaded' : `${n} items loaded; the next page failed`;
    if (state.done) return state.order.length === 1 ? '1 item' : `${n} items`;
    return state.order.length === 0 ? 'Loading…' : `${n} items loaded, more as you scroll`;
  }

  function renderStatus(): void {
    status.textContent = countText();
    const { failure, order, done } = state;
    if (failure && order.length === 0) {
      problem.hidden = false;
      replace(problem, h('strong', {}, 'The gallery could not be read. '), h('span', {}, describe(failure)), ' ', retryButton());
    } else {
      problem.hidden = true;
      problem.replaceChildren();
    }
    const isEmpty = done && order.length === 0 && !failure;
    empty.hidden = !isEmpty;
    grid.scroller.hidden = isEmpty || (failure !== null && order.length === 0);
    if (isEmpty) {
      replace(
        empty,
        filters.filtered()
          ? h('p', {}, h('strong', {}, 'No item matches. '), 'Try other words, another tag or studio, or ', clearLink(), '.')
          : h('p', {}, h('strong', {}, 'Nothing in the gallery yet. '), 'What studios make shows here: a drawing saved in Sketchpad, a clip rendered in Clipmaker, an export from the editor.'),
      );
    }
  }

  function renderMore(): void {
    const { more } = grid;
    if (state.failure && state.order.length > 0) {
      more.hidden = false;
      replace(more, h('span', { class: 'error' }, `The next page did not load: ${describe(state.failure)} `), retryButton());
    } else if (state.loading && state.order.length > 0) {
      more.hidden = false;
      replace(more, h('span', { class: 'muted' }, 'Loading more…'));
    } else {
      more.hidden = true;
      more.replaceChildren();
    }
    // A short page, or a tall screen: the end may still be in reach.
    if (!state.done && !state.failure && !state.loading && state.started && grid.nearEnd()) void list.loadMore();
  }

  function retryButton(): HTMLButtonElement {
    const b = h('button', { type: 'button' }, 'Try again');
    b.addEventListener('click', () => {
      if (state.order.length === 0) return reload();
      state.failure = null;
      void list.loadMore();
    });
    return b;
  }

  function clearLink(): HTMLButtonElement {
    const b = h('button', { type: 'button', class: 'link' }, 'clear the filters');
    b.addEventListener('click', filters.clear);
    return b;
  }

  // ---- input -----------------------------------------------------------------------
  /** Moves the tab stop (and focus) to `index`, scrolling its row into view; with `extend`, selects from the anchor to it. */
  function moveTo(index: number, extend = false): void {
    if (state.order.length === 0) return;
    const from = state.active;
    state.active = Math.max(0, Math.min(state.order.length - 1, index));
    if (extend) actions.extendTo(state.active, state.anchor ?? from);
    grid.reveal(state.active);
    render();
    focusTile();
    if (grid.nearEnd()) void list.loadMore();
  }

  grid.grid.addEventListener('keydown', (event) => {
    const tile = (event.target as HTMLElement).closest<HTMLElement>('.g-tile');
    if (!tile) return;
    const at = Number(tile.dataset.index);
    state.active = at;
    const { cols } = state;
    const to: Record<string, number> = {
      ArrowRight: at + 1,
      ArrowLeft: at - 1,
      ArrowDown: at + cols,
      ArrowUp: at - cols,
      PageDown: at + grid.perPage(),
      PageUp: at - grid.perPage(),
      Home: 0,
      End: state.order.length - 1,
    };
    if (event.key in to && !event.ctrlKey && !event.metaKey && !event.altKey) {
      event.preventDefault();
      const next = to[event.key]!;
      // Down from the last row: the same column of the next page, once it is read.
      if (next >= state.order.length && !state.done) void list.loadMore();
      moveTo(next, event.shiftKey);
      return;
    }
    const command = actions.commands.find((c) => c.matches(event));
    if (command) {
      event.preventDefault();
      command.run();
    }
  });
  grid.grid.addEventListener('click', (event) => {
    const tile = (event.target as HTMLElement).closest<HTMLElement>('.g-tile');
    if (!tile) return;
    const index = Number(tile.dataset.index);
    if (event.shiftKey) actions.extendTo(index);
    else if (event.ctrlKey || event.metaKey) actions.toggle(index);
    else {
      state.selected = new Set([tile.dataset.itemId!]);
      state.anchor = index;
    }
    state.active = index;
    render();
    tile.focus({ preventScroll: true });
  });
  grid.grid.addEventListener('dblclick', (event) => {
    const tile = (event.target as HTMLElement).closest<HTMLElement>('.g-tile');
    if (tile) viewer.open(Number(tile.dataset.index));
  });
  // Outside the grid too: Esc with a selection clears it; Ctrl/⌘+Z undoes a delete waiting out its window.
  element.addEventListener('keydown', (event) => {
    if (event.defaultPrevented || grid.grid.contains(event.target as Node)) return;
    if (event.key === 'Escape' && actions.clearSelection()) event.preventDefault();
    else if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 'z' && state.pendingDelete && !(event.target as HTMLElement).closest('input')) {
      event.preventDefault();
      actions.undo();
    }
  });
  refreshButton.addEventListener('click', () => void list.refresh());

  grid.scroller.addEventListener('scroll', schedule);
  new ResizeObserver(() => render()).observe(grid.scroller);
  new IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting)) void list.loadMore();
  }, { root: grid.scroller }).observe(grid.sentinel);

  // ---- coming back -----------------------------------------------------------------
  // Events keep the list current; after the page was hidden (a dropped stream is
  // reloaded by main.ts) the newest page is read again too.
  new IntersectionObserver((entries) => {
    const visible = entries.some((e) => e.isIntersecting);
    if (!visible) state.stale = true;
    else if (state.stale && state.started) void list.refresh();
  }).observe(element);
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible' && state.started) void list.refresh();
  });

  document.body.append(details.dialog, viewer.dialog);
  return {
    element,
    start() {
      if (state.started) return;
      state.started = true;
      void filters.loadStudios();
      reload();
    },
    refresh: () => {
      void filters.loadStudios();
      void list.refresh();
    },
    itemEvent: list.itemEvent,
    async openItem(id) {
      element.scrollIntoView({ block: 'start' });
      try {
        const item = await call<Item>(`/launcher/gallery/items/${encodeURIComponent(id)}`);
        state.records.set(item.id, item);
        details.open(item);
      } catch (err) {
        announce(`Gallery item ${id}: ${describe(err)}`);
        throw err;
      }
    },
  };
}
