import { h } from '../../lib/dom';
import { showMedia } from '../../lib/media';
import { dispatch } from '../actions/commands';
import { addClip, applyTrim, moveSelectedBy, placeClip, previewPlace, select, selectMany, toggleSelect, trimBounds } from '../actions/edits';
import { say } from '../actions/notice';
import { setPlayhead, setZoom, zoomToFit } from '../actions/transport';
import { clampGroupShift, moveClip, tickStep, trimClip, ZOOMS, type SnapTarget } from '../frames';
import { frameTracks } from '../actions/edits';
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
const inOut = h('div', { class: 'in-out', 'aria-hidden': 'true', hidden: true });
const marquee = h('div', { class: 'marquee', 'aria-hidden': 'true', hidden: true });
const marks = h('div', { class: 'marks', 'aria-hidden': 'true' }, inOut, playheadLine, snapGuide);
const canvas = h('div', { class: 'canvas' }, ruler, lanes, marks);
export const scroller = h('div', { class: 'scroller', role: 'group', 'aria-label': 'Timeline: tracks and clips' }, canvas, marquee);

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
  const selected = view.selected;
  const rows = trackNames().map((name) => {
    const lane = h('div', { class: 'lane', 'data-track': name });
    (tl.tracks[name] ?? []).forEach((c, index) => {
      const isSelected = selected.has(`${name}:${index}`);
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
      el.addEventListener('click', (e) => (e.shiftKey || e.ctrlKey || e.metaKey ? toggleSelect({ track: name, index }) : select({ track: name, index })));
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
  drawMarks();
}

/** The in and out marks: the range between them shaded over the tracks. */
export function drawMarks(): void {
  const { in: i, out: o } = view.marks;
  inOut.hidden = i === null && o === null;
  if (inOut.hidden) return;
  const from = i ?? 0;
  const to = o ?? Math.max(from + 1, totalFrames());
  inOut.style.left = `${from * px()}px`;
  inOut.style.width = `${Math.max(2, (to - from) * px())}px`;
  inOut.classList.toggle('open-in', i === null);
  inOut.classList.toggle('open-out', o === null);
}

/** The selected clips are marked without drawing the lanes again. */
export function drawSelection(): void {
  const s = view.selected;
  for (const el of lanes.querySelectorAll<HTMLElement>('.clip')) {
    const on = s.has(`${el.dataset.track}:${el.dataset.index}`);
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

/** The lane under a point, when it holds clips of `kind` ('V' or 'A'). */
function laneAt(x: number, y: number, kind: string): HTMLElement | null {
  const lane = document.elementFromPoint(x, y)?.closest<HTMLElement>('.lane');
  return lane && lane.dataset.track?.[0] === kind ? lane : null;
}

/**
 * A drag moves the clip (or trims the edge it began on); the element follows
 * the pointer to exactly where the release saves it (frames.ts: a move stops
 * at the neighbours' edges; with Shift it inserts and ripples the rest; up or
 * down onto another track of its kind it moves there). A selected clip among
 * others moves them all.
 */
function startGesture(e: PointerEvent, el: HTMLElement, track: string, index: number): void {
  if (!view.tl || e.button !== 0 || view.saving) return;
  const c = view.tl.tracks[track]?.[index];
  if (!c) return;
  const edge = (e.target as HTMLElement).dataset.edge as 'start' | 'end' | undefined;
  const x0 = e.clientX;
  const start = frames(c.start);
  const length = frames(c.duration);
  const targets = snapTargets(track, index);
  const group = !edge && view.selected.size > 1 && view.selected.has(`${track}:${index}`);
  const groupEls = group ? [...lanes.querySelectorAll<HTMLElement>('.clip.selected')] : [];
  const bounds = edge ? trimBounds(track, index) : undefined;
  const ownLane = el.parentElement!;
  let dragging = false;
  let result: { start: number; in: number; length: number; track: string; insert: boolean; shift: number } = { start, in: frames(c.in), length, track, insert: false, shift: 0 };
  el.setPointerCapture(e.pointerId);
  const move = (ev: PointerEvent) => {
    const dx = ev.clientX - x0;
    if (!dragging && Math.abs(dx) < DRAG_PX && Math.abs(ev.clientY - e.clientY) < DRAG_PX) return;
    dragging = true;
    el.classList.add('dragging');
    // Alt held suspends snapping for this gesture.
    const snap = view.snapping && !ev.altKey;
    if (edge) {
      const r = trimClip({ start, in: frames(c.in), length, edge, deltaPx: dx, pxPerFrame: px(), targets, thresholdPx: SNAP_PX, snapping: snap, still: isStill(c), bounds });
      result = { ...result, ...r };
      showGuide(r.target);
      place(el, r.start, r.length);
    } else if (group) {
      const wanted = moveClip({ start, length, deltaPx: dx, pxPerFrame: px(), targets, thresholdPx: SNAP_PX, snapping: snap }).frame - start;
      const shift = clampGroupShift(frameTracks(), view.selected, wanted);
      result = { ...result, start: start + shift, shift };
      for (const g of groupEls) g.style.transform = `translateX(${shift * px()}px)`;
    } else {
      const r = moveClip({ start, length, deltaPx: dx, pxPerFrame: px(), targets, thresholdPx: SNAP_PX, snapping: snap });
      const lane = laneAt(ev.clientX, ev.clientY, track[0]!) ?? ownLane;
      const to = lane.dataset.track ?? track;
      const at = previewPlace(track, index, r.frame, to, ev.shiftKey);
      result = { ...result, start: at, track: to, insert: ev.shiftKey };
      showGuide(at === r.frame ? r.target : null);
      el.style.left = `${at * px()}px`;
      el.style.transform = lane === ownLane ? '' : `translateY(${lane.getBoundingClientRect().top - ownLane.getBoundingClientRect().top}px)`;
    }
    say(`${edge ? 'Trim' : result.insert ? 'Insert' : 'Move'}: ${tc(result.start)}–${tc(result.start + result.length)}${result.track !== track ? ` on ${result.track}` : ''}`);
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
    if (group) {
      if (result.shift !== 0) moveSelectedBy(result.shift);
      else requestRender('timeline');
      return;
    }
    select({ track, index });
    if (edge) applyTrim(track, index, c, result);
    else if (result.start === start && result.track === track && !result.insert) requestRender('timeline');
    else placeClip(track, index, result.start, result.track, result.insert);
  };
  el.addEventListener('pointermove', move);
  el.addEventListener('pointerup', end);
  el.addEventListener('pointercancel', end);
}

/** A press on an empty part of the lanes draws a marquee: the clips it touches become the selection (with Shift/Ctrl, added to it). */
function startMarquee(e: PointerEvent): void {
  if (!view.tl || e.button !== 0 || (e.target as HTMLElement).closest('.clip')) return;
  const box = scroller.getBoundingClientRect();
  const x0 = e.clientX;
  const y0 = e.clientY;
  const adding = e.shiftKey || e.ctrlKey || e.metaKey;
  const before = adding ? [...view.selected] : [];
  let dragging = false;
  lanes.setPointerCapture(e.pointerId);
  const move = (ev: PointerEvent) => {
    if (!dragging && Math.hypot(ev.clientX - x0, ev.clientY - y0) < DRAG_PX) return;
    dragging = true;
    const [l, r] = [Math.min(x0, ev.clientX), Math.max(x0, ev.clientX)];
    const [t, b] = [Math.min(y0, ev.clientY), Math.max(y0, ev.clientY)];
    marquee.hidden = false;
    marquee.style.left = `${l - box.left + scroller.scrollLeft}px`;
    marquee.style.top = `${t - box.top}px`;
    marquee.style.width = `${r - l}px`;
    marquee.style.height = `${b - t}px`;
    const keys = new Set(before);
    for (const clip of lanes.querySelectorAll<HTMLElement>('.clip')) {
      const cb = clip.getBoundingClientRect();
      if (cb.right >= l && cb.left <= r && cb.bottom >= t && cb.top <= b) keys.add(`${clip.dataset.track}:${clip.dataset.index}`);
    }
    selectMany([...keys]);
  };
  const up = () => {
    lanes.removeEventListener('pointermove', move);
    lanes.removeEventListener('pointerup', up);
    lanes.removeEventListener('pointercancel', up);
    marquee.hidden = true;
    if (!dragging && !adding) select(null);
  };
  lanes.addEventListener('pointermove', move);
  lanes.addEventListener('pointerup', up);
  lanes.addEventListener('pointercancel', up);
}

/** The frame under a client x on the lanes. */
function frameAtX(clientX: number): number {
  const lane = lanes.querySelector<HTMLElement>('.lane');
  const left = lane ? lane.getBoundingClientRect().left : scroller.getBoundingClientRect().left + LABEL_PX;
  return Math.max(0, Math.round((clientX - left) / px()));
}

/** The media type of a dragged bin item: its asset id, kind and length in frames. */
export const BIN_TYPE = 'application/x-backlot-clip';

function dropOnLane(e: DragEvent): void {
  const lane = (e.target as HTMLElement).closest<HTMLElement>('.lane');
  const raw = e.dataTransfer?.getData(BIN_TYPE);
  if (!lane || !raw) return;
  e.preventDefault();
  lane.classList.remove('drop');
  const item = JSON.parse(raw) as { asset_id: string; kind: string; length: number; title?: string };
  const wants = item.kind === 'audio' ? 'A' : 'V';
  if (lane.dataset.track![0] !== wants) {
    say(`${item.kind === 'audio' ? 'Sound goes on an A track' : 'Pictures go on a V track'}: drop it on ${wants}1…${wants}9.`, true);
    return;
  }
  addClip(lane.dataset.track!, item.asset_id, frameAtX(e.clientX), item.length, e.shiftKey, item.title);
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
  lanes.addEventListener('pointerdown', startMarquee);
  lanes.addEventListener('dragover', (e) => {
    const lane = (e.target as HTMLElement).closest<HTMLElement>('.lane');
    if (!lane || !e.dataTransfer?.types.includes(BIN_TYPE)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'copy';
    for (const l of lanes.querySelectorAll('.lane.drop')) if (l !== lane) l.classList.remove('drop');
    lane.classList.add('drop');
  });
  lanes.addEventListener('dragleave', (e) => (e.target as HTMLElement).closest('.lane')?.classList.remove('drop'));
  lanes.addEventListener('drop', dropOnLane);
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
