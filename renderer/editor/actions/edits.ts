import { ApiFailure, call } from '../../lib/api';
import { parseTime, trimClip } from '../frames';
import { base, clipName, clipReasons, failureText, frames, isStill, seconds, tc } from '../read';
import { ports, requestRender, state } from '../state';
import type { Clip, Selection, Timeline } from '../types';
import { adopt, refreshAfterWrite, reload } from './document';
import { say, showProblem } from './notice';

/**
 * Edits of the open sequence, saved through the launcher's mirror of the
 * studio's routes: PATCH with If-Match (a 409 reloads and says so), undo
 * through revisions (:revert).
 */

export function select(s: Selection): void {
  state.selection = s;
  requestRender('selection', 'inspector');
}

function withClip(track: string, index: number, clip: Clip | null): Record<string, Clip[]> {
  const tracks: Record<string, Clip[]> = {};
  for (const [name, clips] of Object.entries(state.tl!.tracks)) tracks[name] = clips.map((c) => ({ ...c }));
  const list = tracks[track] ?? [];
  if (clip) list[index] = clip;
  else list.splice(index, 1);
  tracks[track] = list;
  return tracks;
}

export async function saveClip(track: string, index: number, clip: Clip | null, what: string): Promise<void> {
  const wanted = clip ? { start: frames(clip.start), asset: clip.asset_id } : null;
  const ok = await save(withClip(track, index, clip), what);
  if (ok && wanted && state.tl) {
    // The service sorts clips by start: follow the edited one.
    const at = (state.tl.tracks[track] ?? []).findIndex((c) => frames(c.start) === wanted.start && c.asset_id === wanted.asset);
    select(at >= 0 ? { track, index: at } : null);
    if (at >= 0) ports.viewport.focusClip(track, at);
  } else if (ok && !clip) {
    select(null);
  }
}

/** PATCH the tracks with If-Match; 409 reloads and says so; 422 says why. True when saved. */
async function save(tracks: Record<string, Clip[]>, what: string): Promise<boolean> {
  if (!state.tl || state.saving) return false;
  state.saving = true;
  showProblem(null);
  say(`Saving: ${what}…`);
  try {
    const next = await call<Timeline>(base(), { method: 'PATCH', body: { tracks }, ifMatch: `"${state.tl.revision}"`, contentType: 'application/merge-patch+json' });
    adopt(next, next.revision);
    say(`Saved revision ${next.revision}: ${what}.`);
    void refreshAfterWrite();
    return true;
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 409) {
      await reload(`This sequence was changed elsewhere while you edited, so your change (${what}) was not saved.`);
    } else {
      requestRender('timeline');
      say(`Not saved: ${what}.`, true);
      showProblem(failureText(err), clipReasons(err));
    }
    return false;
  } finally {
    state.saving = false;
  }
}

export function nudge(track: string, index: number, by: number): void {
  const c = state.tl?.tracks[track]?.[index];
  if (!c) return;
  const start = Math.max(0, frames(c.start) + by);
  if (start === frames(c.start)) return;
  moveTo(track, index, c, start);
}

/** A clip moved to start at frame `start` (its crossfade, tied to where it was, is dropped). */
export function moveTo(track: string, index: number, c: Clip, start: number): void {
  if (start === frames(c.start)) {
    requestRender('timeline');
    return;
  }
  const moved: Clip = { ...c, start: seconds(start) };
  delete moved.transition;
  void saveClip(track, index, moved, `Moved ${clipName(c)} to ${tc(start)}`);
}

export function trimToPlayhead(track: string, index: number, edge: 'start' | 'end'): void {
  const c = state.tl?.tracks[track]?.[index];
  if (!c) return;
  const start = frames(c.start);
  const length = frames(c.duration);
  const r = trimClip({ start, in: frames(c.in), length, edge, deltaPx: state.playhead - (edge === 'start' ? start : start + length), pxPerFrame: 1, targets: [], thresholdPx: 0, snapping: false, still: isStill(c) });
  applyTrim(track, index, c, r);
}

export function applyTrim(track: string, index: number, c: Clip, r: { start: number; in: number; length: number }): void {
  if (r.start === frames(c.start) && r.length === frames(c.duration)) {
    requestRender('timeline');
    return;
  }
  const trimmed: Clip = { ...c, start: seconds(r.start), duration: seconds(r.length) };
  if (r.in !== frames(c.in)) trimmed.in = seconds(r.in);
  if (r.start !== frames(c.start)) delete trimmed.transition;
  void saveClip(track, index, trimmed, `Trimmed ${clipName(c)} to ${tc(r.start)}–${tc(r.start + r.length)}`);
}

export function removeClip(track: string, index: number): void {
  const c = state.tl?.tracks[track]?.[index];
  if (!c) return;
  void saveClip(track, index, null, `Deleted ${clipName(c)} from ${track}`);
}

/** The inspector's fields, as typed (HH:MM:SS:FF or frames), applied to the clip. */
export function setClipTimes(track: string, index: number, c: Clip, typed: { start: string; in: string; duration: string }): void {
  const start = parseTime(typed.start, state.rate);
  const inF = parseTime(typed.in, state.rate);
  const dur = parseTime(typed.duration, state.rate);
  if (start === null || inF === null || dur === null || dur < 1) {
    say('Not saved: each field needs a time as HH:MM:SS:FF or a number of frames, and the duration at least one frame.');
    return;
  }
  const changed: Clip = { ...c };
  if (start !== frames(c.start)) changed.start = seconds(start);
  if (inF !== frames(c.in)) changed.in = seconds(inF);
  if (dur !== frames(c.duration)) changed.duration = seconds(dur);
  if (changed.start !== c.start) delete changed.transition;
  void saveClip(track, index, changed, `Set ${clipName(c)} to start ${tc(start)}, in ${tc(inF)}, duration ${tc(dur)}`);
}

export async function undo(): Promise<void> {
  if (!state.tl || state.saving) return;
  const target = state.revisions.find((r) => r.revision === state.contentRevision - 1);
  if (!target) {
    say('Nothing to undo: no earlier revision is kept.');
    return;
  }
  await revert(target.revision, `Undo: back to revision ${target.revision}`);
}

export async function revert(to: number, what: string): Promise<void> {
  if (!state.tl || state.saving) return;
  state.saving = true;
  showProblem(null);
  say(`${what}…`);
  try {
    const next = await call<Timeline>(`${base()}:revert`, { method: 'POST', body: { revision: to }, ifMatch: `"${state.tl.revision}"` });
    adopt(next, to);
    select(null);
    say(`${what}: saved as revision ${next.revision}.`);
    void refreshAfterWrite();
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 409) await reload('This sequence was changed elsewhere, so the undo was not made.');
    else {
      say(`Not reverted: ${what}.`);
      showProblem(failureText(err), clipReasons(err));
    }
  } finally {
    state.saving = false;
  }
}
