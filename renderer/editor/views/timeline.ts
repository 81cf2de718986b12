import { h } from '../../lib/dom';
import { showMedia } from '../../lib/media';
import { dispatch } from '../actions/commands';
import { applyTrim, moveTo, select } from '../actions/edits';
import { say } from '../actions/notice';
import { setPlayhead, setZoom, zoomToFit } from '../actions/transport';
import { moveClip, tickStep, trimClip, ZOOMS, type SnapTarget } from '../frames';
import { clipLabel, clipName, frames, isStill, px, requestRender, tc, totalFrames, trackNames, view, type Viewport } from '../read';
import type { Clip } from '../types';
import { poster } from './posters';

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

export function drawTimeline(): void {
  const tl = view.tl;
  if (!tl) return;
  canvas.style.width = `${LABEL_PX + canvasFrames() * px()}px`;
  canvas.dataset.pxPerFrame = String(px());
  const budget = { left: MAX_VIDEO_THUMBS };
  const selection = view.selection;
  const rows = trackNames().map((name) => {
    const lane = h('div', { class: 'lane', 'data-track': name });
    (tl.tracks[name] ?? []).forEach((c, index) => {
      const isSelected = selection?.track === name && selection.index === index;
      const el = h(
        'button',
        {
          type: 'button',
          class: `clip clip-${name[0] === 'V' ? 'video' : 'audio'}${isSelected ? ' selected' : ''}`,
          'aria-pressed': isSelected ? 'true' : 'false',
          'aria-label': clipLabel(name, c),
          'data-track': name,
          'data-index': index,
          'data-start': frames(c.start),
          'data-length': frames(c.duration),
        },
        h('span', { class: 'handle handle-start', 'aria-hidden': 'true', 'data-edge': 'start' }),
        thumbFor(c, budget),
        h('span', { class: 'clip-text', 'aria-hidden': 'true' }, clipName(c)),
        h('span', { class: 'handle handle-end', 'aria-hidden': 'true', 'data-edge': 'end' }),
      );
      place(el, frames(c.start), frames(c.duration));
      el.addEventListener('pointerdown', (e) => startGesture(e, el, name, index));
      el.addEventListener('click', () => select({ track: name, index }));
      el.addEventListener('keydown', (e) => dispatch(e, 'clip', { track: name, index }));
      lane.append(el);
    });
    return h('div', { class: 'track', role: 'group', 'aria-label': `Track ${name}` }, h('span', { class: 'track-name', 'aria-hidden': 'true' }, name), lane);
  });
  const focused = document.activeElement instanceof HTMLElement && lanes.contains(document.activeElement) ? document.activeElement : null;
  const focusKey = focused ? `${focused.dataset.track}:${focused.dataset.index}` : null;
  lanes.replaceChildren(...rows);
  if (focusKey) lanes.querySelector<HTMLElement>(`.clip[data-track="${focusKey.split(':')[0]}"][data-index="${focusKey.split(':')[1]}"]`)?.focus();
  drawRuler();
  drawPlayhead();
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
    drawTimeline();
    requestRender('toolbar');
    scroller.scrollLeft = Math.max(0, LABEL_PX + anchor.frame * px() - anchor.x);
    drawRuler();
  },
  fit() {
    zoomToFit(Math.max(200, scroller.clientWidth - LABEL_PX - 24));
    drawTimeline();
    requestRender('toolbar');
    scroller.scrollLeft = 0;
    drawRuler();
  },
  reveal(frame) {
    const x = LABEL_PX + frame * px();
    if (x < scroller.scrollLeft + LABEL_PX + 20 || x > scroller.scrollLeft + scroller.clientWidth - 20) scroller.scrollLeft = Math.max(0, x - scroller.clientWidth / 3);
  },
  focusClip(track, index) {
    drawTimeline();
    lanes.querySelector<HTMLElement>(`.clip[data-track="${track}"][data-index="${index}"]`)?.focus();
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
  let rulerFrame = 0;
  scroller.addEventListener('scroll', () => {
    cancelAnimationFrame(rulerFrame);
    rulerFrame = requestAnimationFrame(drawRuler);
  });
}
