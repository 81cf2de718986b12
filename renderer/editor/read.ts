import { ApiFailure } from '../lib/api';
import { framesToSeconds, secondsToFrames, timecode, ZOOMS } from './frames';
import { state, type State } from './state';

// What a view may use of state.ts besides reading: asking for its own redraw, and the ports' shapes.
export { requestRender, type Part, type Player, type Viewport } from './state';
import type { Clip } from './types';

/**
 * The state as views see it: read-only (a view changes the page only by
 * calling an action), and what is derived from it.
 */
export const view: Readonly<State> = state;

export const base = () => `/launcher/timeline/${state.tl!.id}`;
export const px = () => ZOOMS[state.zoom]!;
export const frames = (seconds: number) => secondsToFrames(seconds, state.rate);
export const seconds = (f: number) => framesToSeconds(f, state.rate);
export const tc = (f: number) => timecode(f, state.rate);
export const totalFrames = () => (state.tl ? frames(state.tl.duration) : 0);

export function trackNames(): string[] {
  if (!state.tl) return [];
  const names = Object.keys(state.tl.tracks);
  if (names.length === 0) names.push('V1');
  return names.sort((a, b) => (a[0] === b[0] ? Number(a.slice(1)) - Number(b.slice(1)) : a[0] === 'V' ? -1 : 1));
}

export function clipName(c: Pick<Clip, 'asset_id'>): string {
  const info = state.assets.get(c.asset_id);
  return info?.title || `${info && info.kind !== 'unknown' ? info.kind : 'asset'} ${c.asset_id.slice(-6)}`;
}

export function clipLabel(track: string, c: Clip): string {
  const s = frames(c.start);
  return `${track}, ${clipName(c)}, ${tc(s)} to ${tc(s + frames(c.duration))}`;
}

export function isStill(c: Clip): boolean {
  return state.assets.get(c.asset_id)?.kind === 'image';
}

export function selectedClip(): Clip | null {
  if (!state.tl || !state.selection) return null;
  return state.tl.tracks[state.selection.track]?.[state.selection.index] ?? null;
}

/** The clip under frame f: the top video track first (V9 … V1), then sound (A1 … A9). */
export function clipAt(f: number): { track: string; clip: Clip } | null {
  if (!state.tl) return null;
  const names = trackNames();
  const order = [...names.filter((n) => n[0] === 'V').reverse(), ...names.filter((n) => n[0] === 'A')];
  for (const track of order) {
    for (const clip of state.tl.tracks[track] ?? []) {
      const s = frames(clip.start);
      if (f >= s && f < s + frames(clip.duration)) return { track, clip };
    }
  }
  return null;
}

export function clipCount(tracks: Record<string, Clip[]>): number {
  return Object.values(tracks).reduce((n, clips) => n + clips.length, 0);
}

export function failureText(err: unknown): string {
  return err instanceof ApiFailure ? `${err.message} (${err.code})` : String(err);
}

/** The reasons of a 422 invalid_timeline, as "V1 clip 2: why". */
export function clipReasons(err: unknown): string[] {
  if (!(err instanceof ApiFailure)) return [];
  const list = err.details.clips;
  if (!Array.isArray(list)) return [];
  return list.map((p: { track: string | null; index: number; reason: string }) => `${p.track ?? 'clip'} ${p.track ? `clip ${p.index + 1}` : p.index + 1}: ${p.reason}`);
}
