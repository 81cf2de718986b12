import type { AssetKind } from '../assets';
import type { ClipIn, Clip, LayClip, Target, Tracks, TracksIn } from './schema';
import { TARGET_DEFAULTS } from './schema';
import { frameRate, isBefore, sampleRate, toSeconds, toUnits, type Rate } from './snap';

/**
 * A sequence document is checked and snapped as a whole (docs/api.md
 * "Checks: 422 `invalid_timeline`", "Snapping"). Pure: what it knows of assets comes in
 * through `AssetLookup`, so the same function runs in tests and inside the
 * write transaction.
 */

export interface AssetFacts {
  kind: AssetKind;
  /** The source's length in seconds, when known (the asset's hint, or a probe). */
  duration_s: number | null;
}

export interface AssetLookup {
  /** Facts of an asset the caller may read now (not reclaimed), else null. */
  readable(assetId: string): AssetFacts | null;
  /**
   * Facts of an asset that the current revision already names, whether or not
   * the caller could add it today (a clip already present may stay:
   * docs/api.md "Update, delete, revisions, revert").
   */
  present(assetId: string): AssetFacts | null;
}

/** One entry of `details.clips`. `index` is the clip's position in the array the request gave. */
export interface ClipProblem {
  track: string | null;
  index: number;
  reason: string;
}

export interface TimelineDoc {
  name: string;
  target: Target;
  tracks: Tracks;
}

export type Built = { ok: true; doc: TimelineDoc; duration: number } | { ok: false; problems: ClipProblem[] };

/** Seconds an image lasts when no duration is given. */
export const IMAGE_SECONDS = 5;
/** The wording is the same whether the asset does not exist, is another studio's or was reclaimed. */
export const UNREADABLE = 'names an asset you cannot read (it does not exist, is not yours to read, or was reclaimed)';

const TRACK_ORDER = ['V', 'A'].flatMap((k) => [1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => `${k}${n}`));

export function withTargetDefaults(t: Partial<Target> | undefined): Target {
  return {
    sample_rate: t?.sample_rate ?? TARGET_DEFAULTS.sample_rate,
    fps: t?.fps ?? TARGET_DEFAULTS.fps,
    width: t?.width ?? TARGET_DEFAULTS.width,
    height: t?.height ?? TARGET_DEFAULTS.height,
  };
}

/** The rate a track's times are counted in: frames on V tracks, samples on A tracks. */
export function trackRate(track: string, target: Target): Rate {
  return track.startsWith('V') ? frameRate(target.fps) : sampleRate(target.sample_rate);
}

function unitName(track: string, target: Target): string {
  return track.startsWith('V') ? `one frame (1/${target.fps} s)` : `one sample (1/${target.sample_rate} s)`;
}

/** The track a kind of asset belongs on; null for `other`. */
export function trackKind(kind: AssetKind): 'V' | 'A' | null {
  if (kind === 'video' || kind === 'image') return 'V';
  if (kind === 'audio') return 'A';
  return null;
}

/**
 * Checks and snaps a whole document. Every problem is reported (each clip
 * once, with its first problem), in track order.
 */
export function buildDocument(input: { name: string; target: Target; tracks: TracksIn }, assets: AssetLookup): Built {
  const problems: ClipProblem[] = [];
  const tracks: Tracks = {};
  let duration = 0;

  for (const track of sortTracks(Object.keys(input.tracks))) {
    const rate = trackRate(track, input.target);
    const given = input.tracks[track]!;
    const snapped: { clip: Clip; index: number; start: number; length: number; transition: number }[] = [];
    given.forEach((c, index) => {
      const reason = clipProblem(track, rate, c, assets);
      if (typeof reason === 'string') {
        problems.push({ track, index, reason });
        return;
      }
      const start = toUnits(c.start, rate);
      const offset = toUnits(c.in ?? 0, rate);
      const length = toUnits(reason.duration, rate, reason.minus);
      if (length < 1) {
        problems.push({ track, index, reason: `is shorter than ${unitName(track, input.target)} after snapping` });
        return;
      }
      const fade = c.transition ? toUnits(c.transition.duration, rate) : 0;
      if (c.transition && fade < 1) {
        problems.push({ track, index, reason: `has a crossfade shorter than ${unitName(track, input.target)} after snapping` });
        return;
      }
      const clip: Clip = {
        asset_id: c.asset_id,
        start: toSeconds(start, rate),
        in: toSeconds(offset, rate),
        duration: toSeconds(length, rate),
      };
      if (c.transition) clip.transition = { kind: 'crossfade', duration: toSeconds(fade, rate) };
      snapped.push({ clip, index, start, length, transition: fade });
    });

    // Stable by start, so clips at one time keep the order they were given in.
    snapped.sort((a, b) => a.start - b.start || a.index - b.index);
    let previous: (typeof snapped)[number] | null = null;
    const kept: Clip[] = [];
    for (const s of snapped) {
      const reason = placementProblem(s, previous, rate);
      if (reason) problems.push({ track, index: s.index, reason });
      kept.push(s.clip);
      const clipEnd = s.start + s.length;
      if (!previous || clipEnd > previous.start + previous.length) previous = s;
      duration = Math.max(duration, toSeconds(clipEnd, rate));
    }
    tracks[track] = kept;
  }

  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, doc: { name: input.name, target: input.target, tracks }, duration };
}

/** A resolved duration: `duration − minus` seconds, exactly (minus is `in` when the source's length is the default). */
interface Length {
  duration: number;
  minus: number;
}

/** A clip's own problem (asset, kind, times), or its resolved duration. */
function clipProblem(track: string, rate: Rate, c: ClipIn, assets: AssetLookup): string | Length {
  const facts = assets.readable(c.asset_id) ?? assets.present(c.asset_id);
  if (!facts) return `${UNREADABLE}: ${c.asset_id}`;
  const belongs = trackKind(facts.kind);
  if (belongs === null) return `names an asset of kind "other", which cannot go on a track`;
  if (belongs !== track[0]) {
    return belongs === 'V'
      ? `puts ${facts.kind === 'image' ? 'an image' : 'a video'} asset on ${track}: video and images go on V tracks`
      : `puts a sound asset on ${track}: sound goes on A tracks`;
  }
  const offset = c.in ?? 0;
  if (facts.kind === 'image') {
    if (offset !== 0) return 'has in > 0, but an image has no time to start into';
    return { duration: c.duration ?? IMAGE_SECONDS, minus: 0 };
  }
  // Checked as snapped: an `in` that rounds to the end is at the end.
  const offsetUnits = toUnits(offset, rate);
  if (facts.duration_s !== null && !isBefore(offsetUnits, rate, facts.duration_s)) {
    return `starts at in = ${toSeconds(offsetUnits, rate)} s, at or past the end of its ${facts.duration_s} s source`;
  }
  if (c.duration !== undefined) return { duration: c.duration, minus: 0 };
  if (facts.duration_s === null) {
    return "has no duration, and the asset's length is unknown (it has no duration_s and could not be measured): give duration";
  }
  return { duration: facts.duration_s, minus: offset };
}

/** Overlap and crossfade rules against the clip before it on the track (in snapped units). */
function placementProblem(
  s: { start: number; length: number; transition: number },
  previous: { start: number; length: number; clip: Clip } | null,
  rate: Rate,
): string | null {
  const previousEnd = previous ? previous.start + previous.length : 0;
  if (previous && s.start < previousEnd) {
    return `overlaps the clip before it on the track, which ends at ${toSeconds(previousEnd, rate)} s`;
  }
  if (s.transition > 0) {
    if (!previous || s.start !== previousEnd) return 'has a crossfade but no clip ends where it starts on the track';
    if (s.transition > s.length || s.transition > previous.length) {
      return 'has a crossfade longer than itself or than the clip before it';
    }
  }
  return null;
}

export function sortTracks(names: string[]): string[] {
  return [...names].sort((a, b) => TRACK_ORDER.indexOf(a) - TRACK_ORDER.indexOf(b));
}

/**
 * TimelineCreate's `clips`: laid end to end from 0, video and images on V1,
 * sound on A1, each track on its own (docs/api.md "Create, read, list"). Problems name the
 * clip's position in `clips`. Durations are snapped here so that each next
 * start is exactly the previous end.
 */
export function layOut(
  clips: LayClip[],
  target: Target,
  assets: AssetLookup,
): { ok: true; tracks: TracksIn; origin: Map<string, number[]> } | { ok: false; problems: ClipProblem[] } {
  const problems: ClipProblem[] = [];
  const tracks: TracksIn = {};
  const origin = new Map<string, number[]>();
  const ends = new Map<string, number>();
  clips.forEach((c, index) => {
    const facts = assets.readable(c.asset_id);
    if (!facts) return problems.push({ track: null, index, reason: `${UNREADABLE}: ${c.asset_id}` });
    const kind = trackKind(facts.kind);
    if (kind === null) return problems.push({ track: null, index, reason: 'names an asset of kind "other", which cannot go on a track' });
    const track = `${kind}1`;
    const rate = trackRate(track, target);
    const resolved = clipProblem(track, rate, { ...c, start: 0 }, assets);
    if (typeof resolved === 'string') return problems.push({ track, index, reason: resolved });
    const start = ends.get(track) ?? 0;
    const length = toUnits(resolved.duration, rate, resolved.minus);
    ends.set(track, start + length);
    (tracks[track] ??= []).push({ ...c, start: toSeconds(start, rate), duration: toSeconds(length, rate) });
    const list = origin.get(track) ?? [];
    list.push(index);
    origin.set(track, list);
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, tracks, origin };
}

/** The end of a track in seconds (0 when empty): where an appended clip starts. */
export function trackEnd(clips: readonly Clip[] | undefined, track: string, target: Target): number {
  const rate = trackRate(track, target);
  let end = 0;
  for (const c of clips ?? []) end = Math.max(end, toUnits(c.start, rate) + toUnits(c.duration, rate));
  return toSeconds(end, rate);
}

/** Distinct asset ids of a document, in first-use order. */
export function assetIdsOf(tracks: Tracks | TracksIn): string[] {
  const ids = new Set<string>();
  for (const track of Object.values(tracks)) for (const c of track) ids.add(c.asset_id);
  return [...ids];
}
