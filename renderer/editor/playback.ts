import { secondsToFrames, type Rate } from './frames';

/**
 * What plays when (pure; test/unit/editor-playback.test.ts). Playing the cut
 * turns the sequence into segments, in whole frames: for the picture, the top
 * video track with a clip at each frame wins (V9 over … V1) and frames with
 * none are a gap (black); each sound track is its own list of clips and gaps.
 * The player walks these lists against its clock and switches sources at
 * each segment's first frame.
 */

export interface ClipSpan {
  asset_id: string;
  start: number;
  in: number;
  duration: number;
}

export interface Segment {
  /** First frame (sequence frames). */
  from: number;
  /** Frame after the last one. */
  to: number;
  /** The clip shown, or null for a gap. */
  clip: { track: string; index: number; asset_id: string; /** The source position at `from`, in seconds. */ at: number } | null;
}

const isVideo = (track: string) => /^V[1-9]$/.test(track);
const isSound = (track: string) => /^A[1-9]$/.test(track);

/** Video tracks top first (V9 … V1): the order in which one covers another. */
export function videoOrder(tracks: Readonly<Record<string, readonly ClipSpan[]>>): string[] {
  return Object.keys(tracks).filter(isVideo).sort((a, b) => Number(b.slice(1)) - Number(a.slice(1)));
}

/** Sound tracks in order (A1 … A9). */
export function soundTracks(tracks: Readonly<Record<string, readonly ClipSpan[]>>): string[] {
  return Object.keys(tracks).filter(isSound).sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
}

interface Placed {
  track: string;
  index: number;
  asset_id: string;
  start: number;
  end: number;
  in: number;
}

function placed(tracks: Readonly<Record<string, readonly ClipSpan[]>>, track: string, rate: Rate): Placed[] {
  return (tracks[track] ?? [])
    .map((c, index) => {
      const start = secondsToFrames(c.start, rate);
      return { track, index, asset_id: c.asset_id, start, end: start + secondsToFrames(c.duration, rate), in: c.in };
    })
    .filter((p) => p.end > p.start);
}

/**
 * Segments of `track` (one list of clips) or of the picture (the video
 * tracks, top wins) from frame `from` to `to` (exclusive), gaps included,
 * adjacent and in order; empty when `to <= from`.
 */
export function segments(tracks: Readonly<Record<string, readonly ClipSpan[]>>, rate: Rate, which: 'picture' | string, from: number, to: number): Segment[] {
  if (to <= from) return [];
  const layers = (which === 'picture' ? videoOrder(tracks) : [which]).map((t) => placed(tracks, t, rate));
  // Every frame where what is on top may change.
  const cuts = new Set<number>([from, to]);
  for (const layer of layers) {
    for (const p of layer) {
      if (p.start > from && p.start < to) cuts.add(p.start);
      if (p.end > from && p.end < to) cuts.add(p.end);
    }
  }
  const points = [...cuts].sort((a, b) => a - b);
  const out: Segment[] = [];
  for (let i = 0; i + 1 < points.length; i++) {
    const a = points[i]!;
    const b = points[i + 1]!;
    let top: Placed | null = null;
    for (const layer of layers) {
      top = layer.find((p) => p.start <= a && a < p.end) ?? null;
      if (top) break;
    }
    const clip = top ? { track: top.track, index: top.index, asset_id: top.asset_id, at: top.in + ((a - top.start) * rate.den) / rate.num } : null;
    const last = out[out.length - 1];
    // The same clip across a cut on a track below it continues as one segment.
    if (last && last.to === a && sameClip(last.clip, clip)) last.to = b;
    else out.push({ from: a, to: b, clip });
  }
  return out;
}

function sameClip(a: Segment['clip'], b: Segment['clip']): boolean {
  if (a === null || b === null) return a === b;
  return a.track === b.track && a.index === b.index;
}

/** The segment holding frame f, or null past the list. */
export function segmentAt(list: readonly Segment[], f: number): Segment | null {
  let lo = 0;
  let hi = list.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const s = list[mid]!;
    if (f < s.from) hi = mid - 1;
    else if (f >= s.to) lo = mid + 1;
    else return s;
  }
  return null;
}

/** The source position (seconds) of a segment's clip at sequence frame f. */
export function sourceTime(segment: Segment, f: number, rate: Rate): number | null {
  if (!segment.clip) return null;
  return segment.clip.at + ((f - segment.from) * rate.den) / rate.num;
}

/** The frame the clock shows `elapsedMs` after starting at `from` (speed 1), whole frames, rounded down. */
export function frameAfter(from: number, elapsedMs: number, rate: Rate): number {
  return from + Math.floor((Math.max(0, elapsedMs) * rate.num) / (rate.den * 1000) + 1e-9);
}
