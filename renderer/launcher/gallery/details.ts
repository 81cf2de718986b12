import { call, query, type Page } from '../../lib/api';
import { h, replace } from '../../lib/dom';
import { when } from '../../lib/format';
import { openMedia, showMedia, type MediaElement } from '../../lib/media';
import { describe, type GalleryActions } from './actions';
import { itemHandoffs } from '../handoffs/item-list';
import { preview } from './media';
import { nameOf, parseTags, type Item } from './types';

/**
 * The details dialog: the item's media, its fields, an edit form (title and
 * tags; Save sends one PATCH), Star, Download, Copy prompt / parameters, Open
 * in editor for an export, Delete; lineage up ("Made from") and down
 * ("Used in") as thumbnails, each opening that item here with a Back button;
 * and the item's handoffs to other studios (handoffs/item-list.ts).
 */

export interface DetailsHooks {
  actions: GalleryActions;
  /** The record as it is now (it may have changed since the dialog opened). */
  current(id: string): Item | undefined;
  remember(item: Item): void;
  /** A tag button: filter the grid by it. */
  filterByTag(tag: string): void;
  openViewer(item: Item): void;
}

export function createDetails(hooks: DetailsHooks) {
  const dialog = h('dialog', { class: 'g-details', 'aria-labelledby': 'g-details-title' });
  /** Items shown before the current one (lineage clicks), for Back. */
  let trail: Item[] = [];
  let shown: Item | null = null;

  dialog.addEventListener('click', (event) => {
    if (event.target === dialog) dialog.close(); // a click on the backdrop
  });
  dialog.addEventListener('close', () => {
    dialog.replaceChildren();
    shown = null;
  });

  function open(item: Item): void {
    trail = [];
    show(item);
    if (!dialog.open) dialog.showModal();
  }

  /** The record changed (an event, a save): the fields follow unless the person is typing in them. */
  function refresh(): void {
    if (!shown || !dialog.open) return;
    const now = hooks.current(shown.id);
    if (!now || now === shown) return;
    if (dialog.querySelector('.g-edit')?.contains(document.activeElement)) return;
    show(now, false);
  }

  function show(item: Item, focusClose = true): void {
    shown = item;
    const close = h('button', { type: 'button', class: 'g-close', 'aria-label': 'Close details' }, '×');
    close.addEventListener('click', () => dialog.close());
    const back = trail.length > 0 ? h('button', { type: 'button', class: 'g-back' }, `← ${nameOf(trail[trail.length - 1]!)}`) : null;
    back?.addEventListener('click', () => show(trail.pop()!));
    const prompt = typeof item.params.prompt === 'string' ? item.params.prompt : null;
    const other = Object.entries(item.params).filter(([k]) => k !== 'prompt');
    const tagButtons = item.tags.map((tag) => {
      const b = h('button', { type: 'button', class: 'g-tag', 'aria-label': `Show items tagged ${tag}` }, tag);
      b.addEventListener('click', () => {
        dialog.close();
        hooks.filterByTag(tag);
      });
      return b;
    });
    const up = lineageList('Made from', 'Nothing recorded as its input came from the gallery.', `/launcher/gallery/items/${encodeURIComponent(item.id)}/lineage`, item);
    const down = lineageList('Used in', 'Nothing was made from it yet.', `/launcher/assets/${encodeURIComponent(item.asset_id)}/lineage`, item);
    replace(
      dialog,
      h('div', { class: 'g-details-head' }, back, h('h2', { id: 'g-details-title' }, nameOf(item)), close),
      toolbar(item),
      h(
        'div',
        { class: 'g-details-body' },
        media(item),
        h(
          'div',
          { class: 'g-fields' },
          editForm(item),
          h(
            'dl',
            {},
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
      itemHandoffs(item.id),
    );
    if (focusClose) close.focus();
  }

  function toolbar(item: Item): HTMLElement {
    const { actions } = hooks;
    const button = (label: string, run: () => void, attrs: Record<string, string> = {}) => {
      const b = h('button', { type: 'button', ...attrs }, label);
      b.addEventListener('click', run);
      return b;
    };
    const prompt = typeof item.params.prompt === 'string';
    return h(
      'div',
      { class: 'g-toolbar', role: 'toolbar', 'aria-label': 'Item actions' },
      button(item.starred ? '★ Starred' : '☆ Star', () => void actions.star([item]), { 'aria-pressed': String(item.starred), 'data-action': 'star' }),
      button('View full size', () => hooks.openViewer(item), { 'data-action': 'view' }),
      button('Download', () => void actions.download(item), { 'data-action': 'download' }),
      prompt ? button('Copy prompt', () => void actions.copyPrompt(item), { 'data-action': 'copy-prompt' }) : null,
      button('Copy parameters', () => void actions.copyParams(item), { 'data-action': 'copy-params' }),
      editorLink(item),
      button('Delete', () => {
        dialog.close();
        actions.remove([item]);
      }, { class: 'danger', 'data-action': 'delete' }),
    );
  }

  function editForm(item: Item): HTMLElement {
    const title = h('input', { type: 'text', name: 'title', value: item.title ?? '', maxlength: 1000, autocomplete: 'off' });
    const tags = h('input', { type: 'text', name: 'tags', value: item.tags.join(', '), autocomplete: 'off', spellcheck: 'false' });
    const save = h('button', { type: 'submit' }, 'Save');
    const form = h(
      'form',
      { class: 'g-edit', 'aria-label': 'Edit title and tags' },
      h('label', { class: 'g-field' }, h('span', {}, 'Title'), title),
      h('label', { class: 'g-field' }, h('span', {}, 'Tags (comma-separated)'), tags),
      save,
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const nextTitle = title.value.trim() === '' ? null : title.value;
      const nextTags = parseTags(tags.value);
      save.disabled = true;
      void hooks.actions.edit(item, { title: nextTitle, tags: nextTags }).finally(() => {
        save.disabled = false;
        const now = hooks.current(item.id);
        if (now && dialog.open) {
          show(now, false);
          dialog.querySelector<HTMLButtonElement>('.g-edit button[type="submit"]')?.focus();
        }
      });
    });
    return form;
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
    const wave = item.kind === 'audio' ? preview(item, 'g-wave') : null;
    return h('figure', { class: 'g-media' }, wave, el, h('figcaption', {}, link));
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
          hooks.remember(item);
          const b = h('button', { type: 'button', class: 'g-lineage-item', 'data-item-id': item.id, 'aria-label': `${nameOf(item)}, ${item.studio_id}` }, preview(item, 'g-lineage-thumb'), h('span', { class: 'g-lineage-name' }, nameOf(item)));
          b.addEventListener('click', () => {
            trail.push(from);
            show(item);
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

  return { dialog, open, refresh, isOpen: () => dialog.open, close: () => dialog.close() };
}

/** "Open in editor" for an item exported from a sequence: the editor page, in a new tab (in the desktop app, the editor window). */
export function editorLink(item: Item): HTMLElement | null {
  if (!item.timeline_id) return null;
  return h('a', { class: 'button', href: `/editor/#${encodeURIComponent(item.timeline_id)}`, target: '_blank', rel: 'noopener', 'data-action': 'open-in-editor' }, 'Open in editor');
}

/** A parameter's value in a line: strings as they are, anything else as JSON, both cut at 200 characters. */
function short(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > 200 ? `${s.slice(0, 199)}…` : s;
}
