import { ApiFailure, call } from '../../lib/api';
import {
  clampGroupShift,
  clampMove,
  nearestFit,
  overlaps,
  parseTime,
  rebaseTracks,
  removeSpans,
  rippleInsert,
  roomAround,
  splitSpan,
  trimClip,
  type Span,
} from '../frames';
import { base, clipName, clipReasons, failureText, frames, isStill, seconds, tc } from '../read';
import { ports, requestRender, state, type OwnEdit } from '../state';
import type { Clip, Selection, Timeline } from '../types';
import { adopt, refreshAfterWrite, reload } from './document';
import { say, showProblem } from './notice';

/**
 * Edits of the open sequence, computed in whole frames (frames.ts) so that
 * none proposes an overlap: a clip stops at its neighbour's edge, or (insert)
 * the rest ripples. Saved through the launcher's mirror of the studio's
 * routes: PATCH with If-Match and a description of the change (a 409 reloads
 * and says so). Undo and redo replay this page's own edits only, on top of
 * any change made elsewhere when they can (docs/design.md, "Undo in the
 * editor page").
 */

/** A clip in frames, with what else it carries. */
export type FClip = Span & { asset_id: string; transition?: Clip['transition'] };
export type FTracks = Record<string, FClip[]>;
/** Where a clip is after an edit (the service orders clips by start: the selection follows by place). */
interface Place {
  track: string;
  start: number;
  asset_id: string;
}

const keyOf = (track: string, index: number) => `${track}:${index}`;

export function frameTracks(tracks: Record<string, Clip[]> = state.tl!.tracks): FTracks {
  const out: FTracks = {};
  for (const [name, clips] of Object.entries(tracks)) {
    out[name] = clips.map((c) => ({ asset_id: c.asset_id, start: frames(c.start), in: frames(c.in), length: frames(c.duration), ...(c.transition ? { transition: c.transition } : {}) }));
  }
  return out;
}

function secondTracks(ft: FTracks): Record<string, Clip[]> {
  const out: Record<string, Clip[]> = {};
  for (const [name, clips] of Object.entries(ft)) {
    if (clips.length === 0) continue;
    out[name] = [...clips]
      .sort((a, b) => a.start - b.start)
      .map((c) => ({ asset_id: c.asset_id, start: seconds(c.start), in: seconds(c.in), duration: seconds(c.length), ...(c.transition ? { transition: c.transition } : {}) }));
  }
  return out;
}

/** Two tracks hold the same clips, frame for frame. */
function sameClips(a: readonly Clip[], b: readonly Clip[]): boolean {
  const key = (c: Clip) => `${c.asset_id}@${frames(c.start)}+${frames(c.in)}:${frames(c.duration)}${c.transition ? `~${frames(c.transition.duration)}` : ''}`;
  return a.length === b.length && a.every((c, i) => key(c) === key(b[i]!));
}

// ---- selection -----------------------------------------------------------------

/** One clip selected (or none). */
export function select(s: Selection): void {
  state.selection = s;
  state.selected = new Set(s ? [keyOf(s.track, s.index)] : []);
  requestRender('selection', 'inspector');
}

/** Shift/Ctrl-click: a clip joins the selection, or leaves it. */
export function toggleSelect(s: { track: string; index: number }): void {
  const key = keyOf(s.track, s.index);
  if (state.selected.has(key)) {
    state.selected.delete(key);
    if (state.selection?.track === s.track && state.selection.index === s.index) state.selection = firstSelected();
  } else {
    state.selected.add(key);
    state.selection = s;
  }
  requestRender('selection', 'inspector');
}

/** The clips a marquee covers (or every clip): the selection. */
export function selectMany(keys: string[]): void {
  state.selected = new Set(keys);
  state.selection = firstSelected();
  requestRender('selection', 'inspector');
}

function firstSelected(): Selection {
  const first = [...state.selected][0];
  if (!first) return null;
  const [track, index] = first.split(':');
  return { track: track!, index: Number(index) };
}

/** The selected clips by track, as sets of indexes. */
function selectedByTrack(): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>();
  for (const key of state.selected) {
    const [track, index] = key.split(':');
    if (!state.tl?.tracks[track!]?.[Number(index)]) continue;
    if (!out.has(track!)) out.set(track!, new Set());
    out.get(track!)!.add(Number(index));
  }
  return out;
}

function followPlaces(places: Place[]): void {
  if (!state.tl) return;
  const keys: string[] = [];
  for (const p of places) {
    const at = (state.tl.tracks[p.track] ?? []).findIndex((c) => frames(c.start) === p.start && c.asset_id === p.asset_id);
    if (at >= 0) keys.push(keyOf(p.track, at));
  }
  selectMany(keys);
  const primary = firstSelected();
  if (primary) ports.viewport.focusClip(primary.track, primary.index);
}

// ---- saving ----------------------------------------------------------------------

/** Turns the service's reasons into the page's words: 1-based clip numbers, timecode, the clip's name. */
export function refusal(err: unknown, tracks?: Record<string, Clip[]>): string {
  const reasons = clipReasons(err, tracks);
  return reasons.length ? reasons.join(' ') : failureText(err);
}

/**
 * Saves new tracks as this page's edit: PATCH with If-Match and the change's
 * description. Remembered for undo (and the redo list cleared) unless `as`
 * says it is an undo or redo. True when saved.
 */
async function commit(ft: FTracks, what: string, follow: Place[], as: 'edit' | 'undo' | 'redo' = 'edit'): Promise<boolean> {
  if (!state.tl || state.saving) return false;
  for (const [name, clips] of Object.entries(ft)) {
    // Never sent: every edit above keeps tracks free of overlaps; this guards the guarantee.
    if (overlaps(clips)) {
      say(`Not saved: ${what} would overlap clips on ${name}.`, true);
      return false;
    }
  }
  const before = state.tl.tracks;
  const tracks = secondTracks(ft);
  state.saving = true;
  showProblem(null);
  say(`Saving: ${what}…`);
  try {
    const next = await call<Timeline>(base(), {
      method: 'PATCH',
      body: { tracks, description: what },
      ifMatch: `"${state.tl.revision}"`,
      contentType: 'application/merge-patch+json',
    });
    adopt(next, next.revision);
    state.ownRevision = next.revision;
    const edit: OwnEdit = { before, after: next.tracks, description: what };
    if (as === 'edit') {
      state.undo.push(edit);
      state.redo = [];
    }
    say(`Saved revision ${next.revision}: ${what}.`);
    void refreshAfterWrite();
    followPlaces(follow);
    return true;
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 409) {
      await reload(`This sequence was changed elsewhere while you edited, so your change (${what}) was not saved.`);
    } else {
      requestRender('timeline');
      // One notice, in the page's words.
      say(`Not saved: ${what}. ${refusal(err, tracks)}`, true);
    }
    return false;
  } finally {
    state.saving = false;
    requestRender('toolbar');
  }
}

// ---- moves -------------------------------------------------------------------------

/** The selected clips (or the one given) move by `by` frames together, stopping at the first clip in their way. */
export function nudge(track: string, index: number, by: number): void {
  if (!state.selected.has(keyOf(track, index))) select({ track, index });
  moveSelectedBy(by);
}

export function moveSelectedBy(by: number): void {
  if (!state.tl || state.selected.size === 0) return;
  const ft = frameTracks();
  const shift = clampGroupShift(ft, state.selected, by);
  if (shift === 0) {
    say(by < 0 ? 'Not moved: a clip is already against the clip before it (or at 00:00:00:00).' : 'Not moved: a clip is already against the clip after it.', true);
    requestRender('timeline');
    return;
  }
  const follow: Place[] = [];
  const names: string[] = [];
  for (const [name, indexes] of selectedByTrack()) {
    ft[name] = ft[name]!.map((c, i) => {
      if (!indexes.has(i)) return c;
      names.push(clipName(c));
      follow.push({ track: name, start: c.start + shift, asset_id: c.asset_id });
      const moved: FClip = { ...c, start: c.start + shift };
      delete moved.transition;
      return moved;
    });
  }
  const single = follow.length === 1;
  const stopped = shift !== by ? ' (stopped at the next clip)' : '';
  void commit(ft, single ? `Moved ${names[0]} to ${tc(follow[0]!.start)}${stopped}` : `Moved ${follow.length} clips by ${shift > 0 ? '+' : ''}${shift} frames${stopped}`, follow);
}

/**
 * A drag's result: the clip to start at `start` on `toTrack` (its own track
 * or another of its kind). Without `insert` it stops at its neighbours (on
 * another track: the nearest place it fits); with it, the clips from there on
 * ripple later to make room.
 */
export function placeClip(track: string, index: number, start: number, toTrack: string, insert: boolean): void {
  if (!state.tl) return;
  const ft = frameTracks();
  const c = ft[track]?.[index];
  if (!c) return;
  const rest = ft[track]!.filter((_, i) => i !== index);
  const moved: FClip = { ...c };
  delete moved.transition;
  let at: number;
  if (insert) {
    const target = toTrack === track ? rest : (ft[toTrack] ?? []);
    const r = rippleInsert(target, start, c.length);
    at = r.at;
    ft[track] = rest;
    ft[toTrack] = [...r.clips, { ...moved, start: at }];
  } else if (toTrack === track) {
    at = clampMove(ft[track]!, index, start);
    if (at === c.start) {
      requestRender('timeline');
      return;
    }
    ft[track] = [...rest, { ...moved, start: at }];
  } else {
    at = nearestFit(ft[toTrack] ?? [], start, c.length);
    ft[track] = rest;
    ft[toTrack] = [...(ft[toTrack] ?? []), { ...moved, start: at }];
  }
  const where = toTrack === track ? '' : ` on ${toTrack}`;
  void commit(ft, `${insert ? 'Inserted' : 'Moved'} ${clipName(c)} to ${tc(at)}${where}`, [{ track: toTrack, start: at, asset_id: c.asset_id }]);
}

/** Where a dragged clip would land, exactly as `placeClip` saves it (the drag's preview). */
export function previewPlace(track: string, index: number, start: number, toTrack: string, insert: boolean): number {
  const ft = frameTracks();
  const c = ft[track]![index]!;
  if (insert) return rippleInsert(toTrack === track ? ft[track]!.filter((_, i) => i !== index) : (ft[toTrack] ?? []), start, c.length).at;
  if (toTrack === track) return clampMove(ft[track]!, index, start);
  return nearestFit(ft[toTrack] ?? [], start, c.length);
}

/** Alt+↑/↓: the selected clip to the track above or below of its kind (V1…V9, A1…A9), where it fits nearest. */
export function moveToTrack(dir: -1 | 1): void {
  const s = state.selection;
  if (!state.tl || !s) return;
  const n = Number(s.track.slice(1)) + dir;
  if (n < 1 || n > 9) {
    say(`No track ${dir < 0 ? 'above' : 'below'} ${s.track} of its kind.`, true);
    return;
  }
  const c = state.tl.tracks[s.track]?.[s.index];
  if (!c) return;
  placeClip(s.track, s.index, frames(c.start), `${s.track[0]}${n}`, false);
}

// ---- trims, split, delete ---------------------------------------------------------------

export function trimToPlayhead(track: string, index: number, edge: 'start' | 'end'): void {
  const ft = state.tl ? frameTracks() : null;
  const c = ft?.[track]?.[index];
  if (!ft || !c) return;
  const r = trimClip({
    start: c.start, in: c.in, length: c.length, edge,
    deltaPx: state.playhead - (edge === 'start' ? c.start : c.start + c.length),
    pxPerFrame: 1, targets: [], thresholdPx: 0, snapping: false, still: isStill(state.tl!.tracks[track]![index]!),
    bounds: roomAround(ft[track]!, index),
  });
  applyTrim(track, index, state.tl!.tracks[track]![index]!, r);
}

/** The neighbours' edges a trim of this clip stops at. */
export function trimBounds(track: string, index: number): { min: number; max: number } {
  return roomAround(frameTracks()[track] ?? [], index);
}

export function applyTrim(track: string, index: number, c: Clip, r: { start: number; in: number; length: number }): void {
  if (r.start === frames(c.start) && r.length === frames(c.duration)) {
    requestRender('timeline');
    return;
  }
  const ft = frameTracks();
  const trimmed: FClip = { ...ft[track]![index]!, start: r.start, in: r.in, length: r.length };
  if (r.start !== frames(c.start)) delete trimmed.transition;
  ft[track]![index] = trimmed;
  void commit(ft, `Trimmed ${clipName(c)} to ${tc(r.start)}–${tc(r.start + r.length)}`, [{ track, start: r.start, asset_id: c.asset_id }]);
}

/** S: the selected clips under the playhead (or, with none selected, every clip under it) cut in two there. */
export function splitAtPlayhead(): void {
  if (!state.tl) return;
  const at = state.playhead;
  const ft = frameTracks();
  // The selected clips the playhead crosses; when it crosses none of them, every clip it crosses.
  const chosen = selectedByTrack();
  const crossed = [...chosen].some(([name, set]) => [...set].some((i) => splitSpan(ft[name]![i]!, at) !== null));
  const useAll = !crossed;
  const names: string[] = [];
  const follow: Place[] = [];
  for (const [name, clips] of Object.entries(ft)) {
    const next: FClip[] = [];
    clips.forEach((c, i) => {
      const parts = useAll || chosen.get(name)?.has(i) ? splitSpan(c, at, isStill(state.tl!.tracks[name]![i]!)) : null;
      if (!parts) return void next.push(c);
      const second = { ...parts[1] };
      delete second.transition;
      next.push(parts[0], second);
      names.push(clipName(c));
      follow.push({ track: name, start: at, asset_id: c.asset_id });
    });
    ft[name] = next;
  }
  if (names.length === 0) {
    say(`Nothing to split at ${tc(at)}: no clip runs across the playhead.`, true);
    return;
  }
  void commit(ft, names.length === 1 ? `Split ${names[0]} at ${tc(at)}` : `Split ${names.length} clips at ${tc(at)}`, follow);
}

/** Delete (lift) or Shift+Delete (ripple delete) of the selected clips (or the one given). */
export function removeSelected(ripple: boolean, only?: { track: string; index: number }): void {
  if (!state.tl) return;
  if (only && !state.selected.has(keyOf(only.track, only.index))) select(only);
  const chosen = selectedByTrack();
  if (chosen.size === 0) return;
  const ft = frameTracks();
  const names: string[] = [];
  for (const [name, indexes] of chosen) {
    for (const i of indexes) names.push(`${clipName(ft[name]![i]!)} from ${name}`);
    ft[name] = removeSpans(ft[name]!, indexes, ripple);
  }
  const what = names.length === 1 ? names[0]! : `${names.length} clips`;
  void commit(ft, `${ripple ? 'Ripple-deleted' : 'Deleted'} ${what}`, []);
}

export function removeClip(track: string, index: number): void {
  removeSelected(false, { track, index });
}

/** The inspector's fields, as typed (HH:MM:SS:FF or frames): the clip stops at its neighbours' edges. */
export function setClipTimes(track: string, index: number, c: Clip, typed: { start: string; in: string; duration: string }): void {
  const start = parseTime(typed.start, state.rate);
  const inF = parseTime(typed.in, state.rate);
  const dur = parseTime(typed.duration, state.rate);
  if (start === null || inF === null || dur === null || dur < 1) {
    say('Not saved: each field needs a time as HH:MM:SS:FF or a number of frames, and the duration at least one frame.');
    return;
  }
  const ft = frameTracks();
  const clips = ft[track]!;
  const room = roomAround(clips, index);
  // The start first (within the room), then the length up to the next clip.
  const length = Math.min(dur, room.max - room.min);
  const at = clampMove(clips.map((x, i) => (i === index ? { ...x, length } : x)), index, start);
  const fitted = Math.min(length, room.max - at);
  const changed: FClip = { ...clips[index]!, start: at, in: inF, length: fitted };
  if (at !== frames(c.start)) delete changed.transition;
  clips[index] = changed;
  const stopped = at !== start || fitted !== dur ? ' (stopped at the next clip)' : '';
  void commit(ft, `Set ${clipName(c)} to start ${tc(at)}, in ${tc(inF)}, duration ${tc(fitted)}${stopped}`, [{ track, start: at, asset_id: c.asset_id }]);
}

/** A clip from the media bin, dropped on a track at a frame: where it fits nearest (or inserted, rippling the rest). */
export function addClip(track: string, assetId: string, start: number, length: number, insert: boolean, title?: string): void {
  if (!state.tl) return;
  const ft = frameTracks();
  const clips = ft[track] ?? [];
  let at: number;
  if (insert) {
    const r = rippleInsert(clips, start, length);
    at = r.at;
    ft[track] = [...r.clips, { asset_id: assetId, start: at, in: 0, length }];
  } else {
    at = nearestFit(clips, start, length);
    ft[track] = [...clips, { asset_id: assetId, start: at, in: 0, length }];
  }
  void commit(ft, `Added ${title ?? clipName({ asset_id: assetId })} to ${track} at ${tc(at)}`, [{ track, start: at, asset_id: assetId }]);
}

// ---- undo and redo ----------------------------------------------------------------------

/**
 * Ctrl+Z: this page's last edit, undone. When the sequence was changed
 * elsewhere since, the undo is applied on top of that change if it touched
 * other tracks (and the notice says so), and refused if it touched the same.
 */
export function undo(): Promise<void> {
  return replay('undo');
}

/** Ctrl+Shift+Z or Ctrl+Y: the last undone edit, made again (on the same terms as undo). */
export function redo(): Promise<void> {
  return replay('redo');
}

async function replay(kind: 'undo' | 'redo'): Promise<void> {
  if (!state.tl || state.saving) return;
  const stack = kind === 'undo' ? state.undo : state.redo;
  const edit = stack[stack.length - 1];
  if (!edit) {
    say(kind === 'undo' ? 'Nothing to undo: this page has made no edit yet (changes made elsewhere are not undone here).' : 'Nothing to redo.');
    return;
  }
  const [from, to] = kind === 'undo' ? [edit.after, edit.before] : [edit.before, edit.after];
  const Word = kind === 'undo' ? 'Undo' : 'Redo';
  for (let attempt = 0; attempt < 2; attempt++) {
    const current = state.tl.tracks;
    const rebased = rebaseTracks(current, from, to, sameClips);
    if (rebased.conflict !== null) {
      say(`Not ${kind === 'undo' ? 'undone' : 'redone'}: ${edit.description}. ${rebased.conflict} was changed elsewhere since, and ${kind === 'undo' ? 'undoing' : 'redoing'} would change that too. Edit it by hand, or restore a revision from the list.`, true);
      return;
    }
    const elsewhere = state.tl.revision !== state.ownRevision;
    const what = `${Word}: ${edit.description}`;
    const revisionBefore = state.tl.revision;
    const ok = await commit(frameTracks(rebased.tracks), what, [], kind);
    if (ok) {
      stack.pop();
      // Kept the way the edit goes (before → after), whichever list it moves to.
      const now = state.tl.tracks;
      if (kind === 'undo') state.redo.push({ before: now, after: from, description: edit.description });
      else state.undo.push({ before: from, after: now, description: edit.description });
      if (elsewhere) say(`${what}. Applied on top of the change made elsewhere (kept): saved revision ${state.tl.revision}.`, true);
      requestRender('toolbar');
      return;
    }
    // A 409 reloaded the sequence: try once more on top of what is there now.
    if (state.tl.revision === revisionBefore) return;
  }
}

/** A revision from the list written forward (the service's :revert); not one of this page's undoable edits. */
export async function revert(to: number, what: string): Promise<void> {
  if (!state.tl || state.saving) return;
  state.saving = true;
  showProblem(null);
  say(`${what}…`);
  try {
    const before = state.tl.tracks;
    const next = await call<Timeline>(`${base()}:revert`, { method: 'POST', body: { revision: to }, ifMatch: `"${state.tl.revision}"` });
    adopt(next, to);
    state.ownRevision = next.revision;
    state.undo.push({ before, after: next.tracks, description: what });
    state.redo = [];
    select(null);
    say(`${what}: saved as revision ${next.revision}.`);
    void refreshAfterWrite();
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 409) await reload('This sequence was changed elsewhere, so the revision was not restored.');
    else say(`Not restored: ${what}. ${refusal(err)}`, true);
  } finally {
    state.saving = false;
  }
}
