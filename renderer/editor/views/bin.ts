import { h } from '../../lib/dom';
import { mediaUrl } from '../../lib/media';
import { measured } from '../actions/bin';
import { addClip } from '../actions/edits';
import { tc, view, type BinItem } from '../read';
import { BIN_TYPE } from './timeline';

/** The media bin: the studio's pictures and sound (its own, and those other studios handed it), dragged onto a track (Shift: insert) or added at the playhead. */

const list = h('ul', { class: 'bin-list', 'aria-label': 'Media of the studio' });
const note = h('p', { class: 'muted bin-note' });
export const binPanel = h(
  'section',
  { class: 'panel bin', 'aria-labelledby': 'bin-title' },
  h('h3', { id: 'bin-title' }, 'Media bin'),
  h('p', { class: 'muted hint' }, 'Drag onto a track (Shift: insert and ripple), or add at the playhead.'),
  note,
  list,
);

const measuring = new Set<string>();

/** Video and sound tell their length through a media element reading only the file's header. */
function measure(item: BinItem): void {
  if (item.length !== null || measuring.has(item.asset_id)) return;
  measuring.add(item.asset_id);
  const el = document.createElement(item.kind === 'audio' ? 'audio' : 'video');
  el.preload = 'metadata';
  el.muted = true;
  const done = () => {
    measuring.delete(item.asset_id);
    el.removeAttribute('src');
    el.load();
  };
  el.addEventListener('loadedmetadata', () => {
    measured(item.asset_id, el.duration);
    done();
  }, { once: true });
  el.addEventListener('error', done, { once: true });
  void mediaUrl(item.asset_id, 'file').then((url) => (url ? (el.src = url) : done()), done);
}

function row(item: BinItem): HTMLElement {
  const ready = item.length !== null;
  const track = item.kind === 'audio' ? 'A1' : 'V1';
  const add = h('button', { type: 'button', disabled: !ready, 'aria-label': `Add ${item.title} to ${track} at the playhead` }, `Add to ${track}`);
  add.addEventListener('click', () => addClip(track, item.asset_id, view.playhead, item.length!, false, item.title));
  const li = h(
    'li',
    { class: `bin-item bin-${item.kind}`, draggable: ready ? 'true' : 'false', 'data-asset': item.asset_id },
    h('span', { class: 'bin-kind', 'aria-hidden': 'true' }, item.kind === 'audio' ? '♪' : item.kind === 'video' ? '▶' : '▣'),
    h('span', { class: 'bin-title', title: item.title }, item.title),
    h('span', { class: 'muted bin-length' }, ready ? tc(item.length!) : 'measuring…'),
    add,
  );
  li.addEventListener('dragstart', (e) => {
    if (!ready || !e.dataTransfer) return;
    e.dataTransfer.setData(BIN_TYPE, JSON.stringify({ asset_id: item.asset_id, kind: item.kind, length: item.length, title: item.title }));
    e.dataTransfer.effectAllowed = 'copy';
  });
  return li;
}

export function drawBin(): void {
  const b = view.bin;
  note.textContent = b.error ?? (b.loading && b.items.length === 0 ? 'Loading…' : b.items.length === 0 ? `${b.studio ?? 'The studio'} has no pictures or sound in the gallery yet.` : '');
  list.replaceChildren(...b.items.map(row));
  for (const item of b.items) measure(item);
}
