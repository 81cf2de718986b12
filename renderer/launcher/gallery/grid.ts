import { h } from '../../lib/dom';
import { preview } from './media';
import type { GalleryState } from './state';
import { nameOf, type Item } from './types';

/**
 * The grid, windowed by rows: only the rows near the viewport (and the row of
 * the focused tile) are in the DOM; a spacer of the full height keeps the
 * scrollbar true. With 100,000 items the page holds a few dozen tiles. The
 * grid is one tab stop (roving tabindex). It only reads the state.
 */

/** Layout of the window; the CSS (gallery.css) draws the same sizes. */
const MIN_TILE = 170;
const GAP = 12;
const CAPTION = 54;
const PAD = 12;
/** Rows kept above and below the visible ones. */
const OVERSCAN = 3;
/** The next page is asked for this far (px) before the end is in view. */
const AHEAD = 900;

export function createGrid(state: GalleryState) {
  const grid = h('div', {
    class: 'g-grid',
    role: 'grid',
    'aria-label': 'Gallery items, newest first',
    'aria-describedby': 'g-help',
    'aria-multiselectable': 'true',
    'aria-rowcount': -1,
  });
  const sentinel = h('div', { class: 'g-sentinel', 'aria-hidden': 'true' });
  const more = h('div', { class: 'g-more', hidden: true });
  const scroller = h('div', { class: 'g-scroller' }, grid, sentinel, more);
  const rendered = new Map<number, HTMLElement>();
  state.rowH = MIN_TILE + CAPTION + GAP;
  state.tileW = MIN_TILE;
  /** Tiles drawn for an item as it was (a changed item is drawn again). */
  const drawnFrom = new WeakMap<HTMLElement, Item>();

  function measure(): boolean {
    const width = Math.max(0, scroller.clientWidth - 2 * PAD);
    const cols = Math.max(1, Math.floor((width + GAP) / (MIN_TILE + GAP)));
    const tile = (width - GAP * (cols - 1)) / cols;
    const row = Math.round(tile * 0.75) + CAPTION + GAP;
    const changed = cols !== state.cols || row !== state.rowH;
    state.cols = cols;
    state.tileW = tile;
    state.rowH = row;
    return changed;
  }

  function clearRows(): void {
    for (const row of rendered.values()) row.remove();
    rendered.clear();
  }

  const rowCount = () => Math.ceil(state.order.length / state.cols);
  const nearEnd = () => scroller.scrollTop + scroller.clientHeight + AHEAD >= rowCount() * state.rowH;
  const tileAt = (index: number) => grid.querySelector<HTMLElement>(`.g-tile[data-index="${index}"]`);

  function render(): void {
    const hadFocus = grid.contains(document.activeElement);
    if (measure()) clearRows();
    const { cols, rowH, order } = state;
    const rows = rowCount();
    grid.style.height = `${rows * rowH + PAD}px`;
    grid.setAttribute('aria-rowcount', state.done ? String(rows) : '-1');
    grid.setAttribute('aria-colcount', String(cols));
    grid.dataset.loaded = String(order.length);
    grid.dataset.state = state.failure ? 'failed' : state.loading ? 'loading' : state.done ? 'done' : 'more';
    grid.dataset.selected = String(state.selected.size);
    // The sentinel covers the last AHEAD px of the list: a jump to the end lands in it too.
    sentinel.style.top = `${Math.max(0, rows * rowH + PAD - AHEAD)}px`;
    sentinel.style.height = `${Math.min(AHEAD, rows * rowH + PAD)}px`;

    state.active = Math.min(state.active, Math.max(0, order.length - 1));
    const first = Math.max(0, Math.floor(scroller.scrollTop / rowH) - OVERSCAN);
    const last = Math.min(rows - 1, Math.floor((scroller.scrollTop + scroller.clientHeight) / rowH) + OVERSCAN);
    const wanted = new Set<number>();
    for (let r = first; r <= last; r++) wanted.add(r);
    if (order.length > 0) wanted.add(Math.floor(state.active / cols)); // the tab stop is always in the page
    for (const [r, row] of rendered) {
      if (!wanted.has(r) || !rowIsCurrent(row, r)) {
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
      const index = Number(tile.dataset.index);
      const mine = index === state.active;
      tile.tabIndex = mine ? 0 : -1;
      tile.classList.toggle('active', mine);
      const selected = state.selected.has(tile.dataset.itemId!);
      tile.classList.toggle('selected', selected);
      tile.setAttribute('aria-selected', String(selected));
    }
    if (hadFocus && !grid.contains(document.activeElement)) tileAt(state.active)?.focus({ preventScroll: true });
  }

  /** A row still shows the items at its places, as they are now. */
  function rowIsCurrent(row: HTMLElement, r: number): boolean {
    const start = r * state.cols;
    const count = Math.min(state.cols, state.order.length - start);
    if (Number(row.dataset.count) !== count) return false;
    const tiles = row.children;
    for (let i = 0; i < count; i++) {
      const tile = tiles[i] as HTMLElement | undefined;
      const id = state.order[start + i];
      if (!tile || tile.dataset.itemId !== id || drawnFrom.get(tile) !== state.records.get(id!)) return false;
    }
    return true;
  }

  function renderRow(r: number): HTMLElement {
    const { cols, rowH, tileW, order } = state;
    const start = r * cols;
    const count = Math.min(cols, order.length - start);
    const row = h('div', { class: 'g-row', role: 'row', 'aria-rowindex': r + 1, 'data-row': r, 'data-count': count });
    row.style.transform = `translateY(${r * rowH + PAD}px)`;
    row.style.height = `${rowH - GAP}px`;
    row.style.gridTemplateColumns = `repeat(${cols}, ${tileW}px)`;
    for (let i = start; i < start + count; i++) row.append(renderTile(state.records.get(order[i]!)!, i));
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
        'aria-colindex': (index % state.cols) + 1,
        'aria-selected': 'false',
        'data-index': index,
        'data-item-id': item.id,
        'aria-label': `${name}, ${item.studio_id}, ${item.kind}${item.starred ? ', starred' : ''}${item.tags.length ? `, tags ${item.tags.join(', ')}` : ''}`,
      },
      preview(item, 'g-thumb'),
      h('span', { class: 'g-check', 'aria-hidden': 'true' }),
      h(
        'div',
        { class: 'g-caption', 'aria-hidden': 'true' },
        h('span', { class: 'g-title', title: name }, item.starred ? h('span', { class: 'g-star' }, '★ ') : null, name),
        h('span', { class: 'g-meta muted' }, `${item.studio_id} · ${item.kind}${item.tags.length ? ` · ${item.tags.join(', ')}` : ''}`),
      ),
    );
    drawnFrom.set(tile, item);
    const thumbH = Math.round(state.tileW * 0.75);
    tile.style.height = `${thumbH + CAPTION}px`;
    tile.querySelector<HTMLElement>('.g-thumb')!.style.height = `${thumbH}px`;
    return tile;
  }

  /** Scrolls the row of `index` into view. */
  function reveal(index: number): void {
    const top = Math.floor(index / state.cols) * state.rowH;
    if (top < scroller.scrollTop) scroller.scrollTop = top;
    else if (top + state.rowH + PAD > scroller.scrollTop + scroller.clientHeight) scroller.scrollTop = top + state.rowH + PAD - scroller.clientHeight;
  }

  /** `count` items went in front: the same items stay where they were on the screen. */
  function shifted(count: number): void {
    const rows = Math.floor((state.active) / state.cols) - Math.floor((state.active - count) / state.cols);
    if (scroller.scrollTop > 0) scroller.scrollTop += rows * state.rowH;
    clearRows();
  }

  const perPage = () => state.cols * Math.max(1, Math.floor(scroller.clientHeight / state.rowH));

  return { grid, scroller, sentinel, more, render, clearRows, nearEnd, tileAt, reveal, shifted, perPage };
}

export type GalleryGrid = ReturnType<typeof createGrid>;
