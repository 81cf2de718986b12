import { clipAt, isStill, tc, totalFrames } from '../read';
import { ports, requestRender, state } from '../state';
import { shuttle, ZOOMS } from '../frames';
import { say } from './notice';

/** The playhead, playing, zoom and snapping. */

export function setPlayhead(f: number, reveal = true): void {
  state.playhead = Math.max(0, Math.round(f));
  requestRender('playhead');
  if (reveal) ports.viewport.reveal(state.playhead);
  if (!ports.player.playing) requestRender('viewer');
}

/** The player reports where it is while playing (no reveal, no seek). */
export function followPlayhead(f: number): void {
  state.playhead = Math.max(0, f);
  requestRender('playhead');
}

export function togglePlay(): void {
  if (ports.player.playing) {
    ports.player.pause();
    return;
  }
  const hit = clipAt(state.playhead);
  if (!hit || isStill(hit.clip)) {
    say(hit ? 'A still picture: nothing to play.' : `No clip under the playhead at ${tc(state.playhead)}.`);
    return;
  }
  ports.player.play(state.playhead);
}

export function setZoom(next: number, anchorClientX?: number): void {
  const z = Math.min(ZOOMS.length - 1, Math.max(0, next));
  if (z === state.zoom || !state.tl) return;
  if (!ports.viewport.fits(z)) return;
  const keep = ports.viewport.anchor(anchorClientX);
  state.zoom = z;
  ports.viewport.keep(keep);
}

export function fitZoom(): void {
  ports.viewport.fit();
}

/** Chooses the zoom that shows the whole sequence in `width` pixels. */
export function zoomToFit(width: number): void {
  const total = Math.max(1, totalFrames());
  let z = ZOOMS.findIndex((p) => total * p <= width);
  if (z < 0) z = ZOOMS.length - 1;
  state.zoom = z;
}

export function toggleSnap(on = !state.snapping, announce = true): void {
  state.snapping = on;
  requestRender('toolbar');
  if (announce) say(on ? 'Snapping on.' : 'Snapping off.');
}

// ---- the J/K/L shuttle, marks ------------------------------------------------------

let shuttleTimer = 0;
let shuttleFrom = { at: 0, frame: 0 };

/**
 * J/K/L: the shuttle moves the playhead at 1×, 2×, 4×, 8× either way (K
 * stops). The viewer follows the playhead frame by frame; playing sound
 * across cuts is the player's (state.ts `Player`).
 */
export function shuttleKey(key: 'j' | 'k' | 'l'): void {
  const next = shuttle(state.shuttle, key);
  state.shuttle = next;
  clearInterval(shuttleTimer);
  ports.player.pause();
  requestRender('toolbar');
  if (next === 0) {
    say(`Stopped at ${tc(state.playhead)}.`);
    return;
  }
  say(`Shuttle ${next > 0 ? 'forward' : 'backward'} ${Math.abs(next)}×.`);
  shuttleFrom = { at: performance.now(), frame: state.playhead };
  const fps = state.rate.num / state.rate.den;
  shuttleTimer = window.setInterval(() => {
    const f = Math.round(shuttleFrom.frame + ((performance.now() - shuttleFrom.at) / 1000) * fps * next);
    const end = Math.max(totalFrames() - 1, 0);
    const clamped = Math.max(0, Math.min(end, f));
    setPlayhead(clamped);
    if (clamped !== f) shuttleKey('k');
  }, 40);
}

/** ←/→ on the page: the playhead one frame (Shift: ten) either way. */
export function stepPlayhead(by: number): void {
  if (state.shuttle !== 0) shuttleKey('k');
  setPlayhead(state.playhead + by);
}

/** I and O: the in or out mark at the playhead (pressed again at the same frame, cleared). */
export function setMark(which: 'in' | 'out'): void {
  const at = state.playhead;
  state.marks[which] = state.marks[which] === at ? null : at;
  const { in: i, out: o } = state.marks;
  if (i !== null && o !== null && o <= i) state.marks[which === 'in' ? 'out' : 'in'] = null;
  requestRender('marks');
  say(state.marks[which] === null ? `${which === 'in' ? 'In' : 'Out'} mark cleared.` : `${which === 'in' ? 'In' : 'Out'} mark at ${tc(at)}.`);
}

/** P: plays from the in mark (or the start) to the out mark (or the end), through the player. */
export function playInToOut(): void {
  const from = state.marks.in ?? 0;
  const to = state.marks.out ?? undefined;
  setPlayhead(from);
  say(`Playing ${tc(from)} to ${tc(to ?? totalFrames())}.`);
  ports.player.play(from, to);
}
