import { call, query, type Page } from '../../lib/api';
import { announce, h, replace } from '../../lib/dom';
import { frameScheduler } from '../frame';
import { createActions, describe, UNDO_MS } from './actions';
import { createDetails } from './details';
import { createGrid } from './grid';
import { createList } from './list';
import { createState } from './state';
import { createViewer } from './viewer';
import { parseTags, type Filters, type Item, type ItemEvent } from './types';

/**
 * The launcher's Gallery panel: every studio's items (`GET
 * /launcher/gallery/items`), searched as the person types, filtered by tag,
 * studio and star, kept live by the `item` events of `/launcher/events`, and
 * acted on: star, tag, edit, delete with Undo, download, copy, bulk select,
 * a full-size viewer. State is one object (state.ts) rendered once per frame;
 * commands are actions.ts; the views (grid.ts, details.ts, viewer.ts and the
 * bars here) only read the state. renderer/README.md §Gallery.
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

const DEBOUNCE_MS = 250;

export function galleryPanel(): GalleryPanel {
  const state = createState();
  const schedule = frameScheduler(render);
  const grid = createGrid(state);

  // ---- elements ------------------------------------------------------------------
  const qField = h('input', { id: 'g-q', type: 'search', placeholder: 'Search titles and prompts', autocomplete: 'off', spellcheck: 'false' });
  const tagField = h('input', { id: 'g-tag', type: 'text', list: 'g-tags', placeholder: 'any', autocomplete: 'off', spellcheck: 'false' });
  const tagList = h('datalist', { id: 'g-tags' });
  const studioField = h('select', { id: 'g-studio' }, h('option', { value: '' }, 'All studios'));
  const starredField = h('input', { id: 'g-starred', type: 'checkbox' });
  const clearButton = h('button', { type: 'button' }, 'Clear filters');
  const refreshButton = h('button', { type: 'button', 'aria-label': 'Refresh the gallery' }, 'Refresh');
  const status = h('span', { class: 'muted g-count', role: 'status', 'aria-live': 'polite' });
  const problem = h('div', { class: 'g-problem', role: 'alert', hidden: true });
  const notice = h('div', { class: 'g-notice', role: 'alert', hidden: true });
  const empty = h('div', { class: 'g-empty', hidden: true });
  const selectionCount = h('strong', {});
  const bulkTag = h('input', { type: 'text', 'aria-label': 'Tags to add to the selected items', placeholder: 'tag, tag', autocomplete: 'off', spellcheck: 'false', list: 'g-tags' });
  const bulkBar = h(
    'form',
    { class: 'g-bulk', 'aria-label': 'Selected items', hidden: true },
    selectionCount,
    h('button', { type: 'button', 'data-action': 'star' }, '★ Star / unstar'),
    h('span', { class: 'g-bulk-tag' }, bulkTag, h('button', { type: 'submit', 'data-action': 'tag' }, 'Add tag')),
    h('button', { type: 'button', class: 'danger', 'data-action': 'delete' }, 'Delete'),
    h('button', { type: 'button', 'data-action': 'clear' }, 'Clear selection'),
  );
  const undoText = h('span', {});
  const undoButton = h('button', { type: 'button', 'data-action': 'undo' }, 'Undo');
  const undoBar = h('div', { class: 'g-undo', role: 'status', hidden: true }, undoText, undoButton);
  const help = h('p', { id: 'g-help', class: 'visually-hidden' });
  const keyList = h('dl', { class: 'g-keys' });
  const keys = h('details', { class: 'g-keys-box' }, h('summary', {}, 'Keys'), keyList);
  const filters = h(
    'form',
    { class: 'g-filters', role: 'search', 'aria-label': 'Search and filter the gallery' },
    h('label', { class: 'g-field g-search' }, h('span', {}, 'Search'), qField),
    h('label', { class: 'g-field' }, h('span', {}, 'Tag'), tagField),
    h('label', { class: 'g-field' }, h('span', {}, 'Studio'), studioField),
    h('div', { class: 'g-filter-actions' }, h('label', { class: 'check g-starred' }, starredField, ' Starred only'), clearButton),
    tagList,
  );
  const element = h(
    'section',
    { class: 'panel gallery-panel', id: 'gallery', 'aria-labelledby': 'gallery-title' },
    h('div', { class: 'g-head' }, h('h2', { id: 'gallery-title' }, 'Gallery'), status, refreshButton),
    filters,
    problem,
    notice,
    bulkBar,
    undoBar,
    empty,
    grid.scroller,
    keys,
    help,
  );

  // ---- the parts -------------------------------------------------------------------
  const current = (): Filters => ({ q: qField.value.trim(), tags: parseTags(tagField.value), studio: studioField.value, starred: starredField.checked });
  const filtered = (f: Filters) => f.q !== '' || f.tags.length > 0 || f.studio !== '' || f.starred;

  const list = createList(state, {
    filters: current,
    schedule,
    remembered(item) {
      if (!state.studioIds.has(item.studio_id)) {
        state.studioIds.add(item.studio_id);
        addStudioOption(item.studio_id, item.studio_id);
      }
      for (const tag of item.tags) {
        if (state.tagsSeen.size >= 500 || state.tagsSeen.has(tag)) continue;
        state.tagsSeen.add(tag);
        tagList.append(h('option', { value: tag }));
      }
    },
    restarted() {
      grid.clearRows();
      grid.scroller.scrollTop = 0;
    },
    prepended: (count) => grid.shifted(count),
  });

  let noticeTimer = 0;
  const actions = createActions(state, {
    schedule,
    list,
    problem(message) {
      notice.hidden = false;
      replace(notice, message);
      announce(message);
      clearTimeout(noticeTimer);
      noticeTimer = window.setTimeout(() => (notice.hidden = true), 10_000);
    },
    openDetails: (index) => openDetails(index),
    openViewer: (index) => viewer.open(index),
    focusTagField() {
      if (state.selected.size === 0 && state.order[state.active] !== undefined) state.selected.add(state.order[state.active]!);
      render();
      bulkTag.focus();
    },
  });

  const details = createDetails({
    actions,
    current: (id) => state.records.get(id),
    remember: list.remember,
    filterByTag(tag) {
      tagField.value = tag;
      reload();
      tagField.focus();
    },
    openViewer(item) {
      details.close();
      const index = state.order.indexOf(item.id);
      if (index >= 0) viewer.open(index);
    },
  });
  details.dialog.addEventListener('close', () => {
    if (viewer.isOpen() || document.activeElement === tagField) return;
    // Focus goes back to the tile the details were opened from (always rendered: it is the tab stop).
    render();
    if (!element.contains(document.activeElement) || document.activeElement === document.body) grid.tileAt(state.active)?.focus({ preventScroll: true });
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
      grid.tileAt(state.active)?.focus({ preventScroll: true });
    },
    details: (item) => {
      const index = state.order.indexOf(item.id);
      if (index >= 0) state.active = index;
      details.open(item);
    },
  });

  replace(keyList, ...actions.commands.flatMap((c) => [h('dt', {}, h('kbd', {}, c.keys)), h('dd', {}, c.label)]));
  help.textContent =
    'Arrow keys move between items, Shift with an arrow selects, Home and End go to the first and the last loaded item. ' +
    actions.commands.map((c) => `${c.keys}: ${c.label}`).join('. ') + '.';

  function reload(): void {
    list.reload();
  }

  function openDetails(index: number): void {
    const item = state.records.get(state.order[index] ?? '');
    if (item) details.open(item);
  }

  // ---- render ----------------------------------------------------------------------
  function render(): void {
    grid.render();
    renderStatus();
    renderMore();
    renderBars();
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
        filtered(current())
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

  function renderBars(): void {
    const n = state.selected.size;
    bulkBar.hidden = n === 0;
    selectionCount.textContent = n === 1 ? '1 selected' : `${n.toLocaleString()} selected`;
    const pending = state.pendingDelete;
    undoBar.hidden = pending === null;
    if (pending) undoText.textContent = `Deleted ${pending.items.length === 1 ? '1 item' : `${pending.items.length} items`}. `;
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
    b.addEventListener('click', clearFilters);
    return b;
  }

  function clearFilters(): void {
    qField.value = '';
    tagField.value = '';
    studioField.value = '';
    starredField.checked = false;
    reload();
    qField.focus();
  }

  function addStudioOption(id: string, name: string): void {
    const existing = [...studioField.options].find((o) => o.value === id);
    if (existing) {
      existing.textContent = name;
      return;
    }
    const option = h('option', { value: id }, name);
    const after = [...studioField.options].slice(1).find((o) => o.textContent!.localeCompare(name) > 0);
    studioField.insertBefore(option, after ?? null);
  }

  async function loadStudios(): Promise<void> {
    try {
      const page = await call<Page<{ id: string; name: string }>>(`/launcher/studios${query({ limit: 500 })}`);
      for (const s of page.items) {
        state.studioIds.add(s.id);
        addStudioOption(s.id, s.name);
      }
    } catch {
      // The studio filter still lists the studios the items name; the list shows its own failures.
    }
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
    grid.tileAt(state.active)?.focus({ preventScroll: true });
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
  // Esc with a selection clears it; Ctrl+Z undoes a delete wherever the focus is in the panel.
  element.addEventListener('keydown', (event) => {
    if (event.defaultPrevented || grid.grid.contains(event.target as Node)) return;
    if (event.key === 'Escape' && actions.clearSelection()) event.preventDefault();
    else if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 'z' && state.pendingDelete && !(event.target as HTMLElement).closest('input')) {
      event.preventDefault();
      actions.undo();
    }
  });
  bulkBar.addEventListener('click', (event) => {
    const action = (event.target as HTMLElement).closest<HTMLElement>('button')?.dataset.action;
    if (action === 'star') void actions.star();
    else if (action === 'delete') actions.remove();
    else if (action === 'clear') {
      actions.clearSelection();
      grid.tileAt(state.active)?.focus();
    }
  });
  bulkBar.addEventListener('submit', (event) => {
    event.preventDefault();
    const tags = parseTags(bulkTag.value);
    if (tags.length === 0) return bulkTag.focus();
    void actions.addTags(tags).then(() => (bulkTag.value = ''));
  });
  undoButton.addEventListener('click', () => {
    actions.undo();
    grid.tileAt(state.active)?.focus();
  });

  grid.scroller.addEventListener('scroll', schedule);
  new ResizeObserver(() => render()).observe(grid.scroller);
  new IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting)) void list.loadMore();
  }, { root: grid.scroller }).observe(grid.sentinel);

  // ---- filters ---------------------------------------------------------------------
  let typing = 0;
  const debounced = () => {
    clearTimeout(typing);
    typing = window.setTimeout(reload, DEBOUNCE_MS);
  };
  qField.addEventListener('input', debounced);
  tagField.addEventListener('input', debounced);
  studioField.addEventListener('change', reload);
  starredField.addEventListener('change', reload);
  clearButton.addEventListener('click', clearFilters);
  refreshButton.addEventListener('click', () => void list.refresh());
  filters.addEventListener('submit', (event) => {
    event.preventDefault();
    clearTimeout(typing);
    reload();
  });

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
      void loadStudios();
      reload();
    },
    refresh: () => {
      void loadStudios();
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

export { UNDO_MS };
