/**
 * Time on the editor surface, in whole frames (pure: no DOM; unit-tested in
 * test/unit/editor-frames.test.ts).
 *
 * Every edit is computed in integer frames of the sequence's fps and only then
 * turned into seconds for the API, so where a clip lands never depends on the
 * zoom: pixels become frames once (the pointer's offset ÷ pixels per frame,
 * rounded), snap targets are frames, and the answer is a frame. The service
 * snaps again on every write (docs/api.md §Snapping): seconds sent as
 * `framesToSeconds(n)` are the double it shows for n frames, which it reads
 * back as exactly n frames.
 */

export interface Rate {
  /** Frames per second = num / den (29.97 fps is 30000/1001). */
  num: number;
  den: number;
}

/** The service's rule (service/timeline/snap.ts): whole fps exactly, NTSC values as n×1000/1001, else the decimal. */
export function frameRate(fps: number): Rate {
  if (!Number.isFinite(fps) || fps <= 0) throw new RangeError(`fps must be positive: ${fps}`);
  if (Number.isInteger(fps)) return { num: fps, den: 1 };
  const n = Math.round((fps * 1001) / 1000);
  if (n >= 1 && Math.abs((n * 1000) / 1001 - fps) < 0.005) return { num: n * 1000, den: 1001 };
  // At most three decimals (the API refuses more): 12.5 = 12500/1000.
  return { num: Math.round(fps * 1000), den: 1000 };
}

/** Seconds (as the API shows them) → the nearest whole frame. */
export function secondsToFrames(seconds: number, rate: Rate): number {
  return Math.round((seconds * rate.num) / rate.den);
}

/** Whole frames → seconds, the same double the service shows for them (units × den ÷ num). */
export function framesToSeconds(frames: number, rate: Rate): number {
  return (frames * rate.den) / rate.num;
}

/** Frames per timecode second: 30 for 29.97 (non-drop-frame counting). */
export function nominalFps(rate: Rate): number {
  return Math.max(1, Math.round(rate.num / rate.den));
}

/** Frame n → "HH:MM:SS:FF" at the nominal rate (non-drop-frame); negative frames get a leading "-". */
export function timecode(frames: number, rate: Rate): string {
  const nominal = nominalFps(rate);
  const sign = frames < 0 ? '-' : '';
  const n = Math.abs(Math.round(frames));
  const ff = n % nominal;
  const total = Math.floor(n / nominal);
  const two = (v: number) => String(v).padStart(2, '0');
  return `${sign}${two(Math.floor(total / 3600))}:${two(Math.floor((total % 3600) / 60))}:${two(total % 60)}:${two(ff)}`;
}

/**
 * What a person types into a time field → frames, or null when it is not a time:
 * "HH:MM:SS:FF", "MM:SS:FF", "SS:FF" (a frame part at or past the nominal rate,
 * or minutes/seconds past 59, are refused), or a plain whole number of frames ("48").
 */
export function parseTime(text: string, rate: Rate): number | null {
  const t = text.trim();
  if (/^\d{1,9}$/.test(t)) return Number(t);
  const m = /^(?:(?:(\d{1,3}):)?(\d{1,2}):)?(\d{1,2})[:;.](\d{1,3})$/.exec(t);
  if (!m) return null;
  const nominal = nominalFps(rate);
  const [hh, mm, ss, ff] = [m[1], m[2], m[3], m[4]].map((v) => Number(v ?? 0)) as [number, number, number, number];
  if (ff >= nominal || ss > 59 || (m[1] !== undefined && mm > 59)) return null;
  return ((hh * 60 + mm) * 60 + ss) * nominal + ff;
}

/** A place a dragged edge may snap to. Clip edges win ties over the playhead. */
export interface SnapTarget {
  frame: number;
  kind: 'edge' | 'playhead' | 'zero';
}

export interface SnapResult {
  /** The frame the dragged edge (or clip start) lands on. */
  frame: number;
  /** The target snapped to, or null when the pointer's own frame was kept. */
  target: SnapTarget | null;
}

const RANK: Record<SnapTarget['kind'], number> = { edge: 0, zero: 0, playhead: 1 };

/** Pointer movement in pixels → whole frames at this zoom (the only place pixels become frames). */
export function deltaFrames(deltaPx: number, pxPerFrame: number): number {
  if (!(pxPerFrame > 0)) throw new RangeError(`pxPerFrame must be positive: ${pxPerFrame}`);
  const d = Math.round(deltaPx / pxPerFrame);
  return d === 0 ? 0 : d; // never -0
}

/**
 * The nearest target to any of `edges` (frames) within `thresholdPx` at this
 * zoom, as the shift to apply; ties go to clip edges over the playhead, then to
 * the smaller shift. Null when nothing is near or snapping is off.
 */
function nearest(edges: number[], targets: readonly SnapTarget[], thresholdFrames: number): { shift: number; target: SnapTarget } | null {
  let best: { shift: number; target: SnapTarget } | null = null;
  for (const edge of edges) {
    for (const target of targets) {
      const shift = target.frame - edge;
      if (Math.abs(shift) > thresholdFrames) continue;
      if (
        best === null ||
        Math.abs(shift) < Math.abs(best.shift) ||
        (Math.abs(shift) === Math.abs(best.shift) && (RANK[target.kind] < RANK[best.target.kind] || (RANK[target.kind] === RANK[best.target.kind] && shift < best.shift)))
      ) {
        best = { shift, target };
      }
    }
  }
  return best;
}

export interface MoveInput {
  /** The clip's start when the drag began, in frames. */
  start: number;
  /** Its length in frames (unchanged by a move). */
  length: number;
  deltaPx: number;
  pxPerFrame: number;
  targets: readonly SnapTarget[];
  /** How near (in pixels on screen) an edge must come to a target to snap; 0 or `snapping` false: no snap. */
  thresholdPx: number;
  snapping: boolean;
}

/**
 * Where a moved clip starts: its start plus the pointer's whole-frame offset,
 * then its start or end edge pulled onto the nearest target within the
 * threshold; never before frame 0. Always a whole frame, and a clip dropped
 * at another's edge abuts it exactly (gap 0) at every zoom.
 */
export function moveClip(input: MoveInput): SnapResult {
  const raw = Math.max(0, input.start + deltaFrames(input.deltaPx, input.pxPerFrame));
  if (!input.snapping || input.thresholdPx <= 0) return { frame: raw, target: null };
  const found = nearest([raw, raw + input.length], input.targets, input.thresholdPx / input.pxPerFrame);
  if (!found || raw + found.shift < 0) return { frame: raw, target: null };
  return { frame: raw + found.shift, target: found.target };
}

export interface TrimInput {
  /** The clip as it was when the drag began, in frames. */
  start: number;
  in: number;
  length: number;
  /** Which end is dragged. */
  edge: 'start' | 'end';
  deltaPx: number;
  pxPerFrame: number;
  targets: readonly SnapTarget[];
  thresholdPx: number;
  snapping: boolean;
  /** A still picture: its `in` stays 0, so trimming its start moves the start only. */
  still?: boolean;
  /** The neighbours' edges on the track (the previous clip's end, the next one's start): a trim stops there. */
  bounds?: { min: number; max: number };
}

export interface TrimResult {
  start: number;
  in: number;
  length: number;
  target: SnapTarget | null;
}

/**
 * Trimming one end of a clip, in frames. The start edge moves `start` and
 * `in` together (the picture under the rest of the clip stays where it is):
 * it cannot pass frame 0, `in` 0 (a still keeps `in` 0 and may grow either
 * way), or leave less than one frame. The end edge
 * changes the length only (at least one frame; past the source's end the last
 * frame holds, which the API allows). The moved edge snaps like a move.
 */
export function trimClip(input: TrimInput): TrimResult {
  const d = deltaFrames(input.deltaPx, input.pxPerFrame);
  const end = input.start + input.length;
  const threshold = input.snapping && input.thresholdPx > 0 ? input.thresholdPx / input.pxPerFrame : -1;
  if (input.edge === 'start') {
    const lowest = Math.max(input.still ? 0 : Math.max(0, input.start - input.in), input.bounds?.min ?? 0);
    const clamp = (f: number) => Math.min(end - 1, Math.max(lowest, f));
    let edge = clamp(input.start + d);
    let target: SnapTarget | null = null;
    const found = threshold >= 0 ? nearest([edge], input.targets, threshold) : null;
    if (found && clamp(edge + found.shift) === edge + found.shift) {
      edge += found.shift;
      target = found.target;
    }
    return { start: edge, in: input.still ? input.in : input.in + (edge - input.start), length: end - edge, target };
  }
  const highest = input.bounds?.max ?? Infinity;
  const clamp = (f: number) => Math.min(highest, Math.max(input.start + 1, f));
  let edge = clamp(end + d);
  let target: SnapTarget | null = null;
  const found = threshold >= 0 ? nearest([edge], input.targets, threshold) : null;
  if (found && clamp(edge + found.shift) === edge + found.shift) {
    edge += found.shift;
    target = found.target;
  }
  return { start: input.start, in: input.in, length: edge - input.start, target };
}

/** Frames between ruler ticks so that labels stay at least `minPx` apart: 1, 2, 5, 10 frames, then whole seconds 1, 2, 5, 10, 15, 30, 60 ... */
export function tickStep(pxPerFrame: number, rate: Rate, minPx = 90): number {
  const nominal = nominalFps(rate);
  const frameSteps = [1, 2, 5, 10].filter((f) => f < nominal);
  const secondSteps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 18000, 36000];
  for (const f of frameSteps) if (f * pxPerFrame >= minPx) return f;
  for (const s of secondSteps) if (s * nominal * pxPerFrame >= minPx) return s * nominal;
  return secondSteps[secondSteps.length - 1]! * nominal;
}

/** The zoom levels offered, as pixels per frame: from one frame per 16 px down to about one hour across 1,000 px at 30 fps. */
export const ZOOMS = [16, 8, 4, 2, 1, 0.5, 0.25, 0.1, 0.05, 0.025, 0.01, 0.005, 0.0025, 0.001];

// ---- edits of whole tracks, in frames ---------------------------------------

/** A clip in frames: where it starts on the timeline, how far into its source, how long. */
export interface Span {
  start: number;
  in: number;
  length: number;
}

/** A track's clips in frames, as the page edits them (`T` carries the rest: asset, transition). */
export type FrameTrack<T extends Span = Span> = T[];

const byStart = <T extends Span>(a: T, b: T) => a.start - b.start;
const endOf = (c: Span) => c.start + c.length;

/**
 * The free room around clip `index` on its track: the previous clip's end
 * (or 0) and the next clip's start (or none). `others` are the track's clips
 * in any order; the clip itself is skipped.
 */
export function roomAround(clips: readonly Span[], index: number): { min: number; max: number } {
  const me = clips[index]!;
  let min = 0;
  let max = Infinity;
  clips.forEach((c, i) => {
    if (i === index) return;
    if (endOf(c) <= me.start) min = Math.max(min, endOf(c));
    else if (c.start >= endOf(me)) max = Math.min(max, c.start);
  });
  return { min, max };
}

/**
 * Where a moved clip may start: `wanted`, stopped at its neighbours' edges
 * (it never passes over or into another clip on its track, and never before 0).
 */
export function clampMove(clips: readonly Span[], index: number, wanted: number): number {
  const me = clips[index]!;
  const { min, max } = roomAround(clips, index);
  return Math.max(min, Math.min(max - me.length, wanted));
}

/**
 * How far a group of clips may move together (the selected ones on each
 * track; clips not in the group are in the way): `wanted` shortened so that no
 * clip of the group passes a clip outside it or frame 0.
 */
export function clampGroupShift(tracks: Readonly<Record<string, readonly Span[]>>, selected: ReadonlySet<string>, wanted: number): number {
  let lo = -Infinity;
  let hi = Infinity;
  for (const [name, clips] of Object.entries(tracks)) {
    clips.forEach((c, i) => {
      if (!selected.has(`${name}:${i}`)) return;
      let min = 0;
      let max = Infinity;
      clips.forEach((o, j) => {
        if (selected.has(`${name}:${j}`)) return;
        if (endOf(o) <= c.start) min = Math.max(min, endOf(o));
        else if (o.start >= endOf(c)) max = Math.min(max, o.start);
      });
      lo = Math.max(lo, min - c.start);
      hi = Math.min(hi, max - endOf(c));
    });
  }
  if (lo === -Infinity) return 0;
  return Math.max(lo, Math.min(hi, wanted));
}

/**
 * The nearest start to `wanted` (frame 0 or later) where a clip of `length`
 * fits between the track's clips: where a clip lands when moved to another track.
 */
export function nearestFit(clips: readonly Span[], wanted: number, length: number): number {
  const sorted = [...clips].sort(byStart);
  let best = -1;
  let prevEnd = 0;
  const consider = (from: number, to: number) => {
    if (to - from < length) return;
    const at = Math.max(from, Math.min(to - length, wanted));
    if (best < 0 || Math.abs(at - wanted) < Math.abs(best - wanted)) best = at;
  };
  for (const c of sorted) {
    consider(prevEnd, c.start);
    prevEnd = Math.max(prevEnd, endOf(c));
  }
  consider(prevEnd, Infinity);
  return best;
}

/**
 * Inserting a clip of `length` at `wanted` and rippling the rest: the point
 * moves to the nearer edge of a clip it falls inside, every clip starting at
 * or after it moves later by `length`. Returns the track without the inserted
 * clip (its other clips shifted) and where the inserted clip starts.
 */
export function rippleInsert<T extends Span>(clips: readonly T[], wanted: number, length: number): { clips: T[]; at: number } {
  let at = Math.max(0, wanted);
  for (const c of clips) {
    if (at > c.start && at < endOf(c)) at = at - c.start < endOf(c) - at ? c.start : endOf(c);
  }
  return { clips: clips.map((c) => (c.start >= at ? { ...c, start: c.start + length } : { ...c })).sort(byStart), at };
}

/**
 * A clip cut in two at frame `at` (strictly inside it): the first part keeps
 * its start and in, the second starts at `at` with its in moved on by as much
 * (a still's in stays 0). Null when `at` is not inside the clip.
 */
export function splitSpan<T extends Span>(clip: T, at: number, still = false): [T, T] | null {
  if (at <= clip.start || at >= endOf(clip)) return null;
  const first = { ...clip, length: at - clip.start };
  const second = { ...clip, start: at, in: still ? clip.in : clip.in + (at - clip.start), length: endOf(clip) - at };
  return [first, second];
}

/**
 * Removing clips from a track. `ripple` closes the room each one leaves: every
 * later clip moves earlier by the lengths removed before it, so the gaps that
 * were there stay as they were. Without it (lift) the others stay put.
 */
export function removeSpans<T extends Span>(clips: readonly T[], remove: ReadonlySet<number>, ripple: boolean): T[] {
  const gone = clips.filter((_, i) => remove.has(i));
  return clips
    .filter((_, i) => !remove.has(i))
    .map((c) => {
      if (!ripple) return { ...c };
      const shift = gone.filter((g) => endOf(g) <= c.start).reduce((n, g) => n + g.length, 0);
      return { ...c, start: c.start - shift };
    })
    .sort(byStart);
}

/** Whether any two clips of a track overlap (the service refuses such a track). */
export function overlaps(clips: readonly Span[]): boolean {
  const sorted = [...clips].sort(byStart);
  return sorted.some((c, i) => i > 0 && c.start < endOf(sorted[i - 1]!));
}

/** The shuttle's speeds, as J/K/L step through them (times normal speed; negative is backwards). */
export const SHUTTLE_SPEEDS = [1, 2, 4, 8];

/**
 * The shuttle after a key: L plays forwards, faster each press (1×, 2×, 4×,
 * 8×), J the same backwards, a press against the direction slows down and
 * then turns; K stops.
 */
export function shuttle(speed: number, key: 'j' | 'k' | 'l'): number {
  if (key === 'k') return 0;
  const dir = key === 'l' ? 1 : -1;
  const steps = SHUTTLE_SPEEDS;
  if (speed === 0 || Math.sign(speed) !== dir) {
    if (speed === 0) return dir * steps[0]!;
    const i = steps.indexOf(Math.abs(speed));
    return i > 0 ? Math.sign(speed) * steps[i - 1]! : 0;
  }
  const i = steps.indexOf(Math.abs(speed));
  return dir * steps[Math.min(steps.length - 1, i + 1)]!;
}

/**
 * An edit's change (`from` → `to`, whole tracks) applied again on top of
 * `current`, as undo and redo do after a change made elsewhere: each track the
 * edit changed must still be as the edit left it (`from`); a track changed
 * since by someone else is a conflict (the edit is not applied: it would undo
 * their change too). Tracks the edit did not change keep what `current` has.
 */
export function rebaseTracks<C>(
  current: Readonly<Record<string, C[]>>,
  from: Readonly<Record<string, C[]>>,
  to: Readonly<Record<string, C[]>>,
  same: (a: readonly C[], b: readonly C[]) => boolean,
): { tracks: Record<string, C[]>; conflict: null } | { tracks: null; conflict: string } {
  const out: Record<string, C[]> = { ...current };
  const names = new Set([...Object.keys(from), ...Object.keys(to)]);
  for (const name of [...names].sort()) {
    const before = from[name] ?? [];
    const after = to[name] ?? [];
    if (same(before, after)) continue;
    const now = current[name] ?? [];
    if (same(now, before)) out[name] = [...after];
    else if (!same(now, after)) return { tracks: null, conflict: name };
  }
  for (const [name, clips] of Object.entries(out)) if (clips.length === 0) delete out[name];
  return { tracks: out, conflict: null };
}
