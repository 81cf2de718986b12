import { ApiFailure } from '../lib/api';
import { framesToSeconds, secondsToFrames, timecode, ZOOMS } from './frames';
import { state, type State } from './state';

// What a view may use of state.ts besides reading: asking for its own redraw, and the ports' shapes.
export { requestRender, type BinItem, type Part, type Player, type Viewport } from './state';
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

/** The tracks drawn: every track in use, and one empty track of each kind after them (to drag or drop onto). */
export function trackNames(): string[] {
  if (!state.tl) return [];
  const names = Object.keys(state.tl.tracks).filter((n) => (state.tl!.tracks[n]?.length ?? 0) > 0);
  for (const kind of ['V', 'A']) {
    const used = names.filter((n) => n[0] === kind).map((n) => Number(n.slice(1)));
    const next = used.length ? Math.max(...used) + 1 : 1;
    if (next <= 9) names.push(`${kind}${next}`);
  }
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

/**
 * The reasons of a 422 invalid_timeline in the page's words: "V1, clip 2
 * (Harbour, 00:00:03:10): why", numbered from 1 as the inspector numbers them,
 * with the service's seconds shown as timecode. `tracks` are the ones the
 * request sent (the reasons' indexes are into them); the open sequence's by default.
 */
export function clipReasons(err: unknown, tracks: Record<string, Clip[]> | undefined = state.tl?.tracks): string[] {
  if (!(err instanceof ApiFailure)) return [];
  const list = err.details.clips;
  if (!Array.isArray(list)) return [];
  return list.map((p: { track: string | null; index: number; reason: string }) => {
    const reason = p.reason.replace(/(\d+(?:\.\d+)?(?:e-?\d+)?) s\b/g, (_m, n: string) => tc(frames(Number(n))));
    if (!p.track) return `Clip ${p.index + 1}: ${reason}`;
    const c = tracks?.[p.track]?.[p.index];
    return `${p.track}, clip ${p.index + 1}${c ? ` (${clipName(c)}, ${tc(frames(c.start))})` : ''}: ${reason}`;
  });
}
