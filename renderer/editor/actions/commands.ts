import { totalFrames } from '../read';
import { state } from '../state';
import { moveSelectedBy, moveToTrack, nudge, redo, removeSelected, select, selectMany, splitAtPlayhead, trimToPlayhead, undo } from './edits';
import { playInToOut, setMark, setPlayhead, setZoom, shuttleKey, stepPlayhead, togglePlay, toggleSnap } from './transport';

/**
 * The page's named commands and their keys, in one table: the key handlers
 * dispatch through it and the on-screen key list is drawn from it, so the two
 * cannot disagree. A command's scope says where its keys work: anywhere on
 * the page, on a focused clip, or on the focused ruler (the playhead).
 */

export interface ClipTarget {
  track: string;
  index: number;
}

export interface Command {
  id: string;
  /** What the on-screen list says, after the keys ('' keeps it off the list). */
  label: string;
  /** The keys as the on-screen list shows them. */
  keys: string;
  scope: 'page' | 'clip' | 'ruler';
  /** Whether this key event is this command's. */
  match(e: KeyboardEvent): boolean;
  run(e: KeyboardEvent, clip: ClipTarget | null): void;
  /** The browser's own handling is kept (e.g. + and − typed nowhere). */
  keepDefault?: boolean;
}

const mod = (e: KeyboardEvent) => e.ctrlKey || e.metaKey;
const plain = (e: KeyboardEvent) => !(e.ctrlKey || e.metaKey || e.altKey);
const step = (e: KeyboardEvent) => (e.shiftKey ? 10 : 1);
const letter = (e: KeyboardEvent, l: string) => plain(e) && e.key.toLowerCase() === l;
const arrow = (e: KeyboardEvent) => e.key === 'ArrowLeft' || e.key === 'ArrowRight';
const playheadTo = (key: string, to: (e: KeyboardEvent) => number): Command => ({
  id: `playhead-${key}`,
  label: '',
  keys: '',
  scope: 'ruler',
  match: (e) => e.key === key,
  run: (e) => setPlayhead(to(e)),
});

export const COMMANDS: Command[] = [
  {
    id: 'nudge',
    label: 'move the selected clips by a frame (Shift: 10), stopping at the next clip',
    keys: '←/→ on a clip',
    scope: 'clip',
    match: (e) => !e.altKey && !mod(e) && arrow(e),
    run: (e, clip) => nudge(clip!.track, clip!.index, e.key === 'ArrowLeft' ? -step(e) : step(e)),
  },
  {
    id: 'track',
    label: 'move it to the track above or below',
    keys: 'Alt+↑/↓',
    scope: 'clip',
    match: (e) => e.altKey && !mod(e) && (e.key === 'ArrowUp' || e.key === 'ArrowDown'),
    run: (e, clip) => {
      if (!state.selected.has(`${clip!.track}:${clip!.index}`)) select(clip);
      moveToTrack(e.key === 'ArrowUp' ? -1 : 1);
    },
  },
  {
    id: 'trim',
    label: 'trim it to the playhead',
    keys: '[ ]',
    scope: 'clip',
    match: (e) => plain(e) && (e.key === '[' || e.key === ']'),
    run: (e, clip) => {
      select(clip);
      trimToPlayhead(clip!.track, clip!.index, e.key === '[' ? 'start' : 'end');
    },
  },
  {
    id: 'ripple-delete',
    label: 'ripple delete (close the gap)',
    keys: 'Shift+Delete',
    scope: 'clip',
    match: (e) => !mod(e) && e.shiftKey && (e.key === 'Delete' || e.key === 'Backspace'),
    run: (_e, clip) => removeSelected(true, clip!),
  },
  {
    id: 'lift',
    label: 'lift (leave the gap)',
    keys: 'Delete',
    scope: 'clip',
    match: (e) => plain(e) && !e.shiftKey && (e.key === 'Delete' || e.key === 'Backspace'),
    run: (_e, clip) => removeSelected(false, clip!),
  },
  // The same on the page, for a selection made with the marquee.
  { id: 'ripple-delete-page', label: '', keys: '', scope: 'page', match: (e) => !mod(e) && e.shiftKey && (e.key === 'Delete' || e.key === 'Backspace'), run: () => removeSelected(true) },
  { id: 'lift-page', label: '', keys: '', scope: 'page', match: (e) => plain(e) && !e.shiftKey && (e.key === 'Delete' || e.key === 'Backspace'), run: () => removeSelected(false) },
  { id: 'group-nudge-page', label: '', keys: '', scope: 'page', match: (e) => e.altKey && !mod(e) && arrow(e), run: (e) => moveSelectedBy(e.key === 'ArrowLeft' ? -step(e) : step(e)) },
  {
    id: 'step',
    label: 'step the playhead a frame (Shift: 10)',
    keys: '←/→',
    scope: 'page',
    match: (e) => !mod(e) && !e.altKey && arrow(e),
    run: (e) => stepPlayhead(e.key === 'ArrowLeft' ? -step(e) : step(e)),
  },
  { id: 'split', label: 'split at the playhead', keys: 'S', scope: 'page', match: (e) => letter(e, 's'), run: () => splitAtPlayhead() },
  { id: 'play', label: 'play or pause', keys: 'Space', scope: 'page', match: (e) => plain(e) && e.key === ' ' && !(e.target instanceof HTMLButtonElement), run: () => togglePlay() },
  { id: 'shuttle-back', label: 'shuttle back (again: faster)', keys: 'J', scope: 'page', match: (e) => letter(e, 'j'), run: () => shuttleKey('j') },
  { id: 'shuttle-stop', label: 'stop', keys: 'K', scope: 'page', match: (e) => letter(e, 'k'), run: () => shuttleKey('k') },
  { id: 'shuttle-forward', label: 'shuttle forward (again: faster)', keys: 'L', scope: 'page', match: (e) => letter(e, 'l'), run: () => shuttleKey('l') },
  { id: 'mark-in', label: 'mark in', keys: 'I', scope: 'page', match: (e) => letter(e, 'i'), run: () => setMark('in') },
  { id: 'mark-out', label: 'mark out', keys: 'O', scope: 'page', match: (e) => letter(e, 'o'), run: () => setMark('out') },
  { id: 'play-in-out', label: 'play in to out', keys: 'P', scope: 'page', match: (e) => letter(e, 'p'), run: () => playInToOut() },
  {
    id: 'undo',
    label: 'undo',
    keys: 'Ctrl/⌘+Z',
    scope: 'page',
    match: (e) => mod(e) && !e.shiftKey && e.key.toLowerCase() === 'z',
    run: () => void undo(),
  },
  {
    id: 'redo',
    label: 'redo',
    keys: 'Ctrl/⌘+Shift+Z or Ctrl+Y',
    scope: 'page',
    match: (e) => mod(e) && ((e.shiftKey && e.key.toLowerCase() === 'z') || (!e.shiftKey && e.key.toLowerCase() === 'y')),
    run: () => void redo(),
  },
  {
    id: 'select-all',
    label: 'select every clip',
    keys: 'Ctrl/⌘+A',
    scope: 'page',
    match: (e) => mod(e) && !e.shiftKey && e.key.toLowerCase() === 'a',
    run: () => selectMany(Object.entries(state.tl?.tracks ?? {}).flatMap(([n, clips]) => clips.map((_, i) => `${n}:${i}`))),
  },
  { id: 'deselect', label: 'select none', keys: 'Esc', scope: 'page', match: (e) => e.key === 'Escape', run: () => select(null) },
  {
    id: 'zoom',
    label: 'zoom',
    keys: '+/− or Ctrl/⌘+wheel',
    scope: 'page',
    keepDefault: true,
    match: (e) => plain(e) && (e.key === '+' || e.key === '=' || e.key === '-'),
    run: (e) => setZoom(e.key === '-' ? state.zoom + 1 : state.zoom - 1),
  },
  { id: 'snap', label: 'snapping on/off (Alt while dragging: off; Shift while dragging: insert)', keys: 'N', scope: 'page', keepDefault: true, match: (e) => letter(e, 'n'), run: () => toggleSnap() },
  playheadTo('ArrowLeft', (e) => state.playhead - step(e)),
  playheadTo('ArrowRight', (e) => state.playhead + step(e)),
  playheadTo('ArrowDown', (e) => state.playhead - step(e)),
  playheadTo('ArrowUp', (e) => state.playhead + step(e)),
  playheadTo('PageDown', () => state.playhead - (10 * state.rate.num) / state.rate.den),
  playheadTo('PageUp', () => state.playhead + (10 * state.rate.num) / state.rate.den),
  playheadTo('Home', () => 0),
  playheadTo('End', () => totalFrames()),
];

/** The on-screen key list: every command that names its keys, as [keys, what]. */
export function keyHelp(): [string, string][] {
  return COMMANDS.filter((c) => c.keys !== '').map((c) => [c.keys, c.label]);
}

function typing(target: EventTarget | null): boolean {
  return target instanceof HTMLInputElement || target instanceof HTMLSelectElement || target instanceof HTMLTextAreaElement;
}

/** Runs the first command of `scope` that matches; true when one did (the event is then the page's). */
export function dispatch(e: KeyboardEvent, scope: Command['scope'], clip: ClipTarget | null = null): boolean {
  // A clip's or the ruler's own command ran already (it prevents the default): the page's does not run again.
  if (scope === 'page' && (!state.tl || typing(e.target) || e.defaultPrevented)) return false;
  const command = COMMANDS.find((c) => c.scope === scope && c.match(e));
  if (!command) return false;
  if (!command.keepDefault) e.preventDefault();
  command.run(e, clip);
  return true;
}
