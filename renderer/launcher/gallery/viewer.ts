import { h, replace } from '../../lib/dom';
import { showMedia, type MediaElement } from '../../lib/media';
import type { GalleryActions } from './actions';
import { editorLink } from './details';
import { preview } from './media';
import type { GalleryState } from './state';
import { nameOf, type Item } from './types';

/**
 * The full-size viewer: one item's file as large as the window allows (an
 * image, a video or a sound with the browser's controls), ← and → for the
 * previous and next item of the grid's order (the next page is read when the
 * last loaded one is passed), S to star, Esc to close. Focus goes back to the
 * tile of the item last shown.
 */

export interface ViewerHooks {
  actions: GalleryActions;
  schedule(): void;
  /** Past the last loaded item: read the next page. */
  loadMore(): void;
  /** The viewer closed on the item at `index`: its tile gets the focus. */
  closed(index: number): void;
  details(item: Item): void;
}

export function createViewer(state: GalleryState, hooks: ViewerHooks) {
  const stage = h('div', { class: 'g-stage', tabindex: -1 });
  const title = h('h2', { id: 'g-viewer-title' });
  const position = h('span', { class: 'muted g-position' });
  const bar = h('div', { class: 'g-toolbar', role: 'toolbar', 'aria-label': 'Item actions' });
  const prev = h('button', { type: 'button', class: 'g-nav', 'aria-label': 'Previous item (←)', 'aria-keyshortcuts': 'ArrowLeft' }, '‹');
  const next = h('button', { type: 'button', class: 'g-nav', 'aria-label': 'Next item (→)', 'aria-keyshortcuts': 'ArrowRight' }, '›');
  const close = h('button', { type: 'button', class: 'g-close', 'aria-label': 'Close the viewer (Esc)' }, '×');
  const dialog = h(
    'dialog',
    { class: 'g-viewer', 'aria-labelledby': 'g-viewer-title' },
    h('div', { class: 'g-viewer-head' }, title, position, close),
    h('div', { class: 'g-viewer-body' }, prev, stage, next),
    bar,
  );
  /** The item drawn, and the record it was drawn from. */
  let drawn: Item | null = null;

  prev.addEventListener('click', () => step(-1));
  next.addEventListener('click', () => step(1));
  close.addEventListener('click', () => dialog.close());
  dialog.addEventListener('keydown', (e) => {
    const inControl = (e.target as HTMLElement).closest('input, textarea, select');
    if (inControl) return;
    if (e.key === 'ArrowLeft' || e.key === 'ArrowRight') {
      // A focused player keeps its own arrow keys (seek) only while it plays.
      const media = (e.target as HTMLElement).closest('video, audio') as HTMLMediaElement | null;
      if (media && !media.paused) return;
      e.preventDefault();
      step(e.key === 'ArrowLeft' ? -1 : 1);
    } else if (!e.ctrlKey && !e.metaKey && !e.altKey && e.key.toLowerCase() === 's' && drawn) {
      e.preventDefault();
      void hooks.actions.star([drawn]);
    }
  });
  dialog.addEventListener('click', (event) => {
    if (event.target === dialog) dialog.close();
  });
  dialog.addEventListener('close', () => {
    for (const m of stage.querySelectorAll('video, audio')) (m as HTMLMediaElement).pause();
    stage.replaceChildren();
    const id = state.viewing;
    state.viewing = null;
    drawn = null;
    const index = id === null ? -1 : state.order.indexOf(id);
    hooks.closed(index >= 0 ? index : state.active);
  });

  function open(index: number): void {
    const id = state.order[index];
    if (id === undefined) return;
    state.viewing = id;
    state.active = index;
    render();
    if (!dialog.open) dialog.showModal();
    stage.focus();
  }

  function step(by: number): void {
    if (state.viewing === null) return;
    const at = state.order.indexOf(state.viewing);
    const to = at + by;
    if (to >= state.order.length - 2 && !state.done) hooks.loadMore();
    if (to < 0 || to >= state.order.length) return;
    state.viewing = state.order[to]!;
    state.active = to;
    hooks.schedule();
    render();
  }

  /** Shows the item in view as it is now (called on every render of the panel). */
  function render(): void {
    if (!dialog.open && state.viewing === null) return;
    if (state.viewing === null) {
      if (dialog.open) dialog.close();
      return;
    }
    const item = state.records.get(state.viewing);
    if (!item) {
      dialog.close();
      return;
    }
    const index = state.order.indexOf(item.id);
    position.textContent = `${index + 1} of ${state.order.length.toLocaleString()}${state.done ? '' : '+'}`;
    prev.disabled = index <= 0;
    next.disabled = index >= state.order.length - 1 && state.done;
    if (drawn === item) return;
    const sameFile = drawn?.asset_id === item.asset_id && drawn.id === item.id;
    drawn = item;
    title.textContent = nameOf(item);
    dialog.dataset.itemId = item.id;
    if (!sameFile) replace(stage, file(item));
    replace(
      bar,
      button(item.starred ? '★ Starred' : '☆ Star', () => void hooks.actions.star([item]), { 'aria-pressed': String(item.starred), 'data-action': 'star' }),
      button('Details', () => {
        dialog.close();
        hooks.details(item);
      }),
      button('Download', () => void hooks.actions.download(item)),
      editorLink(item),
    );
  }

  function file(item: Item): HTMLElement {
    let el: HTMLElement;
    const failed = () => el.replaceWith(h('p', { class: 'error' }, 'The file did not load (it may have been reclaimed).'));
    if (item.kind === 'image') el = h('img', { alt: nameOf(item), class: 'g-full' });
    else if (item.kind === 'video') el = h('video', { controls: true, preload: 'metadata', class: 'g-full' });
    else if (item.kind === 'audio') el = h('audio', { controls: true, preload: 'metadata' });
    else el = h('p', { class: 'muted' }, 'No preview for this kind of file: use Download.');
    if (el instanceof HTMLImageElement || el instanceof HTMLMediaElement) showMedia(el as MediaElement, item.asset_id, 'file', failed);
    if (item.kind === 'audio') return h('div', { class: 'g-sound' }, preview(item, 'g-wave'), el);
    return el;
  }

  return { dialog, open, render, isOpen: () => dialog.open };
}

function button(label: string, run: () => void, attrs: Record<string, string> = {}): HTMLButtonElement {
  const b = h('button', { type: 'button', ...attrs }, label);
  b.addEventListener('click', run);
  return b;
}
