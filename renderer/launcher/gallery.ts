import { ApiFailure, call, query, type Page } from '../lib/api';
import { openMedia, showMedia, type MediaElement } from '../lib/media';
import { announce, h, replace } from '../lib/dom';
import { when } from '../lib/format';

/**
 * The launcher's Gallery panel (renderer/README.md "Gallery"): every studio's items
 * (`GET /launcher/gallery/items`), searched as the person types (`q`), filtered
 * by tag, studio and star, paged by cursor as the grid scrolls.
 *
 * The grid is windowed by rows: only the rows near the viewport (and the row of
 * the focused tile) are in the DOM; a spacer of the full height keeps the
 * scrollbar true. With 100,000 items the page holds a few dozen tiles. The grid
 * is one tab stop (roving tabindex): arrow keys, Home/End and PageUp/PageDown
 * move between tiles, Enter opens the details with the item's lineage up
 * ("Made from") and down ("Used in") as clickable thumbnails.
 *
 * The launcher's event channel carries no gallery events, so new items are read
 * when the panel comes back into view, the page becomes visible again, or the
 * person presses Refresh (never by polling); `refresh()` is there for a caller
 * that knows more (a finished export).
 */

export interface Item {
  id: string;
  studio_id: string;
  asset_id: string;
  kind: 'image' | 'video' | 'audio' | 'other';
  title: string | null;
  tags: string[];
  starred: boolean;
  session_id: string | null;
  params: Record<string, unknown>;
  inputs: { asset_id: string; role: string }[];
  timeline_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface GalleryPanel {
  /** The panel's section, to place in the page. */
  element: HTMLElement;
  /** Loads the studios and the first page; afterwards refreshes on visibility. */
  start(): void;
  /** Reads the newest page again and puts new items in front (the rest stays). */
  refresh(): void;
  /** Shows one item's details by id (the editor links to `/#gallery/<id>`); a missing item is said in place. */
  openItem(id: string): Promise<void>;
}

/** Items per page: enough to fill a tall screen twice. */
const PAGE_SIZE = 120;
/** Layout of the window; the CSS (gallery.css) draws the same sizes. */
const MIN_TILE = 170;
const GAP = 12;
const CAPTION = 54;
const PAD = 12;
/** Rows kept above and below the visible ones. */
const OVERSCAN = 3;
/** The next page is asked for this far (px) before the end is in view. */
const AHEAD = 900;
const DEBOUNCE_MS = 250;

interface Filters {
  q: string;
  tags: string[];
  studio: string;
  starred: boolean;
}


/** What a tile or a lineage entry is called: its title, else its prompt, else its kind. */
function nameOf(item: Item): string {
  const prompt = typeof item.params.prompt === 'string' ? item.params.prompt : '';
  return (item.title ?? '').trim() || prompt.trim() || `Untitled ${item.kind}`;
}

/** A thumbnail (images) or a placeholder naming the kind; a failed load says so in place. */
function preview(item: Item, cls: string): HTMLElement {
  const box = h('div', { class: `${cls} kind-${item.kind}` });
  if (item.kind !== 'image') {
    box.append(h('span', { class: 'g-placeholder', 'aria-hidden': 'true' }, item.kind === 'video' ? '▶ video' : item.kind === 'audio' ? '♪ audio' : 'file'));
    return box;
  }
  const img = h('img', { alt: '', decoding: 'async', draggable: 'false' });
  // Through a short-lived media URL (lib/media.ts): an <img> sends no credential.
  showMedia(img, item.asset_id, 'thumb', () => replace(box, h('span', { class: 'g-placeholder failed' }, 'No preview: the thumbnail did not load')));
  box.append(img);
  return box;
}

export function galleryPanel(): GalleryPanel {
  // ---- state -----------------------------------------------------------------
  /** One record per id, read by the grid and the details alike. */
  const records = new Map<string, Item>();
  /** The list's order: ids, newest first, as far as loaded. */
  let order: string[] = [];
  let cursor: string | null = null;
  let done = false;
  let loading = false;
  /** A number per list (filters): answers for an older list are dropped. */
  let generation = 0;
  let controller = new AbortController();
  let failure: unknown = null;
  let active = 0;
  let cols = 1;
  let rowH = MIN_TILE + CAPTION + GAP;
  let tileW = MIN_TILE;
  let started = false;
  let stale = false;
  const rendered = new Map<number, HTMLElement>();
  const studioIds = new Set<string>();
  const tagsSeen = new Set<string>();

  // ---- elements --------------------------------------------------------------
  const qField = h('input', { id: 'g-q', type: 'search', placeholder: 'Search titles and prompts', autocomplete: 'off', spellcheck: 'false' });
  const tagField = h('input', { id: 'g-tag', type: 'text', list: 'g-tags', placeholder: 'any', autocomplete: 'off', spellcheck: 'false' });
  const tagList = h('datalist', { id: 'g-tags' });
  const studioField = h('select', { id: 'g-studio' }, h('option', { value: '' }, 'All studios'));
  const starredField = h('input', { id: 'g-starred', type: 'checkbox' });
  const clearButton = h('button', { type: 'button' }, 'Clear filters');
  const refreshButton = h('button', { type: 'button', 'aria-label': 'Refresh the gallery' }, 'Refresh');
  const status = h('span', { class: 'muted g-count', role: 'status', 'aria-live': 'polite' });
  const problem = h('div', { class: 'g-problem', role: 'alert', hidden: true });
  const empty = h('div', { class: 'g-empty', hidden: true });
  const grid = h('div', {
    class: 'g-grid',
    role: 'grid',
    'aria-label': 'Gallery items, newest first',
    'aria-describedby': 'g-help',
    'aria-rowcount': -1,
  });
  const sentinel = h('div', { class: 'g-sentinel', 'aria-hidden': 'true' });
  const more = h('div', { class: 'g-more', hidden: true });
  const scroller = h('div', { class: 'g-scroller' }, grid, sentinel, more);
  const help = h('p', { id: 'g-help', class: 'visually-hidden' }, 'Arrow keys move between items; Home and End go to the first and the last loaded item; Enter opens its details.');
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
    empty,
    scroller,
    help,
  );
  const dialog = h('dialog', { class: 'g-details', 'aria-labelledby': 'g-details-title' });

  // ---- the list ----------------------------------------------------------------
  const current = (): Filters => ({
    q: qField.value.trim(),
    tags: tagField.value
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean),
    studio: studioField.value,
    starred: starredField.checked,
  });
  const filtered = (f: Filters) => f.q !== '' || f.tags.length > 0 || f.studio !== '' || f.starred;

  function listPath(f: Filters, pageCursor: string | null, limit = PAGE_SIZE): string {
    const q = new URLSearchParams();
    if (f.q) q.set('q', f.q);
    for (const tag of f.tags) q.append('tag', tag);
    if (f.studio) q.set('studio', f.studio);
    if (f.starred) q.set('starred', 'true');
    q.set('limit', String(limit));
    if (pageCursor) q.set('cursor', pageCursor);
    return `/launcher/gallery/items?${q}`;
  }

  /** A new list from the first page: the previous request is aborted, its answer never shown. */
  function reload(): void {
    controller.abort();
    controller = new AbortController();
    generation++;
    order = [];
    cursor = null;
    done = false;
    loading = false;
    failure = null;
    active = 0;
    clearRows();
    scroller.scrollTop = 0;
    render();
    void loadMore();
  }

  async function loadMore(): Promise<void> {
    if (loading || done || failure) return;
    loading = true;
    const gen = generation;
    const f = current();
    renderMore();
    try {
      const page = await call<Page<Item>>(listPath(f, cursor), { signal: controller.signal });
      if (gen !== generation) return;
      const seen = new Set(order);
      for (const item of page.items) {
        remember(item);
        if (!seen.has(item.id)) order.push(item.id);
      }
      cursor = page.next_cursor;
      done = cursor === null;
    } catch (err) {
      if ((err as Error).name === 'AbortError' || gen !== generation) return;
      failure = err;
    } finally {
      if (gen === generation) loading = false;
    }
    render();
    // A short page, or a tall screen: the end may still be in reach.
    if (!done && !failure && nearEnd()) void loadMore();
  }

  /** New items in front: the newest page read again, joined to the list where they meet. */
  async function refresh(): Promise<void> {
    stale = false;
    void loadStudios();
    if (order.length === 0 || failure) return reload();
    const gen = generation;
    const newest = order[0]!;
    try {
      const page = await call<Page<Item>>(listPath(current(), null), { signal: controller.signal });
      if (gen !== generation) return;
      const at = page.items.findIndex((i) => i.id === newest);
      // The newest known item is gone (deleted), or more than a page arrived: start over.
      if (at < 0) return reload();
      const fresh = page.items.slice(0, at);
      for (const item of page.items) remember(item);
      if (fresh.length === 0) return render();
      // The same item keeps the tab stop (and focus), and stays where it was on the screen.
      const hadFocus = grid.contains(document.activeElement);
      const rowBefore = Math.floor(active / cols);
      order = [...fresh.map((i) => i.id), ...order];
      active += fresh.length;
      if (scroller.scrollTop > 0) scroller.scrollTop += (Math.floor(active / cols) - rowBefore) * rowH;
      clearRows();
      render();
      if (hadFocus) tileAt(active)?.focus({ preventScroll: true });
      announce(`${fresh.length} new ${fresh.length === 1 ? 'item' : 'items'} in the gallery`);
    } catch (err) {
      if ((err as Error).name !== 'AbortError' && gen === generation) {
        failure = err;
        render();
      }
    }
  }

  function remember(item: Item): void {
    records.set(item.id, item);
    if (!studioIds.has(item.studio_id)) {
      studioIds.add(item.studio_id);
      addStudioOption(item.studio_id, item.studio_id);
    }
    for (const tag of item.tags) {
      if (tagsSeen.size >= 500 || tagsSeen.has(tag)) continue;
      tagsSeen.add(tag);
      tagList.append(h('option', { value: tag }));
    }
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
        studioIds.add(s.id);
        addStudioOption(s.id, s.name);
      }
    } catch {
      // The studio filter still lists the studios the items name; the list shows its own failures.
    }
  }

  function countText(): string {
    const n = order.length.toLocaleString();
    if (failure) return order.length === 0 ? 'Not loaded' : `${n} items loaded; the next page failed`;
    if (done) return order.length === 1 ? '1 item' : `${n} items`;
    return order.length === 0 ? 'Loading…' : `${n} items loaded, more as you scroll`;
  }

  // ---- the window ----------------------------------------------------------------
  function measure(): boolean {
    const width = Math.max(0, scroller.clientWidth - 2 * PAD);
    const nextCols = Math.max(1, Math.floor((width + GAP) / (MIN_TILE + GAP)));
    const nextTile = nextCols > 0 ? (width - GAP * (nextCols - 1)) / nextCols : MIN_TILE;
    const nextRow = Math.round(nextTile * 0.75) + CAPTION + GAP;
    const changed = nextCols !== cols || nextRow !== rowH;
    cols = nextCols;
    tileW = nextTile;
    rowH = nextRow;
    return changed;
  }

  function clearRows(): void {
    for (const row of rendered.values()) row.remove();
    rendered.clear();
  }

  const rowCount = () => Math.ceil(order.length / cols);
  const nearEnd = () => scroller.scrollTop + scroller.clientHeight + AHEAD >= rowCount() * rowH;

  function render(): void {
    const hadFocus = grid.contains(document.activeElement);
    if (measure()) clearRows();
    const rows = rowCount();
    grid.style.height = `${rows * rowH + PAD}px`;
    grid.setAttribute('aria-rowcount', done ? String(rows) : '-1');
    grid.setAttribute('aria-colcount', String(cols));
    grid.dataset.loaded = String(order.length);
    grid.dataset.state = failure ? 'failed' : loading ? 'loading' : done ? 'done' : 'more';
    // The sentinel covers the last AHEAD px of the list: a jump to the end lands in it too.
    sentinel.style.top = `${Math.max(0, rows * rowH + PAD - AHEAD)}px`;
    sentinel.style.height = `${Math.min(AHEAD, rows * rowH + PAD)}px`;

    active = Math.min(active, Math.max(0, order.length - 1));
    const first = Math.max(0, Math.floor(scroller.scrollTop / rowH) - OVERSCAN);
    const last = Math.min(rows - 1, Math.floor((scroller.scrollTop + scroller.clientHeight) / rowH) + OVERSCAN);
    const wanted = new Set<number>();
    for (let r = first; r <= last; r++) wanted.add(r);
    if (order.length > 0) wanted.add(Math.floor(active / cols)); // the tab stop is always in the page
    for (const [r, row] of rendered) {
      const count = Math.min(cols, order.length - r * cols);
      if (!wanted.has(r) || Number(row.dataset.count) !== count) {
        row.remove();
        rendered.delete(r);
      }
    }
    for (const r of [...wanted].sort((a, b) => a - b)) {
      if (rendered.has(r)) continue;
      const row = renderRow(r);
      // In the DOM in list order too (what a screen reader walks), not in the order rows came into view.
      const after = [...rendered.keys()].filter((k) => k > r).sort((a, b) => a - b)[0];
      grid.insertBefore(row, after === undefined ? null : rendered.get(after)!);
      rendered.set(r, row);
    }
    for (const tile of grid.querySelectorAll<HTMLElement>('.g-tile')) {
      const mine = Number(tile.dataset.index) === active;
      tile.tabIndex = mine ? 0 : -1;
      tile.classList.toggle('active', mine);
    }
    if (hadFocus && !grid.contains(document.activeElement)) tileAt(active)?.focus({ preventScroll: true });
    renderStatus();
    renderMore();
  }

  function renderRow(r: number): HTMLElement {
    const start = r * cols;
    const count = Math.min(cols, order.length - start);
    const row = h('div', { class: 'g-row', role: 'row', 'aria-rowindex': r + 1, 'data-row': r, 'data-count': count });
    row.style.transform = `translateY(${r * rowH + PAD}px)`;
    row.style.height = `${rowH - GAP}px`;
    row.style.gridTemplateColumns = `repeat(${cols}, ${tileW}px)`;
    for (let i = start; i < start + count; i++) row.append(renderTile(records.get(order[i]!)!, i));
    return row;
  }

  function renderTile(item: Item, index: number): HTMLElement {
    const name = nameOf(item);
    const tile = h(
      'div',
      {
        class: 'g-tile',
        role: 'gridcell',
        tabindex: -1,
        'aria-colindex': (index % cols) + 1,
        'data-index': index,
        'data-item-id': item.id,
        'aria-label': `${name}, ${item.studio_id}, ${item.kind}${item.starred ? ', starred' : ''}`,
      },
      preview(item, 'g-thumb'),
      h(
        'div',
        { class: 'g-caption', 'aria-hidden': 'true' },
        h('span', { class: 'g-title', title: name }, item.starred ? h('span', { class: 'g-star' }, '★ ') : null, name),
        h('span', { class: 'g-meta muted' }, `${item.studio_id} · ${item.kind}`),
      ),
    );
    tile.style.height = `${Math.round(tileW * 0.75) + CAPTION}px`;
    tile.querySelector<HTMLElement>('.g-thumb')!.style.height = `${Math.round(tileW * 0.75)}px`;
    return tile;
  }

  function renderStatus(): void {
    status.textContent = countText();
    const f = current();
    if (failure && order.length === 0) {
      problem.hidden = false;
      replace(
        problem,
        h('strong', {}, 'The gallery could not be read. '),
        h('span', {}, describe(failure)),
        ' ',
        retryButton(),
      );
    } else {
      problem.hidden = true;
      problem.replaceChildren();
    }
    const isEmpty = done && order.length === 0 && !failure;
    empty.hidden = !isEmpty;
    scroller.hidden = isEmpty || (failure !== null && order.length === 0);
    if (isEmpty) {
      replace(
        empty,
        filtered(f)
          ? h('p', {}, h('strong', {}, 'No item matches. '), 'Try other words, another tag or studio, or ', clearLink(), '.')
          : h('p', {}, h('strong', {}, 'Nothing in the gallery yet. '), 'What studios make shows here: a drawing saved in Sketchpad, a clip rendered in Clipmaker, an export from the editor.'),
      );
    }
  }

  function renderMore(): void {
    if (failure && order.length > 0) {
      more.hidden = false;
      replace(more, h('span', { class: 'error' }, `The next page did not load: ${describe(failure)} `), retryButton());
    } else if (loading && order.length > 0) {
      more.hidden = false;
      replace(more, h('span', { class: 'muted' }, 'Loading more…'));
    } else {
      more.hidden = true;
      more.replaceChildren();
    }
  }

  function retryButton(): HTMLButtonElement {
    const b = h('button', { type: 'button' }, 'Try again');
    b.addEventListener('click', () => {
      if (order.length === 0) return reload();
      failure = null;
      void loadMore();
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

  const tileAt = (index: number) => grid.querySelector<HTMLElement>(`.g-tile[data-index="${index}"]`);

  /** Moves the tab stop (and focus) to `index`, scrolling its row into view. */
  function moveTo(index: number): void {
    if (order.length === 0) return;
    active = Math.max(0, Math.min(order.length - 1, index));
    const top = Math.floor(active / cols) * rowH;
    if (top < scroller.scrollTop) scroller.scrollTop = top;
    else if (top + rowH + PAD > scroller.scrollTop + scroller.clientHeight) scroller.scrollTop = top + rowH + PAD - scroller.clientHeight;
    render();
    tileAt(active)?.focus({ preventScroll: true });
    if (nearEnd()) void loadMore();
  }

  grid.addEventListener('keydown', (event) => {
    const tile = (event.target as HTMLElement).closest<HTMLElement>('.g-tile');
    if (!tile) return;
    const at = Number(tile.dataset.index);
    const perPage = cols * Math.max(1, Math.floor(scroller.clientHeight / rowH));
    const to: Record<string, number> = {
      ArrowRight: at + 1,
      ArrowLeft: at - 1,
      ArrowDown: at + cols,
      ArrowUp: at - cols,
      PageDown: at + perPage,
      PageUp: at - perPage,
      Home: 0,
      End: order.length - 1,
    };
    if (event.key in to) {
      event.preventDefault();
      const next = to[event.key]!;
      // Down from the last row: the same column of the next page, once it is read.
      if (next >= order.length && !done) void loadMore();
      moveTo(next);
    } else if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      open(at);
    }
  });
  grid.addEventListener('click', (event) => {
    const tile = (event.target as HTMLElement).closest<HTMLElement>('.g-tile');
    if (!tile) return;
    active = Number(tile.dataset.index);
    render();
    tile.focus({ preventScroll: true });
    open(active);
  });

  let frame = 0;
  scroller.addEventListener('scroll', () => {
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      render();
    });
  });
  new ResizeObserver(() => render()).observe(scroller);
  new IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting)) void loadMore();
  }, { root: scroller }).observe(sentinel);

  // ---- filters -----------------------------------------------------------------
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
  refreshButton.addEventListener('click', () => void refresh());
  filters.addEventListener('submit', (event) => {
    event.preventDefault();
    clearTimeout(typing);
    reload();
  });

  // ---- details -------------------------------------------------------------------
  /** Items shown before the current one in the open dialog (lineage clicks), for Back. */
  let trail: Item[] = [];

  function open(index: number): void {
    const item = records.get(order[index]!);
    if (!item) return;
    trail = [];
    showDetails(item);
    if (!dialog.open) dialog.showModal();
  }

  /** Where focus goes when the details close instead of the tile (a tag that filters the grid: its field). */
  let returnFocus: HTMLElement | null = null;
  dialog.addEventListener('close', () => {
    dialog.replaceChildren();
    // Focus goes back to the tile the details were opened from (always rendered: it is the tab stop).
    render();
    (returnFocus ?? tileAt(active))?.focus({ preventScroll: true });
    returnFocus = null;
  });
  dialog.addEventListener('click', (event) => {
    if (event.target === dialog) dialog.close(); // a click on the backdrop
  });

  function showDetails(item: Item): void {
    const close = h('button', { type: 'button', class: 'g-close', 'aria-label': 'Close details' }, '×');
    close.addEventListener('click', () => dialog.close());
    const back = trail.length > 0 ? h('button', { type: 'button', class: 'g-back' }, `← ${nameOf(trail[trail.length - 1]!)}`) : null;
    back?.addEventListener('click', () => showDetails(trail.pop()!));
    const prompt = typeof item.params.prompt === 'string' ? item.params.prompt : null;
    const other = Object.entries(item.params).filter(([k]) => k !== 'prompt');
    const tagButtons = item.tags.map((tag) => {
      const b = h('button', { type: 'button', class: 'g-tag', 'aria-label': `Show items tagged ${tag}` }, tag);
      b.addEventListener('click', () => {
        tagField.value = tag;
        returnFocus = tagField;
        dialog.close();
        reload();
      });
      return b;
    });
    const up = lineageList('Made from', 'Nothing recorded as its input came from the gallery.', `/launcher/gallery/items/${encodeURIComponent(item.id)}/lineage`, item);
    const down = lineageList('Used in', 'Nothing was made from it yet.', `/launcher/assets/${encodeURIComponent(item.asset_id)}/lineage`, item);
    replace(
      dialog,
      h('div', { class: 'g-details-head' }, back, h('h2', { id: 'g-details-title' }, nameOf(item)), close),
      h(
        'div',
        { class: 'g-details-body' },
        media(item),
        h(
          'div',
          { class: 'g-fields' },
          h(
            'dl',
            {},
            field('Title', item.title ?? h('span', { class: 'muted' }, 'none')),
            prompt !== null ? field('Prompt', h('span', { class: 'g-prompt' }, prompt)) : null,
            field('Studio', item.studio_id),
            field('Created', h('time', { datetime: item.created_at }, when(item.created_at))),
            field('Starred', item.starred ? '★ yes' : 'no'),
            field('Kind', item.kind),
            field('Tags', tagButtons.length ? h('span', { class: 'g-tags' }, ...tagButtons) : h('span', { class: 'muted' }, 'none')),
            other.length
              ? field('Parameters', h('span', { class: 'g-params' }, ...other.slice(0, 40).map(([k, v]) => h('span', {}, h('code', {}, k), ` ${short(v)}`))))
              : null,
            item.inputs.length
              ? field('Inputs', h('span', { class: 'g-params' }, ...item.inputs.slice(0, 40).map((n) => h('span', {}, h('code', {}, n.role), ` ${n.asset_id}`))))
              : null,
            field('Item', h('code', {}, item.id)),
          ),
        ),
      ),
      up,
      down,
    );
    close.focus();
  }

  function field(label: string, value: Node | string): DocumentFragment {
    const f = document.createDocumentFragment();
    f.append(h('dt', {}, label), h('dd', {}, value));
    return f;
  }

  function media(item: Item): HTMLElement {
    // Short-lived media URLs (lib/media.ts); the link asks for a fresh one when followed.
    const link = h('a', { href: '#', 'data-media': item.asset_id }, 'Open the file');
    link.addEventListener('click', (e) => {
      e.preventDefault();
      openMedia(item.asset_id);
    });
    let el: HTMLElement;
    const failed = () => el.replaceWith(h('p', { class: 'error' }, 'The file did not load (it may have been reclaimed).'));
    if (item.kind === 'image') el = h('img', { alt: nameOf(item) });
    else if (item.kind === 'video') el = h('video', { controls: true, preload: 'metadata' });
    else if (item.kind === 'audio') el = h('audio', { controls: true, preload: 'metadata' });
    else el = h('p', { class: 'muted' }, 'No preview for this kind of file.');
    if (el instanceof HTMLImageElement || el instanceof HTMLMediaElement) showMedia(el as MediaElement, item.asset_id, 'file', failed);
    return h('figure', { class: 'g-media' }, el, h('figcaption', {}, link));
  }

  /** A lineage direction as thumbnails; each opens that item here. Pages of 24, "Show more" for the rest. */
  function lineageList(title: string, none: string, path: string, from: Item): HTMLElement {
    const list = h('ul', { class: 'g-lineage', 'aria-label': `${title}: ${nameOf(from)}` });
    const note = h('p', { class: 'muted' }, 'Loading…');
    const section = h('section', { class: 'g-lineage-section' }, h('h3', {}, title), list, note);
    const load = async (next: string | null) => {
      try {
        const page = await call<Page<Item>>(`${path}${query({ limit: 24, cursor: next })}`);
        if (!section.isConnected) return;
        for (const item of page.items) {
          remember(item);
          const b = h('button', { type: 'button', class: 'g-lineage-item', 'data-item-id': item.id, 'aria-label': `${nameOf(item)}, ${item.studio_id}` }, preview(item, 'g-lineage-thumb'), h('span', { class: 'g-lineage-name' }, nameOf(item)));
          b.addEventListener('click', () => {
            trail.push(from);
            showDetails(item);
          });
          list.append(h('li', {}, b));
        }
        if (page.next_cursor) {
          const moreButton = h('button', { type: 'button' }, 'Show more');
          moreButton.addEventListener('click', () => {
            replace(note, 'Loading…');
            void load(page.next_cursor);
          });
          replace(note, moreButton);
        } else replace(note, list.children.length === 0 ? none : '');
        note.hidden = note.textContent === '' && !page.next_cursor;
      } catch (err) {
        if (!section.isConnected) return;
        note.hidden = false;
        note.className = 'error';
        replace(note, `The lineage could not be read: ${describe(err)}`);
      }
    };
    void load(null);
    return section;
  }

  // ---- visibility ------------------------------------------------------------------
  // No gallery events on /launcher/events: read again when the person comes back to the panel.
  new IntersectionObserver((entries) => {
    const visible = entries.some((e) => e.isIntersecting);
    if (!visible) stale = true;
    else if (stale && started) void refresh();
  }).observe(element);
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible' && started) void refresh();
  });

  document.body.append(dialog);
  return {
    element,
    start() {
      if (started) return;
      started = true;
      void loadStudios();
      reload();
    },
    refresh: () => void refresh(),
    async openItem(id) {
      element.scrollIntoView({ block: 'start' });
      try {
        const item = await call<Item>(`/launcher/gallery/items/${encodeURIComponent(id)}`);
        records.set(item.id, item);
        trail = [];
        showDetails(item);
        if (!dialog.open) dialog.showModal();
      } catch (err) {
        announce(`Gallery item ${id}: ${describe(err)}`);
        throw err;
      }
    },
  };
}

function describe(err: unknown): string {
  return err instanceof ApiFailure ? `${err.message} (${err.code})` : err instanceof Error ? err.message : String(err);
}

/** A parameter's value in a line: strings as they are, anything else as JSON, both cut at 200 characters. */
function short(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > 200 ? `${s.slice(0, 199)}…` : s;
}
