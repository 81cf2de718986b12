import { ApiFailure, call, query, type Page } from '../../lib/api';
import { h, replace } from '../../lib/dom';
import { when } from '../../lib/format';
import { studioName } from './facts';
import type { Handoff } from '../../lib/api-types';
import { itemHandoffWords } from './words';

/**
 * An item's handoffs in its gallery details (`GET /launcher/handoffs?item_id=`): to whom,
 * in which state, since when; newest first, 24 at a time with "Show more".
 */
export function itemHandoffs(itemId: string): HTMLElement {
  const list = h('ul', { class: 'item-handoffs', 'aria-labelledby': 'g-handoffs-title' });
  const note = h('p', { class: 'muted' }, 'Loading…');
  const section = h('section', { class: 'g-handoffs-section' }, h('h3', { id: 'g-handoffs-title' }, 'Handoffs'), list, note);
  const load = async (cursor: string | null) => {
    try {
      const page = await call<Page<Handoff>>(`/launcher/handoffs${query({ item_id: itemId, limit: 24, cursor })}`);
      if (!section.isConnected && cursor) return;
      for (const ho of page.items) {
        list.append(
          h(
            'li',
            { 'data-handoff': ho.id, 'data-state': ho.state },
            h('span', {}, itemHandoffWords(studioName(ho.from), studioName(ho.to), ho.state)),
            h('span', { class: 'muted' }, ' · '),
            h('time', { class: 'muted', datetime: ho.updated_at }, when(ho.updated_at)),
          ),
        );
      }
      if (page.next_cursor) {
        const more = h('button', { type: 'button' }, 'Show more');
        more.addEventListener('click', () => {
          replace(note, 'Loading…');
          void load(page.next_cursor);
        });
        replace(note, more);
      } else replace(note, list.children.length === 0 ? 'Not sent to another studio.' : '');
      note.hidden = note.textContent === '' && !page.next_cursor;
    } catch (err) {
      note.hidden = false;
      note.className = 'error';
      replace(note, `The handoffs could not be read: ${err instanceof ApiFailure ? err.message : String(err)}`);
    }
  };
  void load(null);
  return section;
}
