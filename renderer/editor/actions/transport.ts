import { totalFrames } from '../read';
import { ports, requestRender, state } from '../state';
import { ZOOMS } from '../frames';
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
  // The whole cut from the playhead (from the start once it is at the end), gaps and stills included.
  const end = totalFrames();
  if (end === 0) {
    say('The sequence is empty: nothing to play.');
    return;
  }
  ports.player.play(state.playhead >= end - 1 ? 0 : state.playhead);
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
