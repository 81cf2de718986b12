import { totalFrames } from '../read';
import { state } from '../state';
import { nudge, removeClip, select, trimToPlayhead, undo } from './edits';
import { setPlayhead, setZoom, togglePlay, toggleSnap } from './transport';

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
  /** What the on-screen list says, after the keys. */
  label: string;
  /** The keys as the on-screen list shows them. */
  keys: string;
  scope: 'page' | 'clip' | 'ruler';
  /** Whether this key event is this command's. */
  match(e: KeyboardEvent): boolean;
  run(e: KeyboardEvent, clip: ClipTarget | null): void;
}

const plain = (e: KeyboardEvent) => !(e.ctrlKey || e.metaKey || e.altKey);
const step = (e: KeyboardEvent) => (e.shiftKey ? 10 : 1);
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
    label: 'move the playhead or the selected clip by a frame (Shift: 10)',
    keys: '←/→',
    scope: 'clip',
    match: (e) => e.key === 'ArrowLeft' || e.key === 'ArrowRight',
    run: (e, clip) => {
      select(clip);
      nudge(clip!.track, clip!.index, e.key === 'ArrowLeft' ? -step(e) : step(e));
    },
  },
  {
    id: 'trim',
    label: 'trim the selected clip to the playhead',
    keys: '[ and ]',
    scope: 'clip',
    match: (e) => e.key === '[' || e.key === ']',
    run: (e, clip) => {
      select(clip);
      trimToPlayhead(clip!.track, clip!.index, e.key === '[' ? 'start' : 'end');
    },
  },
  {
    id: 'delete',
    label: 'removes it',
    keys: 'Delete',
    scope: 'clip',
    match: (e) => e.key === 'Delete' || e.key === 'Backspace',
    run: (_e, clip) => removeClip(clip!.track, clip!.index),
  },
  {
    id: 'play',
    label: 'plays',
    keys: 'Space',
    scope: 'page',
    match: (e) => plain(e) && e.key === ' ' && !(e.target instanceof HTMLButtonElement),
    run: () => togglePlay(),
  },
  {
    id: 'zoom',
    label: 'zoom',
    keys: 'Ctrl/⌘+wheel or +/−',
    scope: 'page',
    match: (e) => plain(e) && (e.key === '+' || e.key === '=' || e.key === '-'),
    run: (e) => setZoom(e.key === '-' ? state.zoom + 1 : state.zoom - 1),
  },
  {
    id: 'snap',
    label: 'toggles snapping',
    keys: 'N',
    scope: 'page',
    match: (e) => plain(e) && (e.key === 'n' || e.key === 'N'),
    run: () => toggleSnap(),
  },
  {
    id: 'undo',
    label: 'undoes',
    keys: 'Ctrl/⌘+Z',
    scope: 'page',
    match: (e) => (e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'z',
    run: () => void undo(),
  },
  playheadTo('ArrowLeft', (e) => state.playhead - step(e)),
  playheadTo('ArrowRight', (e) => state.playhead + step(e)),
  playheadTo('ArrowDown', (e) => state.playhead - step(e)),
  playheadTo('ArrowUp', (e) => state.playhead + step(e)),
  playheadTo('PageDown', () => state.playhead - (10 * state.rate.num) / state.rate.den),
  playheadTo('PageUp', () => state.playhead + (10 * state.rate.num) / state.rate.den),
  playheadTo('Home', () => 0),
  playheadTo('End', () => totalFrames()),
];

/** The on-screen key list: every command that names its keys. */
export function keyHelp(): string {
  const listed = COMMANDS.filter((c) => c.keys !== '');
  return `Keys: ${listed.map((c) => `${c.keys} ${c.label}`).join(', ')}.`;
}

function typing(target: EventTarget | null): boolean {
  return target instanceof HTMLInputElement || target instanceof HTMLSelectElement || target instanceof HTMLTextAreaElement;
}

/** Runs the first command of `scope` that matches; true when one did (the event is then the page's). */
export function dispatch(e: KeyboardEvent, scope: Command['scope'], clip: ClipTarget | null = null): boolean {
  if (scope === 'page' && (!state.tl || typing(e.target))) return false;
  const command = COMMANDS.find((c) => c.scope === scope && c.match(e));
  if (!command) return false;
  if (command.id !== 'zoom' && command.id !== 'snap') e.preventDefault();
  command.run(e, clip);
  return true;
}
