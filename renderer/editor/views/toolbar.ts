import { h } from '../../lib/dom';
import { keyHelp } from '../actions/commands';
import { redo, splitAtPlayhead, undo } from '../actions/edits';
import { say } from '../actions/notice';
import { fitZoom, setPlayhead, setZoom, togglePlay, toggleSnap } from '../actions/transport';
import { parseTime, ZOOMS } from '../frames';
import { px, tc, view } from '../read';
import { player } from './viewer';
import { zoomFits } from './timeline';

const undoButton = h('button', { type: 'button', 'aria-keyshortcuts': 'Control+Z Meta+Z' }, 'Undo');
const redoButton = h('button', { type: 'button', 'aria-keyshortcuts': 'Control+Shift+Z Meta+Shift+Z Control+Y' }, 'Redo');
const splitButton = h('button', { type: 'button', 'aria-keyshortcuts': 'S' }, 'Split');
const playButton = h('button', { type: 'button', class: 'primary', 'aria-keyshortcuts': 'Space' }, 'Play');
const playheadField = h('input', { type: 'text', id: 'playhead-field', class: 'time', inputmode: 'numeric', autocomplete: 'off', spellcheck: 'false' });
const zoomOut = h('button', { type: 'button', 'aria-label': 'Zoom out', 'aria-keyshortcuts': '-' }, '−');
const zoomIn = h('button', { type: 'button', 'aria-label': 'Zoom in', 'aria-keyshortcuts': '+' }, '+');
const zoomFit = h('button', { type: 'button' }, 'Fit');
const zoomLabel = h('span', { class: 'muted zoom-label', 'aria-live': 'polite' });
const snapBox = h('input', { type: 'checkbox', id: 'snap', checked: true, 'aria-keyshortcuts': 'N' });

export const toolbar = h(
  'div',
  { class: 'toolbar', role: 'toolbar', 'aria-label': 'Editing' },
  undoButton,
  redoButton,
  splitButton,
  playButton,
  h('label', { for: 'playhead-field', class: 'inline' }, 'Playhead'),
  playheadField,
  h('span', { class: 'group', role: 'group', 'aria-label': 'Zoom' }, zoomOut, zoomLabel, zoomIn, zoomFit),
  h('label', { class: 'inline check' }, snapBox, 'Snap to edges'),
);

/** The on-screen keys, from the command table. */
export const keyList = h(
  'ul',
  { class: 'muted keys', 'aria-label': 'Keys' },
  ...keyHelp().map(([keys, what]) => h('li', {}, h('kbd', {}, keys), ` ${what}`)),
);

function zoomText(): string {
  const p = px();
  return p >= 1 ? `${p} px per frame` : `1 px = ${Math.round(1 / p)} frames`;
}

export function drawToolbar(): void {
  zoomLabel.textContent = zoomText();
  zoomIn.disabled = view.zoom === 0 || !zoomFits(view.zoom - 1);
  zoomOut.disabled = view.zoom === ZOOMS.length - 1;
  snapBox.checked = view.snapping;
  undoButton.disabled = view.undo.length === 0;
  redoButton.disabled = view.redo.length === 0;
  undoButton.title = view.undo.length ? `Undo: ${view.undo[view.undo.length - 1]!.description}` : 'Nothing of this page to undo';
  redoButton.title = view.redo.length ? `Redo: ${view.redo[view.redo.length - 1]!.description}` : 'Nothing to redo';
  playButton.textContent = player.playing ? 'Pause' : 'Play';
}

/** The playhead's field follows the playhead, except while the person types in it. */
export function drawPlayheadField(): void {
  if (document.activeElement !== playheadField) playheadField.value = tc(view.playhead);
}

export function wireToolbar(): void {
  undoButton.addEventListener('click', () => void undo());
  redoButton.addEventListener('click', () => void redo());
  splitButton.addEventListener('click', () => splitAtPlayhead());
  playButton.addEventListener('click', () => togglePlay());
  zoomIn.addEventListener('click', () => setZoom(view.zoom - 1));
  zoomOut.addEventListener('click', () => setZoom(view.zoom + 1));
  zoomFit.addEventListener('click', () => fitZoom());
  snapBox.addEventListener('change', () => toggleSnap(snapBox.checked, false));
  playheadField.addEventListener('change', () => {
    const f = parseTime(playheadField.value, view.rate);
    if (f === null) {
      say('The playhead takes a time as HH:MM:SS:FF or a number of frames.');
      playheadField.value = tc(view.playhead);
    } else setPlayhead(f);
  });
}
