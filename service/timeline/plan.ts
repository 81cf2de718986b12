import type { AssetKind } from '../assets';
import type { MediaProbe, VideoStreamInfo } from '../media/types';
import type { TimelineDoc } from './document';
import { trackRate, sortTracks } from './document';
import type { ExportPreset } from './schema';
import { frameRate, parseRate, rateLabel, sameRate, toSeconds, toUnits } from './snap';

/**
 * The export plan (docs/api.md "Export plan `GET /timeline/{id}:plan`"): whether
 * the video can be stream-copied, and for each video clip the reason it
 * cannot, in words a person can act on. Pure: the probes come in.
 *
 * A clip can be copied when it is used whole (in = 0, its duration equal to
 * the probed video stream's within half a frame: no trim, no hold), is not an
 * image or a still, has no crossfade, sits on V1 with no gap before it, and
 * its stream matches the target (size, frame rate, square pixels, no
 * rotation, a codec MP4 can carry) and the first video clip (codec, profile,
 * level, aspect ratios, field order, pixel format, time base, colour tags,
 * parameter sets, codec tag). Sound never decides the path: it is always
 * encoded, once, for the whole sequence.
 */

export interface PlanClip {
  track: string;
  index: number;
  asset_id: string;
  path: 'copy' | 'conform';
  reason: string | null;
}

export interface ExportPlan {
  preset: ExportPreset;
  path: 'copy' | 'conform';
  clips: PlanClip[];
}

export interface ClipSource {
  kind: AssetKind;
  /** null for images (never probed). */
  probe: MediaProbe | null;
}

/** Codecs that MP4 carries and the concat demuxer can join by stream copy. */
export const COPYABLE_CODECS = new Set(['h264', 'hevc']);

/** The V-track clips in plan order: V1 first, each track by start. */
export function videoClips(doc: TimelineDoc): { track: string; index: number; asset_id: string }[] {
  return sortTracks(Object.keys(doc.tracks))
    .filter((t) => t.startsWith('V'))
    .flatMap((track) => doc.tracks[track]!.map((c, index) => ({ track, index, asset_id: c.asset_id })));
}

export function planExport(doc: TimelineDoc, sourceOf: (assetId: string) => ClipSource, preset: ExportPreset): ExportPlan {
  const fps = frameRate(doc.target.fps);
  const rate = trackRate('V1', doc.target);
  const halfFrame = Number(fps.den) / Number(fps.num) / 2;
  const clips: PlanClip[] = [];

  const v1 = doc.tracks.V1 ?? [];
  const reference = v1.map((c) => sourceOf(c.asset_id).probe?.video).find((v): v is VideoStreamInfo => !!v && !v.still) ?? null;
  const referenceName = reference ? `V1 #${v1.findIndex((c) => sourceOf(c.asset_id).probe?.video === reference) + 1}` : '';
  const { end: sequenceEnd, track: lastTrack } = sequenceEndSeconds(doc);
  let v1End = 0;

  for (const { track, index, asset_id } of videoClips(doc)) {
    const clip = doc.tracks[track]![index]!;
    const source = sourceOf(asset_id);
    const reasons: string[] = [];
    const video = source.probe?.video ?? null;

    if (track !== 'V1') reasons.push(`it is on ${track}: tracks above V1 are composited over it, which needs encoding`);
    if (source.kind === 'image' || video?.still) reasons.push('it is a still image: it becomes a video clip by encoding');
    if (clip.transition) reasons.push('it has a crossfade, which needs encoding');
    if (track === 'V1') {
      const start = toUnits(clip.start, rate);
      if (start > v1End) reasons.push(`it starts after a gap of ${seconds(toSeconds(start - v1End, rate))}, which is filled with black by encoding`);
      v1End = Math.max(v1End, start + toUnits(clip.duration, rate));
      if (index === v1.length - 1 && toSeconds(v1End, rate) < sequenceEnd - halfFrame) {
        const after = seconds(sequenceEnd - toSeconds(v1End, rate));
        const what = lastTrack.startsWith('A') ? 'sound' : `on ${lastTrack}`;
        reasons.push(`it is the last clip on V1, but the sequence runs on ${after} after it (${what}), which needs black video by encoding`);
      }
    }
    if (video && !video.still) {
      reasons.push(...useProblems(clip.in, clip.duration, video, halfFrame));
      reasons.push(...targetProblems(video, doc.target.width, doc.target.height, fps));
      if (reference && video !== reference) reasons.push(...streamProblems(video, reference, referenceName));
    }
    const reason = reasons.length > 0 ? sentence(reasons) : null;
    clips.push({ track, index, asset_id, path: reason ? 'conform' : 'copy', reason });
  }

  if (preset === 'h264') {
    return {
      preset,
      path: 'conform',
      clips: clips.map((c) => ({ ...c, path: 'conform', reason: c.reason ?? 'The h264 preset encodes every clip' })),
    };
  }
  return { preset, path: clips.every((c) => c.path === 'copy') ? 'copy' : 'conform', clips };
}

/** Whole use: in = 0 and the clip's duration equal to the stream's within half a frame. */
function useProblems(offset: number, duration: number, video: VideoStreamInfo, halfFrame: number): string[] {
  const problems: string[] = [];
  if (offset > 0) problems.push(`it is trimmed: it starts ${seconds(offset)} into its source`);
  const length = video.duration_s;
  if (length === null) return [...problems, "its source's length could not be measured, so whole use cannot be shown"];
  const end = offset + duration;
  if (end > length + halfFrame) problems.push(`it holds its last frame for ${seconds(end - length)} past the end of its ${seconds(length)} source`);
  else if (end < length - halfFrame) problems.push(`it is trimmed: it ends ${seconds(length - end)} before the end of its ${seconds(length)} source`);
  return problems;
}

function targetProblems(video: VideoStreamInfo, width: number, height: number, fps: ReturnType<typeof frameRate>): string[] {
  const problems: string[] = [];
  if (!COPYABLE_CODECS.has(video.codec)) problems.push(`its codec ${video.codec} cannot be stream-copied into MP4 (H.264 and HEVC can)`);
  if (video.width !== width || video.height !== height) {
    problems.push(`its frame size ${video.width}x${video.height} differs from the target's ${width}x${height}`);
  }
  const rate = parseRate(video.frame_rate);
  if (!rate || !sameRate(rate, fps)) {
    problems.push(`its frame rate ${rate ? rateLabel(rate) : 'unknown'} fps differs from the target's ${rateLabel(fps)} fps`);
  }
  if (video.sar !== null && video.sar !== '1:1') problems.push(`its pixels are not square (sample aspect ratio ${video.sar})`);
  if (video.rotation !== 0) problems.push(`it is rotated by ${video.rotation}°, which a copy cannot apply`);
  return problems;
}

/** What must be equal between every copied clip and the first video clip. */
const STREAM_FIELDS: { key: keyof VideoStreamInfo; label: string }[] = [
  { key: 'codec', label: 'codec' },
  { key: 'profile', label: 'profile' },
  { key: 'level', label: 'level' },
  { key: 'sar', label: 'sample aspect ratio' },
  { key: 'dar', label: 'display aspect ratio' },
  { key: 'field_order', label: 'field order' },
  { key: 'pix_fmt', label: 'pixel format' },
  { key: 'time_base', label: 'time base' },
  { key: 'color_range', label: 'colour range' },
  { key: 'color_space', label: 'colour space' },
  { key: 'color_transfer', label: 'colour transfer' },
  { key: 'color_primaries', label: 'colour primaries' },
  { key: 'codec_tag', label: 'codec tag' },
];

function streamProblems(video: VideoStreamInfo, reference: VideoStreamInfo, referenceName: string): string[] {
  const problems: string[] = [];
  for (const { key, label } of STREAM_FIELDS) {
    if (video[key] !== reference[key]) {
      problems.push(`its ${label} ${shown(video[key])} differs from ${shown(reference[key])} in the first video clip (${referenceName})`);
    }
  }
  if (video.codec === reference.codec && video.extradata_hash !== reference.extradata_hash) {
    problems.push(`its parameter sets (SPS/PPS) differ from those of the first video clip (${referenceName})`);
  }
  return problems;
}

/** The end of the last clip on any track, seconds, and the first track (V1..V9, A1..A9) that ends there. */
function sequenceEndSeconds(doc: TimelineDoc): { end: number; track: string } {
  let end = 0;
  let last = 'V1';
  for (const track of sortTracks(Object.keys(doc.tracks))) {
    const rate = trackRate(track, doc.target);
    for (const c of doc.tracks[track]!) {
      const clipEnd = toSeconds(toUnits(c.start, rate) + toUnits(c.duration, rate), rate);
      if (clipEnd > end) [end, last] = [clipEnd, track];
    }
  }
  return { end, track: last };
}

function shown(value: unknown): string {
  return value === null || value === undefined ? 'unset' : String(value);
}

function seconds(s: number): string {
  return `${Math.round(s * 1000) / 1000} s`;
}

function sentence(reasons: string[]): string {
  const text = reasons.join('; ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}
