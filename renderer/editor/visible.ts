/**
 * Which clips the timeline draws (pure; test/unit/editor-playback.test.ts).
 * A long sequence is drawn only where it is seen: the frames in view plus
 * half a screen either side (so a short scroll shows clips already there), and
 * where clips are narrower than a pixel, one summary block per run of them
 * ("12 clips") instead of one element each. A clip that must stay in the
 * page (the focused or dragged one) is drawn wherever it is.
 */

export interface Span {
  /** First frame. */
  start: number;
  /** Frames. */
  length: number;
}

export interface FrameRange {
  from: number;
  to: number;
}

/**
 * The frames to draw for a scroll position: the viewport (its width less
 * the track-name column) and `margin` viewports either side (half of one by
 * default), clamped at 0.
 */
export function visibleFrames(scrollLeft: number, clientWidth: number, labelPx: number, pxPerFrame: number, margin = 0.5): FrameRange {
  const width = Math.max(0, clientWidth - labelPx);
  const left = scrollLeft - margin * width;
  const right = scrollLeft + (1 + margin) * width;
  return { from: Math.max(0, Math.floor(left / pxPerFrame)), to: Math.max(0, Math.ceil(right / pxPerFrame)) };
}

export type LaneItem = { kind: 'clip'; index: number } | { kind: 'summary'; start: number; end: number; count: number; first: number };

/**
 * What one lane draws in `range`: each clip at least `minPx` wide as itself,
 * and each run of narrower clips (each starting within `minPx` of the
 * run's end) as one summary from its first start to its last end. `keep`
 * (indexes) are drawn as clips wherever they are. Clips are in time order
 * and do not overlap (the service's rule for a track).
 */
export function laneItems(clips: readonly Span[], range: FrameRange, pxPerFrame: number, keep: ReadonlySet<number> = new Set(), minPx = 1): LaneItem[] {
  const out: LaneItem[] = [];
  let run: Extract<LaneItem, { kind: 'summary' }> | null = null;
  const close = () => {
    if (run) out.push(run);
    run = null;
  };
  // The first clip that ends after range.from (binary search: clips are in order).
  let lo = 0;
  let hi = clips.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const c = clips[mid]!;
    if (c.start + c.length <= range.from) lo = mid + 1;
    else hi = mid;
  }
  for (const index of keep) if (index < lo && clips[index]) out.push({ kind: 'clip', index });
  for (let i = lo; i < clips.length; i++) {
    const c = clips[i]!;
    if (c.start >= range.to) break;
    if (keep.has(i) || c.length * pxPerFrame >= minPx) {
      close();
      out.push({ kind: 'clip', index: i });
      continue;
    }
    const end = c.start + c.length;
    if (run && (c.start - run.end) * pxPerFrame < minPx) {
      run.end = end;
      run.count++;
    } else {
      close();
      run = { kind: 'summary', start: c.start, end, count: 1, first: i };
    }
  }
  close();
  for (const index of keep) {
    const c = clips[index];
    if (c && c.start >= range.to) out.push({ kind: 'clip', index });
  }
  return out;
}

/**
 * CSS that crops a waveform picture of the whole source (its x axis exactly
 * 0..`sourceS` seconds) to a clip's `inS`..`inS + durS`, for an element as
 * wide as the clip: the picture is `sourceS / durS` of the element's width
 * and shifted left by `inS / durS` of it. Written as percentages, so it
 * holds at every zoom without being set again. A background-position
 * percentage p places the picture at p × (box − picture), hence
 * p = inS / (sourceS − durS).
 */
export function waveformCrop(inS: number, durS: number, sourceS: number): { size: string; position: string } | null {
  if (!(durS > 0) || !(sourceS > 0) || inS < 0) return null;
  const size = (sourceS / durS) * 100;
  const gap = sourceS - durS;
  const position = Math.abs(gap) < 1e-9 ? 0 : (inS / gap) * 100;
  return { size: `${round(size)}% 100%`, position: `${round(position)}% 0` };
}

const round = (n: number) => Math.round(n * 1e4) / 1e4;
