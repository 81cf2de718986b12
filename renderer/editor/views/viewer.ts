import { h } from '../../lib/dom';
import { mediaUrl } from '../../lib/media';
import { say } from '../actions/notice';
import { followPlayhead, setPlayhead } from '../actions/transport';
import { secondsToFrames } from '../frames';
import { clipAt, clipName, frames, isStill, requestRender, seconds, tc, view, type Player } from '../read';
import type { Clip } from '../types';

/**
 * The viewer: the clip under the playhead, still or playing. It is the page's
 * player (state.ts `Player`): today `play` plays the one clip under `from`
 * and stops at its end.
 */

export const video = h('video', { class: 'viewer', preload: 'metadata', playsinline: true, 'aria-label': 'Viewer: the clip under the playhead' });
const viewerImage = h('img', { class: 'viewer', alt: '', hidden: true });
const viewerCaption = h('p', { class: 'muted caption' }, 'Nothing under the playhead.');

export const viewerPanel = h(
  'section',
  { class: 'panel viewer-panel', 'aria-labelledby': 'viewer-title' },
  h('h3', { id: 'viewer-title' }, 'Viewer'),
  video,
  viewerImage,
  viewerCaption,
);

let playing: { track: string; clip: Clip; to: number | null } | null = null;

export const player: Player = {
  play(from, to) {
    const hit = clipAt(from);
    if (!hit) return;
    showUnderPlayhead();
    playing = { ...hit, to: to ?? null };
    video.play().catch((err: unknown) => {
      playing = null;
      say(`Could not play: ${String(err)}`);
    });
  },
  pause() {
    video.pause();
  },
  get playing() {
    return !video.paused;
  },
};

/** The 'viewer' part: what is under the playhead, unless a clip is playing. */
export function drawViewer(): void {
  if (video.paused) showUnderPlayhead();
}

function showUnderPlayhead(): void {
  const playhead = view.playhead;
  const hit = clipAt(playhead);
  if (!hit) {
    video.hidden = false;
    viewerImage.hidden = true;
    video.removeAttribute('src');
    video.load();
    viewerCaption.textContent = `Nothing under the playhead at ${tc(playhead)}.`;
    return;
  }
  const offset = seconds(playhead - frames(hit.clip.start));
  const id = hit.clip.asset_id;
  viewerCaption.textContent = `${hit.track}: ${clipName(hit.clip)}, ${tc(frames(hit.clip.in) + (playhead - frames(hit.clip.start)))} into the source`;
  if (isStill(hit.clip)) {
    video.pause();
    video.hidden = true;
    viewerImage.hidden = false;
    if (viewerImage.dataset.asset !== id) setViewerSource(viewerImage, id);
    viewerImage.alt = clipName(hit.clip);
    return;
  }
  video.hidden = false;
  viewerImage.hidden = true;
  if (video.dataset.asset !== id) return setViewerSource(video, id);
  if (!video.getAttribute('src')) return; // its media URL is on its way
  const at = hit.clip.in + offset;
  if (Math.abs(video.currentTime - at) > 0.5 / (view.rate.num / view.rate.den)) video.currentTime = at;
}

/**
 * The viewer loads a clip's file through a short-lived media URL (lib/media.ts);
 * once it is there the playhead is applied again. A URL that expired while
 * the viewer kept it (a long play, a pause) is replaced on the element's
 * error, at the same time.
 */
function setViewerSource(el: HTMLImageElement | HTMLVideoElement, id: string, fresh = false): void {
  el.dataset.asset = id;
  if (!fresh) el.removeAttribute('src');
  void mediaUrl(id, 'file', fresh).then((url) => {
    if (el.dataset.asset !== id || url === null) return;
    const at = el instanceof HTMLVideoElement ? el.currentTime : 0;
    el.src = url;
    if (fresh && el instanceof HTMLVideoElement) el.currentTime = at;
    else showUnderPlayhead();
  }, () => {});
}

export function wireViewer(): void {
  const viewerRetried = new Map<HTMLElement, number>();
  for (const el of [video, viewerImage]) {
    el.addEventListener('error', () => {
      const id = el.dataset.asset;
      if (!id || !el.getAttribute('src') || Date.now() - (viewerRetried.get(el) ?? 0) < 60_000) return;
      viewerRetried.set(el, Date.now());
      setViewerSource(el, id, true);
    });
  }
  video.addEventListener('play', () => requestRender('toolbar'));
  video.addEventListener('pause', () => {
    playing = null;
    requestRender('toolbar');
  });
  video.addEventListener('timeupdate', () => {
    if (!playing) return;
    const into = video.currentTime - playing.clip.in;
    const f = frames(playing.clip.start) + secondsToFrames(into, view.rate);
    const clipEnd = frames(playing.clip.start) + frames(playing.clip.duration);
    const end = playing.to === null ? clipEnd : Math.min(clipEnd, playing.to);
    if (f >= end) {
      video.pause();
      setPlayhead(end - 1);
      return;
    }
    followPlayhead(f);
  });
  video.addEventListener('ended', () => video.pause());
}
