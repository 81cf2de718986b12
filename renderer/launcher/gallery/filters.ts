import { call, query, type Page } from '../../lib/api';
import { h } from '../../lib/dom';
import type { GalleryState } from './state';
import { parseTags, type Filters, type Item } from './types';

/**
 * The search and filter form: `q` (sent DEBOUNCE_MS after the last
 * keystroke), tag (comma-separated; suggests the tags seen), studio (from
 * `/launcher/studios`, plus any studio the items name) and "Starred only".
 * Each change starts a new list (`reload`).
 */

const DEBOUNCE_MS = 250;

export function createFilters(state: GalleryState, reload: () => void) {
  const qField = h('input', { id: 'g-q', type: 'search', placeholder: 'Search titles and prompts', autocomplete: 'off', spellcheck: 'false' });
  const tagField = h('input', { id: 'g-tag', type: 'text', list: 'g-tags', placeholder: 'any', autocomplete: 'off', spellcheck: 'false' });
  const tagList = h('datalist', { id: 'g-tags' });
  const studioField = h('select', { id: 'g-studio' }, h('option', { value: '' }, 'All studios'));
  const starredField = h('input', { id: 'g-starred', type: 'checkbox' });
  const clearButton = h('button', { type: 'button' }, 'Clear filters');
  const form = h(
    'form',
    { class: 'g-filters', role: 'search', 'aria-label': 'Search and filter the gallery' },
    h('label', { class: 'g-field g-search' }, h('span', {}, 'Search'), qField),
    h('label', { class: 'g-field' }, h('span', {}, 'Tag'), tagField),
    h('label', { class: 'g-field' }, h('span', {}, 'Studio'), studioField),
    h('div', { class: 'g-filter-actions' }, h('label', { class: 'check g-starred' }, starredField, ' Starred only'), clearButton),
    tagList,
  );

  const current = (): Filters => ({ q: qField.value.trim(), tags: parseTags(tagField.value), studio: studioField.value, starred: starredField.checked });
  const filtered = () => {
    const f = current();
    return f.q !== '' || f.tags.length > 0 || f.studio !== '' || f.starred;
  };

  function addStudio(id: string, name: string): void {
    const existing = [...studioField.options].find((o) => o.value === id);
    if (existing) {
      existing.textContent = name;
      return;
    }
    const option = h('option', { value: id }, name);
    const after = [...studioField.options].slice(1).find((o) => o.textContent!.localeCompare(name) > 0);
    studioField.insertBefore(option, after ?? null);
  }

  /** An item arrived: its studio and tags join the suggestions. */
  function learn(item: Item): void {
    if (!state.studioIds.has(item.studio_id)) {
      state.studioIds.add(item.studio_id);
      addStudio(item.studio_id, item.studio_id);
    }
    for (const tag of item.tags) {
      if (state.tagsSeen.size >= 500 || state.tagsSeen.has(tag)) continue;
      state.tagsSeen.add(tag);
      tagList.append(h('option', { value: tag }));
    }
  }

  async function loadStudios(): Promise<void> {
    try {
      const page = await call<Page<{ id: string; name: string }>>(`/launcher/studios${query({ limit: 500 })}`);
      for (const s of page.items) {
        state.studioIds.add(s.id);
        addStudio(s.id, s.name);
      }
    } catch {
      // The studio filter still lists the studios the items name; the list shows its own failures.
    }
  }

  function clear(): void {
    qField.value = '';
    tagField.value = '';
    studioField.value = '';
    starredField.checked = false;
    reload();
    qField.focus();
  }

  /** Shows the items with this tag (a tag in the details). */
  function byTag(tag: string): void {
    tagField.value = tag;
    reload();
    tagField.focus();
  }

  let typing = 0;
  const debounced = () => {
    clearTimeout(typing);
    typing = window.setTimeout(reload, DEBOUNCE_MS);
  };
  qField.addEventListener('input', debounced);
  tagField.addEventListener('input', debounced);
  studioField.addEventListener('change', reload);
  starredField.addEventListener('change', reload);
  clearButton.addEventListener('click', clear);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    clearTimeout(typing);
    reload();
  });

  return { form, current, filtered, learn, loadStudios, clear, byTag, tagField };
}
