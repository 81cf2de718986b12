import { h, replace } from '../../lib/dom';
import { when } from '../../lib/format';
import { loadSequences, openSequence, searchSequences, showBrowser } from '../actions/sequences';
import { frameRate, secondsToFrames, timecode } from '../frames';
import { clipCount, view } from '../read';
import type { Timeline } from '../types';

/** The sequence browser: every studio's sequences, searched by name and studio, each opened with one click. */

const search = h('input', { type: 'search', id: 'seq-search', placeholder: 'Name contains…', autocomplete: 'off', spellcheck: 'false' });
const studioSelect = h('select', { id: 'seq-studio' });
const list = h('ul', { class: 'seq-list', 'aria-label': 'Sequences, the most recently changed first' });
const more = h('button', { type: 'button', hidden: true }, 'More');
const note = h('p', { class: 'muted seq-note', role: 'status' });
export const browserToggle = h('button', { type: 'button', 'aria-expanded': 'true', 'aria-controls': 'seq-browser' }, 'Sequences');

export const browserPanel = h(
  'section',
  { class: 'panel seq-browser', id: 'seq-browser', 'aria-labelledby': 'seq-browser-title' },
  h('h2', { id: 'seq-browser-title' }, 'Open a sequence'),
  h(
    'form',
    { class: 'seq-search', role: 'search' },
    h('label', { for: 'seq-search' }, 'Name'),
    search,
    h('label', { for: 'seq-studio' }, 'Studio'),
    studioSelect,
  ),
  note,
  list,
  more,
);

function row(t: Timeline): HTMLElement {
  const rate = frameRate(t.target.fps);
  const current = view.tl?.id === t.id;
  const open = h('button', { type: 'button', class: current ? '' : 'primary', 'aria-label': `Open ${t.name} from ${t.studio_id}` }, current ? 'Open now' : 'Open');
  open.addEventListener('click', () => void openSequence(t.id));
  return h(
    'li',
    { class: `seq${current ? ' current' : ''}`, 'data-sequence': t.id, ...(current ? { 'aria-current': 'true' } : {}) },
    h('span', { class: 'seq-name' }, t.name),
    h('span', { class: 'muted seq-meta' }, `${t.studio_id} · ${clipCount(t.tracks)} clip(s) · ${timecode(secondsToFrames(t.duration, rate), rate)} · changed ${when(t.updated_at)}`),
    open,
  );
}

export function drawBrowser(): void {
  const b = view.browser;
  browserPanel.hidden = !b.shown;
  browserToggle.setAttribute('aria-expanded', String(b.shown));
  browserToggle.textContent = b.shown && view.tl ? 'Hide sequences' : 'Sequences';
  if (!b.shown) return;
  const options = ['', ...b.studios.filter((s) => s !== '')];
  if (b.studio && !options.includes(b.studio)) options.push(b.studio);
  if (studioSelect.options.length !== options.length || [...studioSelect.options].some((o, i) => o.value !== options[i])) {
    replace(studioSelect, ...options.map((s) => h('option', { value: s }, s || 'Every studio')));
  }
  studioSelect.value = b.studio;
  if (document.activeElement !== search) search.value = b.q;
  list.setAttribute('aria-busy', String(b.loading));
  note.textContent = b.error ?? (b.loading && b.items.length === 0 ? 'Loading…' : b.items.length === 0 ? (b.q || b.studio ? 'No sequence matches.' : 'No sequence yet: a studio makes one with POST /timeline.') : '');
  note.classList.toggle('error', b.error !== null);
  list.replaceChildren(...b.items.map(row));
  more.hidden = b.next === null;
}

export function wireBrowser(): void {
  let typing = 0;
  // A search per pause in typing, not per key.
  search.addEventListener('input', () => {
    clearTimeout(typing);
    typing = window.setTimeout(() => searchSequences(search.value, studioSelect.value), 250);
  });
  search.closest('form')!.addEventListener('submit', (e) => {
    e.preventDefault();
    clearTimeout(typing);
    searchSequences(search.value, studioSelect.value);
  });
  studioSelect.addEventListener('change', () => searchSequences(search.value, studioSelect.value));
  more.addEventListener('click', () => void loadSequences(true));
  browserToggle.addEventListener('click', () => showBrowser());
}
