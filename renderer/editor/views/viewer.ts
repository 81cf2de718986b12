import { h } from '../../lib/dom';
import { mediaUrl } from '../../lib/media';
import { say } from '../actions/notice';
import { followPlayhead, setPlayhead } from '../actions/transport';
import { nominalFps } from '../frames';
import { frameAfter, segmentAt, segments, soundTracks, sourceTime, type Segment } from '../playback';
import { clipName, isStill, requestRender, tc, totalFrames, view, type Player } from '../read';

/**
 * The viewer and the page's player (state.ts `Player`). Playing runs a clock
 * from the playhead (performance.now(), whole frames) across the whole
 * sequence or to an out point, and walks what plays when (playback.ts): the
 * picture is the top video track with a clip at that frame, a gap is black,
 * and each sound track plays its own clips. Each of these channels has two
 * media elements: one plays, the other has the next segment's file loaded
 * and cued at its first frame, and they swap at the cut. The caption follows
 * the playhead. How far from the cut a switch lands is measured on each cut
 * (`data-cut-frames` on the viewer: the clock's lateness plus the new
 * element's first-frame error, in frames) and reported in renderer/README.md.
 */

const screen = h('div', { class: 'screen', 'data-state': 'idle' });
const viewerImage = h('img', { class: 'viewer still', alt: '', hidden: true });
const caption = h('p', { class: 'muted caption', role: 'status', 'aria-live': 'off' }, 'Nothing under the playhead.');
const sounds = h('div', { hidden: true });

export const viewerPanel = h('section', { class: 'panel viewer-panel', 'aria-labelledby': 'viewer-title' }, h('h3', { id: 'viewer-title' }, 'Viewer'), screen, caption, sounds);

/** One channel (the picture, or one sound track): two elements, one playing and one cued at the next cut. */
class Deck {
  readonly els: [HTMLVideoElement | HTMLAudioElement, HTMLVideoElement | HTMLAudioElement];
  private live = 0;
  /** The segment each element holds (cued or playing). */
  private holds: (Segment | null)[] = [null, null];

  constructor(make: () => HTMLVideoElement | HTMLAudioElement, parent: HTMLElement) {
    this.els = [make(), make()];
    for (const el of this.els) {
      el.preload = 'auto';
      parent.append(el);
    }
    this.mark();
  }

  get active(): HTMLVideoElement | HTMLAudioElement {
    return this.els[this.live]!;
  }

  /** Loads the segment's file into the idle element and seeks it to `f` (the segment's first frame when cueing ahead). */
  cue(seg: Segment | null, f: number): void {
    if (!seg?.clip) return;
    const i = this.holds[this.live] === seg ? this.live : 1 - this.live;
    this.load(i, seg, f);
  }

  /** Shows `seg` from frame f: the cued element if it holds it, else the idle one loaded now; the other pauses. Returns the element, or null for a gap. */
  show(seg: Segment, f: number, play: boolean): HTMLVideoElement | HTMLAudioElement | null {
    if (!seg.clip) {
      for (const el of this.els) el.pause();
      this.holds = [null, null];
      this.hide();
      return null;
    }
    const idle = 1 - this.live;
    const current = this.els[this.live]!;
    // The element cued for this segment; else the playing one when it has the same file (or none yet); else the idle one.
    const i = this.holds[idle] === seg ? idle : current.dataset.asset === seg.clip.asset_id || !current.dataset.asset ? this.live : idle;
    if (this.holds[i] !== seg || !sameSource(this.els[i]!, seg)) this.load(i, seg, f);
    else seekTo(this.els[i]!, sourceTime(seg, f, view.rate)!);
    if (i !== this.live) this.els[this.live]!.pause();
    this.live = i;
    this.mark();
    const el = this.els[i]!;
    if (play) void el.play().catch(() => {});
    else el.pause();
    return el;
  }

  pause(): void {
    for (const el of this.els) el.pause();
  }

  private load(i: number, seg: Segment, f: number): void {
    const el = this.els[i]!;
    const clip = seg.clip!;
    this.holds[i] = seg;
    const at = sourceTime(seg, f, view.rate)!;
    if (el.dataset.asset === clip.asset_id && el.getAttribute('src')) {
      seekTo(el, at);
      return;
    }
    el.dataset.asset = clip.asset_id;
    el.removeAttribute('src');
    void mediaUrl(clip.asset_id, 'file').then((url) => {
      if (el.dataset.asset !== clip.asset_id || url === null) return;
      el.src = url;
      el.addEventListener('loadedmetadata', () => seekTo(el, sourceTime(this.holds[i] ?? seg, this.holds[i] === seg ? Math.max(f, clock?.frame ?? f) : f, view.rate) ?? at), { once: true });
      if (!el.paused || (clock && this.active === el)) void el.play().catch(() => {});
    }, () => {});
  }

  private mark(): void {
    this.els.forEach((el, i) => el.toggleAttribute('data-active', i === this.live));
  }

  hide(): void {
    for (const el of this.els) el.removeAttribute('data-active');
  }
}

function sameSource(el: HTMLMediaElement, seg: Segment): boolean {
  return el.dataset.asset === seg.clip?.asset_id && el.getAttribute('src') !== null;
}

/** Seeks unless already within half a frame (a seek costs a decode). */
function seekTo(el: HTMLMediaElement, at: number): void {
  const fps = view.rate.num / view.rate.den;
  if (Math.abs(el.currentTime - at) > 0.5 / fps) el.currentTime = Math.max(0, at);
}

const picture = new Deck(() => h('video', { class: 'viewer', playsinline: true, 'aria-label': 'Viewer: the sequence at the playhead' }), screen);
const soundDecks = new Map<string, Deck>();
function soundDeck(track: string): Deck {
  let d = soundDecks.get(track);
  if (!d) {
    d = new Deck(() => h('audio', { 'data-track': track }), sounds);
    soundDecks.set(track, d);
  }
  return d;
}

interface Clock {
  from: number;
  to: number;
  t0: number;
  frame: number;
  raf: number;
  picture: Segment[];
  sound: Map<string, Segment[]>;
  shown: Map<string, Segment | null>;
}

let clock: Clock | null = null;
/** Frames from each cut to where its new source really began, the latest first (kept for the page's own report). */
const cutErrors: number[] = [];

export const player: Player = {
  play(from, to) {
    const end = Math.min(to ?? totalFrames(), totalFrames());
    if (!view.tl || from >= end) return;
    stop();
    const tracks = view.tl.tracks;
    clock = {
      from,
      to: end,
      t0: performance.now(),
      frame: from,
      raf: 0,
      picture: segments(tracks, view.rate, 'picture', from, end),
      sound: new Map(soundTracks(tracks).map((t) => [t, segments(tracks, view.rate, t, from, end)])),
      shown: new Map(),
    };
    screen.dataset.state = 'playing';
    show(from, true);
    clock.t0 = performance.now();
    clock.raf = requestAnimationFrame(tick);
    requestRender('toolbar');
  },
  pause() {
    stop();
  },
  get playing() {
    return clock !== null;
  },
};

function stop(): void {
  if (!clock) return;
  cancelAnimationFrame(clock.raf);
  clock = null;
  picture.pause();
  for (const d of soundDecks.values()) d.pause();
  screen.dataset.state = 'paused';
  requestRender('toolbar');
}

function tick(now: number): void {
  const c = clock;
  if (!c) return;
  const f = frameAfter(c.from, now - c.t0, view.rate);
  if (f >= c.to) {
    stop();
    setPlayhead(c.to - 1, false);
    return;
  }
  if (f !== c.frame) {
    c.frame = f;
    followPlayhead(f);
    show(f, true);
  }
  c.raf = requestAnimationFrame(tick);
}

/** Puts every channel on frame f; at a cut the cued element takes over and the next segment is cued. */
function show(f: number, play: boolean): void {
  const c = clock!;
  const channels: [string, Deck, Segment[]][] = [['picture', picture, c.picture], ...[...c.sound].map(([t, list]) => [t, soundDeck(t), list] as [string, Deck, Segment[]])];
  for (const [name, deck, list] of channels) {
    const seg = segmentAt(list, f);
    if (!seg) continue;
    if (name === 'picture') showStill(seg);
    if (c.shown.get(name) === seg) {
      keepInStep(deck, seg, f);
      continue;
    }
    const first = !c.shown.has(name);
    c.shown.set(name, seg);
    const still = name === 'picture' && !viewerImage.hidden;
    const el = deck.show(still ? { ...seg, clip: null } : seg, f, play);
    if (el && !first) measureCut(el, seg, f);
    deck.cue(list[list.indexOf(seg) + 1] ?? null, list[list.indexOf(seg) + 1]?.from ?? f);
  }
  drawCaption(f, segmentAt(c.picture, f));
}

/** A playing element that drifted more than three frames from the clock is put back (a stall, a slow start). */
function keepInStep(deck: Deck, seg: Segment, f: number): void {
  const el = deck.active;
  const at = sourceTime(seg, f, view.rate);
  if (at === null || el.dataset.asset !== seg.clip?.asset_id || !el.hasAttribute('data-active') || el.readyState < 2 || el.seeking) return;
  if (Math.abs(el.currentTime - at) > 3 / (view.rate.num / view.rate.den)) el.currentTime = at;
  if (el.paused) void el.play().catch(() => {});
}

/**
 * How close to the cut the new source began: the clock's lateness (frames
 * between the cut and the frame at which the switch ran) plus the error of
 * the first frame the element then presented against the clock.
 */
function measureCut(el: HTMLMediaElement, seg: Segment, switchedAt: number): void {
  const late = switchedAt - seg.from;
  const fps = view.rate.num / view.rate.den;
  const record = (errorFrames: number) => {
    cutErrors.unshift(Math.round((late + errorFrames) * 10) / 10);
    cutErrors.length = Math.min(cutErrors.length, 50);
    viewerPanel.dataset.cutFrames = cutErrors.join(' ');
  };
  if (el instanceof HTMLVideoElement && 'requestVideoFrameCallback' in el) {
    el.requestVideoFrameCallback((_now, meta) => {
      const expected = sourceTime(seg, clock ? clock.frame : switchedAt, view.rate) ?? meta.mediaTime;
      record(Math.abs(expected - meta.mediaTime) * fps);
    });
  } else record(0);
}

/** A still picture's clip shows in the image element; the video elements pause behind it. */
function showStill(seg: Segment): boolean {
  const clip = seg.clip ? view.tl?.tracks[seg.clip.track]?.[seg.clip.index] : null;
  const still = clip !== null && clip !== undefined && isStill(clip);
  viewerImage.hidden = !still;
  if (!still) return false;
  if (viewerImage.dataset.asset !== clip.asset_id) {
    viewerImage.dataset.asset = clip.asset_id;
    void mediaUrl(clip.asset_id, 'file').then((url) => url && viewerImage.dataset.asset === clip.asset_id && (viewerImage.src = url));
  }
  viewerImage.alt = clipName(clip);
  return true;
}

function drawCaption(f: number, seg: Segment | null): void {
  const clip = seg?.clip ? view.tl?.tracks[seg.clip.track]?.[seg.clip.index] : null;
  screen.dataset.gap = clip ? 'false' : 'true';
  if (!seg?.clip || !clip) {
    caption.textContent = `${tc(f)} · black (no video clip here)`;
    caption.dataset.clip = '';
    return;
  }
  caption.dataset.clip = `${seg.clip.track}:${seg.clip.index}`;
  caption.textContent = `${tc(f)} · ${seg.clip.track}: ${clipName(clip)}, ${tc(Math.round(sourceTime(seg, f, view.rate)! * nominalFps(view.rate)))} into the source`;
}

/** The 'viewer' part while not playing: the picture at the playhead, still. */
export function drawViewer(): void {
  if (clock || !view.tl) return;
  const f = view.playhead;
  const end = Math.max(totalFrames(), f + 1);
  const seg = segmentAt(segments(view.tl.tracks, view.rate, 'picture', f, end), f);
  if (seg && showStill(seg)) picture.show({ ...seg, clip: null }, f, false);
  else if (seg) picture.show(seg, f, false);
  else picture.hide();
  drawCaption(f, seg);
}

export function wireViewer(): void {
  screen.append(viewerImage);
  // An element whose media URL expired while it was kept (a long pause) gets a fresh one, at the same time.
  const retried = new Map<HTMLMediaElement, number>();
  for (const el of [...picture.els]) {
    el.addEventListener('error', () => {
      const id = el.dataset.asset;
      if (!id || !el.getAttribute('src') || Date.now() - (retried.get(el) ?? 0) < 60_000) return;
      retried.set(el, Date.now());
      const at = el.currentTime;
      void mediaUrl(id, 'file', true).then((url) => {
        if (!url || el.dataset.asset !== id) return;
        el.src = url;
        el.addEventListener('loadedmetadata', () => (el.currentTime = at), { once: true });
      });
    });
  }
  document.addEventListener('visibilitychange', () => {
    if (document.hidden && clock) {
      stop();
      say('Paused: the page was hidden.');
    }
  });
}
