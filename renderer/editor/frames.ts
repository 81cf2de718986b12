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
    const lowest = input.still ? 0 : Math.max(0, input.start - input.in);
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
  const clamp = (f: number) => Math.max(input.start + 1, f);
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
