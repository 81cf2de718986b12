import { h, replace } from '../../lib/dom';
import { nudge, removeSelected, setClipTimes, trimToPlayhead } from '../actions/edits';
import { clipName, frames, selectedClip, tc, view } from '../read';

/** The selected clip by the numbers: start, in and duration as timecode, and buttons for the clip's commands. */
export const inspector = h('section', { class: 'panel inspector', 'aria-labelledby': 'inspector-title' });

function timeField(id: string, label: string, value: number, hint: string): HTMLElement {
  return h(
    'div',
    { class: 'field' },
    h('label', { for: id }, label),
    h('input', { type: 'text', id, class: 'time', value: tc(value), autocomplete: 'off', spellcheck: 'false', 'aria-describedby': `${id}-hint` }),
    h('span', { id: `${id}-hint`, class: 'muted hint' }, hint),
  );
}

export function drawInspector(): void {
  const c = selectedClip();
  const selection = view.selection;
  if (!c || !selection) {
    replace(inspector, h('h3', { id: 'inspector-title' }, 'Clip'), h('p', { class: 'muted' }, 'Select a clip (click it, or Tab to it) to move, trim or delete it by the numbers.'));
    return;
  }
  const { track, index } = selection;
  const form = h(
    'form',
    { class: 'clip-form' },
    h('p', {}, h('strong', {}, clipName(c)), h('span', { class: 'muted' }, ` on ${track}, clip ${index + 1}${view.selected.size > 1 ? ` (${view.selected.size} clips selected: buttons and keys act on all)` : ''}`)),
    h(
      'div',
      { class: 'fields' },
      timeField('clip-start', 'Start', frames(c.start), 'on the timeline'),
      timeField('clip-in', 'In', frames(c.in), 'into the source'),
      timeField('clip-duration', 'Duration', frames(c.duration), 'on the timeline'),
    ),
    h('p', { class: 'muted hint' }, 'HH:MM:SS:FF, or a number of frames.'),
  );
  const apply = h('button', { type: 'submit', class: 'primary' }, 'Apply');
  const earlier = h('button', { type: 'button', 'aria-label': 'Move one frame earlier' }, '◀ 1 frame');
  const later = h('button', { type: 'button', 'aria-label': 'Move one frame later' }, '1 frame ▶');
  const trimIn = h('button', { type: 'button', 'aria-keyshortcuts': '[' }, 'Trim start to playhead');
  const trimOut = h('button', { type: 'button', 'aria-keyshortcuts': ']' }, 'Trim end to playhead');
  const many = view.selected.size > 1;
  const remove = h('button', { type: 'button', class: 'danger', 'aria-keyshortcuts': 'Delete' }, many ? `Delete ${view.selected.size} clips` : 'Delete clip');
  const ripple = h('button', { type: 'button', class: 'danger', 'aria-keyshortcuts': 'Shift+Delete' }, many ? `Ripple delete ${view.selected.size} clips` : 'Ripple delete');
  earlier.addEventListener('click', () => nudge(track, index, -1));
  later.addEventListener('click', () => nudge(track, index, 1));
  trimIn.addEventListener('click', () => trimToPlayhead(track, index, 'start'));
  trimOut.addEventListener('click', () => trimToPlayhead(track, index, 'end'));
  remove.addEventListener('click', () => removeSelected(false));
  ripple.addEventListener('click', () => removeSelected(true));
  form.append(h('div', { class: 'actions' }, apply, earlier, later, trimIn, trimOut, remove, ripple));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const read = (id: string) => form.querySelector<HTMLInputElement>(`#${id}`)!.value;
    setClipTimes(track, index, c, { start: read('clip-start'), in: read('clip-in'), duration: read('clip-duration') });
  });
  replace(inspector, h('h3', { id: 'inspector-title' }, 'Clip'), form);
}
