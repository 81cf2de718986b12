import { h } from '../../lib/dom';
import { showMedia } from '../../lib/media';
import { dispatch } from '../actions/commands';
import { applyTrim, moveTo, select } from '../actions/edits';
import { say } from '../actions/notice';
import { setPlayhead, setZoom, zoomToFit } from '../actions/transport';
import { moveClip, tickStep, trimClip, ZOOMS, type SnapTarget } from '../frames';
import { clipLabel, clipName, frames, isStill, px, requestRender, tc, totalFrames, trackNames, view, type Viewport } from '../read';
import type { Clip } from '../types';
import { laneItems, visibleFrames, type Span } from '../visible';
import { poster } from './posters';
import { waveformFor } from './waveform';

/** Pixels an edge must come within to snap. */
const SNAP_PX = 8;
/** Pointer movement that turns a press into a drag. */
const DRAG_PX = 4;
/** Video clips that get a poster frame (grabbed once per asset and in point); the rest show their kind. */
const MAX_VIDEO_THUMBS = 200;
/** The widest the timeline may be drawn, in pixels (browsers stop laying out far beyond this). */
const MAX_WIDTH_PX = 8_000_000;
/** The track names' column at the left of the timeline (as in editor.css `--label`). */
const LABEL_PX = 56;

export const ruler = h('div', {
  class: 'ruler',
  role: 'slider',
  tabindex: 0,
  'aria-label': 'Playhead',
  'aria-valuemin': 0,
});
const lanes = h('div', { class: 'lanes' });
const playheadLine = h('div', { class: 'playhead', 'aria-hidden': 'true' });
const snapGuide = h('div', { class: 'snap-guide', 'aria-hidden': 'true', hidden: true });
const marks = h('div', { class: 'marks', 'aria-hidden': 'true' }, playheadLine, snapGuide);
const canvas = h('div', { class: 'canvas' }, ruler, lanes, marks);
export const scroller = h('div', { class: 'scroller', role: 'group', 'aria-label': 'Timeline: tracks and clips' }, canvas);

/** Frames drawn: the sequence plus room to drag past its end. */
function canvasFramesAt(z: number): number {
  const visible = Math.max(1, ((scroller.clientWidth || 800) - LABEL_PX) / ZOOMS[z]!);
  return Math.max(totalFrames() + Math.ceil(visible * 0.25), Math.ceil(visible));
}

const canvasFrames = () => canvasFramesAt(view.zoom);

/** Whether zoom level z keeps the drawn width within what browsers lay out. */
export function zoomFits(z: number): boolean {
  return z >= 0 && z < ZOOMS.length && canvasFramesAt(z) * ZOOMS[z]! <= MAX_WIDTH_PX;
}

function thumbFor(c: Clip, videoBudget: { left: number }): HTMLElement {
  const info = view.assets.get(c.asset_id);
  const kind = info?.kind ?? 'unknown';
  if (kind === 'image') {
    const img = h('img', { class: 'thumb', alt: '', loading: 'lazy', draggable: 'false' });
    showMedia(img, c.asset_id, 'thumb', () => {});
    return img;
  }
  if (kind === 'video' && videoBudget.left > 0) {
    videoBudget.left--;
    const key = `${c.asset_id}@${c.in}`;
    const img = h('img', { class: 'thumb', alt: '', draggable: 'false', 'data-poster': key });
    const ready = poster(c.asset_id, c.in, key, (done, url) => {
      for (const el of lanes.querySelectorAll<HTMLImageElement>('img[data-poster]')) if (el.dataset.poster === done) el.src = url;
    });
    if (ready) img.src = ready;
    return img;
  }
  return h('span', { class: `thumb thumb-${kind}`, 'aria-hidden': 'true' }, kind === 'audio' ? '♪' : kind === 'video' ? '▶' : '·');
}

function place(el: HTMLElement, startFrame: number, lengthFrames: number): void {
  el.style.left = `${startFrame * px()}px`;
  el.style.width = `${Math.max(2, lengthFrames * px())}px`;
}

/** Each track's lane of the last draw, and its clips in frames (what laneItems reads). */
let laneEls = new Map<string, { lane: HTMLElement; spans: Span[] }>();
/** Clip elements in the page by `track:index`, reused while only the scroll changes. */
let drawn = new Map<string, HTMLElement>();
/** While a clip is dragged its element must stay: scrolling draws nothing new meanwhile. */
let gesture = false;
/** A clip to keep drawn wherever it is (the one the keyboard moved to). */
let pinned: string | null = null;

const keyOf = (track: string, index: number) => `${track}:${index}`;

function clipElement(name: string, c: Clip, index: number, budget: { left: number }): HTMLElement {
  const selection = view.selection;
  const isSelected = selection?.track === name && selection.index === index;
  const audio = name[0] === 'A';
  const el = h(
    'button',
    {
      type: 'button',
      class: `clip clip-${audio ? 'audio' : 'video'}${isSelected ? ' selected' : ''}`,
      'aria-pressed': isSelected ? 'true' : 'false',
      'aria-label': clipLabel(name, c),
      'data-track': name,
      'data-index': index,
      'data-start': frames(c.start),
      'data-length': frames(c.duration),
    },
    audio ? waveformFor(c, lanes) : null,
    h('span', { class: 'handle handle-start', 'aria-hidden': 'true', 'data-edge': 'start' }),
    thumbFor(c, budget),
    h('span', { class: 'clip-text', 'aria-hidden': 'true' }, clipName(c)),
    h('span', { class: 'handle handle-end', 'aria-hidden': 'true', 'data-edge': 'end' }),
  );
  place(el, frames(c.start), frames(c.duration));
  el.addEventListener('pointerdown', (e) => startGesture(e, el, name, index));
  el.addEventListener('click', () => select({ track: name, index }));
  el.addEventListener('keydown', (e) => dispatch(e, 'clip', { track: name, index }));
  return el;
}

/** Clips narrower than this many pixels are drawn as one summary per run (a clip is drawn at least 2 px wide). */
const SUMMARY_PX = 2;

function summaryElement(name: string, s: { start: number; end: number; count: number }): HTMLElement {
  const label = `${s.count} clip${s.count === 1 ? '' : 's'}, ${tc(s.start)} to ${tc(s.end)}: zoom in to see them`;
  const el = h('span', { class: `clip-summary clip-summary-${name[0] === 'A' ? 'audio' : 'video'}`, role: 'img', 'aria-label': label, title: label, 'data-count': s.count });
  place(el, s.start, s.end - s.start);
  return el;
}

/** The lanes (one per track), then only the clips in and near the view (visible.ts). */
export function drawTimeline(): void {
  const focusKey = layout();
  if (focusKey === undefined) return;
  drawLanes(focusKey);
  drawRuler();
  drawPlayhead();
}

/** The canvas's width and one empty lane per track; the focused clip's key (undefined: no sequence). */
function layout(): string | null | undefined {
  const tl = view.tl;
  if (!tl) return undefined;
  canvas.style.width = `${LABEL_PX + canvasFrames() * px()}px`;
  canvas.dataset.pxPerFrame = String(px());
  const focused = document.activeElement instanceof HTMLElement && lanes.contains(document.activeElement) ? document.activeElement : null;
  const focusKey = focused?.dataset.track ? keyOf(focused.dataset.track, Number(focused.dataset.index)) : null;
  laneEls = new Map();
  const rows = trackNames().map((name) => {
    const lane = h('div', { class: 'lane', 'data-track': name });
    laneEls.set(name, { lane, spans: (tl.tracks[name] ?? []).map((c) => ({ start: frames(c.start), length: frames(c.duration) })) });
    return h('div', { class: 'track', role: 'group', 'aria-label': `Track ${name}` }, h('span', { class: 'track-name', 'aria-hidden': 'true' }, name), lane);
  });
  drawn = new Map();
  lanes.replaceChildren(...rows);
  return focusKey;
}

/** Fills each lane with what is in view; elements already drawn are kept, so a scroll builds only what came into view. */
function drawLanes(focusKey: string | null = null): void {
  const tl = view.tl;
  if (!tl) return;
  const active = document.activeElement instanceof HTMLElement && lanes.contains(document.activeElement) ? document.activeElement : null;
  focusKey ??= active?.dataset.track ? keyOf(active.dataset.track, Number(active.dataset.index)) : null;
  const keepKeys = [focusKey, pinned, view.selection ? keyOf(view.selection.track, view.selection.index) : null];
  const range = visibleFrames(scroller.scrollLeft, scroller.clientWidth || 800, LABEL_PX, px());
  const budget = { left: MAX_VIDEO_THUMBS };
  const next = new Map<string, HTMLElement>();
  for (const [name, { lane, spans }] of laneEls) {
    const clips = tl.tracks[name] ?? [];
    const keep = new Set<number>();
    for (const k of keepKeys) if (k && k.startsWith(`${name}:`)) keep.add(Number(k.slice(name.length + 1)));
    const children = laneItems(spans, range, px(), keep, SUMMARY_PX).map((item) => {
      if (item.kind === 'summary') return summaryElement(name, item);
      const key = keyOf(name, item.index);
      const el = drawn.get(key) ?? clipElement(name, clips[item.index]!, item.index, budget);
      next.set(key, el);
      return el;
    });
    lane.replaceChildren(...children);
  }
  drawn = next;
  const refocus = focusKey ? drawn.get(focusKey) : null;
  if (refocus && document.activeElement !== refocus && (active || focusKey !== null)) refocus.focus({ preventScroll: true });
  lanes.dataset.drawn = String(drawn.size);
}

/** The selected clip is marked without drawing the lanes again. */
export function drawSelection(): void {
  const s = view.selection;
  for (const el of lanes.querySelectorAll<HTMLElement>('.clip')) {
    const on = s !== null && el.dataset.track === s.track && Number(el.dataset.index) === s.index;
    el.classList.toggle('selected', on);
    el.setAttribute('aria-pressed', on ? 'true' : 'false');
  }
}

/** Only the ticks in view (and a screen either side) are in the page. */
export function drawRuler(): void {
  if (!view.tl) return;
  const step = tickStep(px(), view.rate);
  const left = scroller.scrollLeft - LABEL_PX;
  const from = Math.max(0, Math.floor((left - scroller.clientWidth) / px() / step) * step);
  const to = Math.min(canvasFrames(), (left + 2 * scroller.clientWidth) / px());
  const ticks: HTMLElement[] = [];
  for (let f = from; f <= to; f += step) {
    const tick = h('span', { class: 'tick', 'aria-hidden': 'true' }, tc(f));
    tick.style.left = `${f * px()}px`;
    ticks.push(tick);
  }
  ruler.replaceChildren(...ticks);
  ruler.setAttribute('aria-valuemax', String(Math.max(totalFrames(), view.playhead)));
}

export function drawPlayhead(): void {
  playheadLine.style.left = `${view.playhead * px()}px`;
  ruler.setAttribute('aria-valuenow', String(view.playhead));
  ruler.setAttribute('aria-valuetext', tc(view.playhead));
}

// ---- pointer gestures --------------------------------------------------------

function snapTargets(exceptTrack: string, exceptIndex: number): SnapTarget[] {
  const out: SnapTarget[] = [{ frame: 0, kind: 'zero' }, { frame: view.playhead, kind: 'playhead' }];
  for (const [name, clips] of Object.entries(view.tl!.tracks)) {
    clips.forEach((c, i) => {
      if (name === exceptTrack && i === exceptIndex) return;
      const s = frames(c.start);
      out.push({ frame: s, kind: 'edge' }, { frame: s + frames(c.duration), kind: 'edge' });
    });
  }
  return out;
}

function showGuide(target: SnapTarget | null): void {
  snapGuide.hidden = target === null;
  if (target) snapGuide.style.left = `${target.frame * px()}px`;
}

/** A drag moves the clip (or trims the edge it began on); the element follows the pointer, the action saves on release. */
function startGesture(e: PointerEvent, el: HTMLElement, track: string, index: number): void {
  if (!view.tl || e.button !== 0 || view.saving) return;
  const c = view.tl.tracks[track]?.[index];
  if (!c) return;
  const edge = (e.target as HTMLElement).dataset.edge as 'start' | 'end' | undefined;
  const x0 = e.clientX;
  const start = frames(c.start);
  const length = frames(c.duration);
  const targets = snapTargets(track, index);
  let dragging = false;
  let result: { start: number; in: number; length: number } = { start, in: frames(c.in), length };
  el.setPointerCapture(e.pointerId);
  gesture = true;
  const move = (ev: PointerEvent) => {
    const dx = ev.clientX - x0;
    if (!dragging && Math.abs(dx) < DRAG_PX) return;
    dragging = true;
    el.classList.add('dragging');
    // Alt held suspends snapping for this gesture.
    const snap = view.snapping && !ev.altKey;
    if (edge) {
      const r = trimClip({ start, in: frames(c.in), length, edge, deltaPx: dx, pxPerFrame: px(), targets, thresholdPx: SNAP_PX, snapping: snap, still: isStill(c) });
      result = r;
      showGuide(r.target);
      place(el, r.start, r.length);
    } else {
      const r = moveClip({ start, length, deltaPx: dx, pxPerFrame: px(), targets, thresholdPx: SNAP_PX, snapping: snap });
      result = { start: r.frame, in: frames(c.in), length };
      showGuide(r.target);
      el.style.left = `${r.frame * px()}px`;
    }
    say(`${edge ? 'Trim' : 'Move'}: ${tc(result.start)}–${tc(result.start + result.length)}`);
  };
  const end = () => {
    gesture = false;
    el.removeEventListener('pointermove', move);
    el.removeEventListener('pointerup', end);
    el.removeEventListener('pointercancel', end);
    el.classList.remove('dragging');
    showGuide(null);
    if (!dragging) return;
    // A drag is not a click: keep the click from re-selecting after the save redraws.
    el.addEventListener('click', (ev) => ev.stopImmediatePropagation(), { capture: true, once: true });
    select({ track, index });
    if (edge) applyTrim(track, index, c, result);
    else moveTo(track, index, c, result.start);
  };
  el.addEventListener('pointermove', move);
  el.addEventListener('pointerup', end);
  el.addEventListener('pointercancel', end);
}

// ---- the viewport: zoom and scroll --------------------------------------------

export const viewport: Viewport = {
  fits: zoomFits,
  anchor(clientX) {
    // Keep the frame under the pointer (else the playhead, if in view, else the left edge) where it is.
    const rect = scroller.getBoundingClientRect();
    const playheadX = LABEL_PX + view.playhead * px() - scroller.scrollLeft;
    const x = clientX !== undefined ? clientX - rect.left : playheadX >= LABEL_PX && playheadX <= scroller.clientWidth ? playheadX : LABEL_PX;
    return { frame: Math.max(0, (scroller.scrollLeft + x - LABEL_PX) / px()), x };
  },
  keep(anchor) {
    // The new width first, then the scroll that keeps the anchor, then the clips there: drawn once.
    const focusKey = layout();
    requestRender('toolbar');
    scroller.scrollLeft = Math.max(0, LABEL_PX + anchor.frame * px() - anchor.x);
    drawLanes(focusKey ?? null);
    drawRuler();
    drawPlayhead();
  },
  fit() {
    zoomToFit(Math.max(200, scroller.clientWidth - LABEL_PX - 24));
    const focusKey = layout();
    requestRender('toolbar');
    scroller.scrollLeft = 0;
    drawLanes(focusKey ?? null);
    drawRuler();
    drawPlayhead();
  },
  reveal(frame) {
    const x = LABEL_PX + frame * px();
    if (x < scroller.scrollLeft + LABEL_PX + 20 || x > scroller.scrollLeft + scroller.clientWidth - 20) scroller.scrollLeft = Math.max(0, x - scroller.clientWidth / 3);
  },
  focusClip(track, index) {
    const c = view.tl?.tracks[track]?.[index];
    if (c) viewport.reveal(frames(c.start));
    pinned = keyOf(track, index);
    drawTimeline();
    drawn.get(pinned)?.focus();
  },
};

/** The ruler sets the playhead by pointer and keys; Ctrl/⌘+wheel zooms; the ruler's ticks follow the scroll. */
export function wireTimeline(): void {
  ruler.addEventListener('keydown', (e) => dispatch(e, 'ruler'));
  ruler.addEventListener('pointerdown', (e) => {
    const rect = ruler.getBoundingClientRect();
    const at = (ev: PointerEvent) => setPlayhead(Math.round((ev.clientX - rect.left) / px()), false);
    at(e);
    ruler.setPointerCapture(e.pointerId);
    const move = (ev: PointerEvent) => at(ev);
    const up = () => {
      ruler.removeEventListener('pointermove', move);
      ruler.removeEventListener('pointerup', up);
    };
    ruler.addEventListener('pointermove', move);
    ruler.addEventListener('pointerup', up);
  });
  scroller.addEventListener(
    'wheel',
    (e) => {
      if (!(e.ctrlKey || e.metaKey)) return;
      e.preventDefault();
      setZoom(e.deltaY < 0 ? view.zoom - 1 : view.zoom + 1, e.clientX);
    },
    { passive: false },
  );
  let scrollFrame = 0;
  scroller.addEventListener('scroll', () => {
    cancelAnimationFrame(scrollFrame);
    scrollFrame = requestAnimationFrame(() => {
      if (!gesture) drawLanes();
      drawRuler();
    });
  });
  window.addEventListener('resize', () => {
    if (!gesture) drawLanes();
  });
}
