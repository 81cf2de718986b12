import { ApiFailure, call, query, type Page } from '../lib/api';
import { authHeaders, onCredentialChange } from '../lib/credential';
import { mediaUrl, openMedia, showMedia } from '../lib/media';
import { EventStream } from '../lib/sse';
import { h, replace } from '../lib/dom';
import { when } from '../lib/format';
import type { Job } from '../lib/job';
import {
  frameRate,
  framesToSeconds,
  moveClip,
  parseTime,
  secondsToFrames,
  tickStep,
  timecode,
  trimClip,
  ZOOMS,
  type Rate,
  type SnapTarget,
} from './frames';

/**
 * The editor surface (renderer/README.md "Editor surface") at /editor/: stays connected to
 * /editor/events and shows the sequence the last `:open` named, then edits it
 * through the launcher's mirror of the studio's routes
 * (/api/v1/launcher/timeline/{id}, acting as the owning studio): move, trim
 * and delete clips in whole frames (frames.ts), saved by PATCH with If-Match
 * (a 409 reloads and says so), undo through revisions (:revert), play the clip
 * under the playhead, the export plan, and exports with live progress and
 * Cancel (from /api/v1/launcher/events).
 */

interface Clip {
  asset_id: string;
  start: number;
  in: number;
  duration: number;
  transition?: { kind: 'crossfade'; duration: number };
}

interface Timeline {
  id: string;
  studio_id: string;
  name: string;
  revision: number;
  duration: number;
  target: { fps: number; width: number; height: number; sample_rate: number };
  tracks: Record<string, Clip[]>;
  updated_at: string;
}

interface Revision {
  revision: number;
  name: string;
  tracks: Record<string, Clip[]>;
  created_at: string;
}


interface PlanClip {
  track: string;
  index: number;
  asset_id: string;
  path: 'copy' | 'conform';
  reason: string | null;
}

interface Plan {
  preset: string;
  path: 'copy' | 'conform';
  clips: PlanClip[];
}

interface AssetInfo {
  kind: 'image' | 'video' | 'audio' | 'unknown';
  title: string | null;
}

type Selection = { track: string; index: number } | null;
type Preset = 'auto' | 'copy' | 'h264';

const FINISHED = new Set(['succeeded', 'failed', 'cancelled']);
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
const PRESETS: { value: Preset; label: string }[] = [
  { value: 'auto', label: 'Auto: copy when every clip can be copied, else encode' },
  { value: 'copy', label: 'Copy: lossless, refused unless every clip can be copied' },
  { value: 'h264', label: 'H.264: encode every clip' },
];

// ---- state -----------------------------------------------------------------

let tl: Timeline | null = null;
let rate: Rate = frameRate(30);
/** The revision whose content the current document holds (after an undo, the one reverted to). */
let contentRevision = 0;
let zoom = 4; // index into ZOOMS
let playhead = 0; // frames
let selection: Selection = null;
let snapping = true;
let saving = false;
let revisions: Revision[] = [];
const exportJobs = new Map<string, Job>();
const cancelling = new Set<string>();
const assets = new Map<string, AssetInfo>();
const assetLoads = new Map<string, Promise<void>>();
let preset: Preset = 'auto';
let planSeq = 0;

const base = () => `/launcher/timeline/${tl!.id}`;
const px = () => ZOOMS[zoom]!;
const frames = (seconds: number) => secondsToFrames(seconds, rate);
const seconds = (f: number) => framesToSeconds(f, rate);
const tc = (f: number) => timecode(f, rate);
const totalFrames = () => (tl ? frames(tl.duration) : 0);

// ---- the page's parts ------------------------------------------------------

const root = document.getElementById('app')!;
const connection = h('span', { class: 'connection muted', role: 'status' }, 'Connecting…');
const statusLine = h('p', { id: 'editor-status', class: 'status-line', role: 'status', 'aria-live': 'polite' });
const problem = h('div', { class: 'problem', role: 'alert', hidden: true });
const waiting = h('p', { class: 'waiting' }, 'Waiting for a studio to open a sequence here. A studio shows one with POST /timeline/{id}:open while this page is connected.');
const surface = h('main', { class: 'surface', hidden: true, 'aria-labelledby': 'seq-title' });

/** The visible status line (also read out); `notice` marks what the person must not miss (a refused or reloaded change). */
function say(text: string, notice = false): void {
  statusLine.textContent = text;
  statusLine.classList.toggle('notice', notice);
}

function showProblem(text: string | null, details: string[] = []): void {
  problem.hidden = text === null;
  replace(problem, text, details.length ? h('ul', {}, ...details.map((d) => h('li', {}, d))) : null);
}

function failureText(err: unknown): string {
  return err instanceof ApiFailure ? `${err.message} (${err.code})` : String(err);
}

/** The reasons of a 422 invalid_timeline, as "V1 clip 2: why". */
function clipReasons(err: unknown): string[] {
  if (!(err instanceof ApiFailure)) return [];
  const list = err.details.clips;
  if (!Array.isArray(list)) return [];
  return list.map((p: { track: string | null; index: number; reason: string }) => `${p.track ?? 'clip'} ${p.track ? `clip ${p.index + 1}` : p.index + 1}: ${p.reason}`);
}

// header of the sequence
const title = h('h2', { id: 'seq-title' });
const meta = h('p', { class: 'muted meta' });

// toolbar
const undoButton = h('button', { type: 'button', 'aria-keyshortcuts': 'Control+Z Meta+Z' }, 'Undo');
const playButton = h('button', { type: 'button', class: 'primary', 'aria-keyshortcuts': 'Space' }, 'Play clip at playhead');
const playheadField = h('input', { type: 'text', id: 'playhead-field', class: 'time', inputmode: 'numeric', autocomplete: 'off', spellcheck: 'false' });
const zoomOut = h('button', { type: 'button', 'aria-label': 'Zoom out', 'aria-keyshortcuts': '-' }, '−');
const zoomIn = h('button', { type: 'button', 'aria-label': 'Zoom in', 'aria-keyshortcuts': '+' }, '+');
const zoomFit = h('button', { type: 'button' }, 'Fit');
const zoomLabel = h('span', { class: 'muted zoom-label', 'aria-live': 'polite' });
const snapBox = h('input', { type: 'checkbox', id: 'snap', checked: true, 'aria-keyshortcuts': 'N' });

// timeline
const ruler = h('div', {
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
const scroller = h('div', { class: 'scroller', role: 'group', 'aria-label': 'Timeline: tracks and clips' }, canvas);

// viewer and inspector
const video = h('video', { class: 'viewer', preload: 'metadata', playsinline: true, 'aria-label': 'Viewer: the clip under the playhead' });
const viewerImage = h('img', { class: 'viewer', alt: '', hidden: true });
const viewerCaption = h('p', { class: 'muted caption' }, 'Nothing under the playhead.');
const inspector = h('section', { class: 'panel inspector', 'aria-labelledby': 'inspector-title' });

// revisions and export
const revisionList = h('ol', { class: 'revisions', 'aria-label': 'Earlier revisions, newest first' });
const presetSelect = h('select', { id: 'preset' }, ...PRESETS.map((p) => h('option', { value: p.value }, p.label)));
const planView = h('div', { class: 'plan', 'aria-live': 'polite' });
const exportButton = h('button', { type: 'button', class: 'primary' }, 'Export');
const exportList = h('ul', { class: 'exports', 'aria-label': 'Exports of this sequence, newest first' });

// ---- layout ----------------------------------------------------------------

function buildSurface(): void {
  replace(
    surface,
    h('div', { class: 'seq-head' }, title, meta),
    h(
      'div',
      { class: 'toolbar', role: 'toolbar', 'aria-label': 'Editing' },
      undoButton,
      playButton,
      h('label', { for: 'playhead-field', class: 'inline' }, 'Playhead'),
      playheadField,
      h('span', { class: 'group', role: 'group', 'aria-label': 'Zoom' }, zoomOut, zoomLabel, zoomIn, zoomFit),
      h('label', { class: 'inline check' }, snapBox, 'Snap to edges'),
    ),
    h('p', { class: 'muted keys' }, 'Keys: ←/→ move the playhead or the selected clip by a frame (Shift: 10), [ and ] trim the selected clip to the playhead, Delete removes it, Space plays, Ctrl/⌘+wheel or +/− zoom, N toggles snapping, Ctrl/⌘+Z undoes.'),
    scroller,
    h(
      'div',
      { class: 'work' },
      h('section', { class: 'panel viewer-panel', 'aria-labelledby': 'viewer-title' }, h('h3', { id: 'viewer-title' }, 'Viewer'), video, viewerImage, viewerCaption),
      inspector,
    ),
    h(
      'div',
      { class: 'work' },
      h(
        'section',
        { class: 'panel', 'aria-labelledby': 'export-title' },
        h('h3', { id: 'export-title' }, 'Export'),
        h('div', { class: 'row' }, h('label', { for: 'preset' }, 'Preset'), presetSelect, exportButton),
        planView,
        h('h4', {}, 'Exports'),
        exportList,
      ),
      h('section', { class: 'panel', 'aria-labelledby': 'revisions-title' }, h('h3', { id: 'revisions-title' }, 'Revisions'), revisionList),
    ),
  );
}

// ---- drawing ---------------------------------------------------------------

/** Frames drawn: the sequence plus room to drag past its end. */
function canvasFrames(): number {
  return canvasFramesAt(zoom);
}

function trackNames(): string[] {
  if (!tl) return [];
  const names = Object.keys(tl.tracks);
  if (names.length === 0) names.push('V1');
  return names.sort((a, b) => (a[0] === b[0] ? Number(a.slice(1)) - Number(b.slice(1)) : a[0] === 'V' ? -1 : 1));
}

function clipName(c: Clip): string {
  const info = assets.get(c.asset_id);
  return info?.title || `${info && info.kind !== 'unknown' ? info.kind : 'asset'} ${c.asset_id.slice(-6)}`;
}

function clipLabel(track: string, c: Clip): string {
  const s = frames(c.start);
  return `${track}, ${clipName(c)}, ${tc(s)} to ${tc(s + frames(c.duration))}`;
}

function thumbFor(c: Clip, videoBudget: { left: number }): HTMLElement {
  const info = assets.get(c.asset_id);
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
    const ready = posters.get(key);
    if (typeof ready === 'string') img.src = ready;
    else if (ready === undefined) requestPoster(c.asset_id, c.in, key);
    return img;
  }
  return h('span', { class: `thumb thumb-${kind}`, 'aria-hidden': 'true' }, kind === 'audio' ? '♪' : kind === 'video' ? '▶' : '·');
}

/**
 * Poster frames of video clips: one frame at the clip's in point, grabbed by a
 * hidden <video> (byte ranges: only the index and that frame are read), drawn
 * to a small canvas and kept as a blob: URL per asset and in point, one at a
 * time, so a redraw never loads a video again.
 */
const posters = new Map<string, string | 'pending' | 'failed'>();
const posterQueue: { id: string; at: number; key: string }[] = [];
let posterBusy = false;

function requestPoster(id: string, at: number, key: string): void {
  posters.set(key, 'pending');
  posterQueue.push({ id, at, key });
  void nextPoster();
}

async function nextPoster(): Promise<void> {
  if (posterBusy) return;
  const job = posterQueue.shift();
  if (!job) return;
  posterBusy = true;
  try {
    const url = await grabFrame(job.id, job.at);
    posters.set(job.key, url);
    for (const img of lanes.querySelectorAll<HTMLImageElement>('img[data-poster]')) if (img.dataset.poster === job.key) img.src = url;
  } catch {
    posters.set(job.key, 'failed');
  } finally {
    posterBusy = false;
    void nextPoster();
  }
}

function grabFrame(id: string, at: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const v = document.createElement('video');
    v.muted = true;
    v.preload = 'auto';
    const done = (err?: unknown) => {
      clearTimeout(timer);
      v.removeAttribute('src');
      v.load();
      if (err) reject(err);
    };
    const timer = setTimeout(() => done(new Error('poster timed out')), 15_000);
    v.addEventListener('error', () => done(new Error('poster failed')), { once: true });
    v.addEventListener('loadedmetadata', () => {
      v.currentTime = Math.min(at + 0.001, Math.max(0, v.duration - 0.05));
    }, { once: true });
    v.addEventListener('seeked', () => {
      const canvas = document.createElement('canvas');
      canvas.height = 80;
      canvas.width = Math.max(1, Math.round((80 * (v.videoWidth || 16)) / (v.videoHeight || 9)));
      canvas.getContext('2d')!.drawImage(v, 0, 0, canvas.width, canvas.height);
      canvas.toBlob((blob) => {
        if (!blob) return done(new Error('no poster'));
        resolve(URL.createObjectURL(blob));
        done();
      }, 'image/webp');
    }, { once: true });
    mediaUrl(id, 'file').then((url) => (url ? (v.src = url) : done(new Error('no media URL'))), done);
  });
}

function place(el: HTMLElement, startFrame: number, lengthFrames: number): void {
  el.style.left = `${startFrame * px()}px`;
  el.style.width = `${Math.max(2, lengthFrames * px())}px`;
}

function drawTimeline(): void {
  if (!tl) return;
  canvas.style.width = `${LABEL_PX + canvasFrames() * px()}px`;
  canvas.dataset.pxPerFrame = String(px());
  const budget = { left: MAX_VIDEO_THUMBS };
  const rows = trackNames().map((name) => {
    const lane = h('div', { class: 'lane', 'data-track': name });
    (tl!.tracks[name] ?? []).forEach((c, index) => {
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
      el.addEventListener('keydown', (e) => clipKey(e, name, index));
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
  zoomLabel.textContent = zoomText();
  zoomIn.disabled = zoom === 0 || canvasFramesAt(zoom - 1) * ZOOMS[zoom - 1]! > MAX_WIDTH_PX;
  zoomOut.disabled = zoom === ZOOMS.length - 1;
}

function canvasFramesAt(z: number): number {
  const visible = Math.max(1, ((scroller.clientWidth || 800) - LABEL_PX) / ZOOMS[z]!);
  return Math.max(totalFrames() + Math.ceil(visible * 0.25), Math.ceil(visible));
}

function zoomText(): string {
  const p = px();
  return p >= 1 ? `${p} px per frame` : `1 px = ${Math.round(1 / p)} frames`;
}

/** Only the ticks in view (and a screen either side) are in the page. */
function drawRuler(): void {
  if (!tl) return;
  const step = tickStep(px(), rate);
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
  ruler.setAttribute('aria-valuemax', String(Math.max(totalFrames(), playhead)));
}

function drawPlayhead(): void {
  playheadLine.style.left = `${playhead * px()}px`;
  ruler.setAttribute('aria-valuenow', String(playhead));
  ruler.setAttribute('aria-valuetext', tc(playhead));
  if (document.activeElement !== playheadField) playheadField.value = tc(playhead);
}

function setPlayhead(f: number, reveal = true): void {
  playhead = Math.max(0, Math.round(f));
  drawPlayhead();
  if (reveal) {
    const x = LABEL_PX + playhead * px();
    if (x < scroller.scrollLeft + LABEL_PX + 20 || x > scroller.scrollLeft + scroller.clientWidth - 20) scroller.scrollLeft = Math.max(0, x - scroller.clientWidth / 3);
  }
  if (video.paused) showUnderPlayhead();
}

function drawHead(): void {
  if (!tl) return;
  title.textContent = tl.name;
  meta.textContent = `${tl.studio_id} · revision ${tl.revision} · ${tc(totalFrames())} · ${tl.target.width}×${tl.target.height} at ${tl.target.fps} fps`;
}

// ---- selection and the inspector ------------------------------------------

function selectedClip(): Clip | null {
  if (!tl || !selection) return null;
  return tl.tracks[selection.track]?.[selection.index] ?? null;
}

function select(s: Selection): void {
  selection = s;
  for (const el of lanes.querySelectorAll<HTMLElement>('.clip')) {
    const on = s !== null && el.dataset.track === s.track && Number(el.dataset.index) === s.index;
    el.classList.toggle('selected', on);
    el.setAttribute('aria-pressed', on ? 'true' : 'false');
  }
  drawInspector();
}

function timeField(id: string, label: string, value: number, hint: string): HTMLElement {
  return h(
    'div',
    { class: 'field' },
    h('label', { for: id }, label),
    h('input', { type: 'text', id, class: 'time', value: tc(value), autocomplete: 'off', spellcheck: 'false', 'aria-describedby': `${id}-hint` }),
    h('span', { id: `${id}-hint`, class: 'muted hint' }, hint),
  );
}

function drawInspector(): void {
  const c = selectedClip();
  if (!c || !selection) {
    replace(inspector, h('h3', { id: 'inspector-title' }, 'Clip'), h('p', { class: 'muted' }, 'Select a clip (click it, or Tab to it) to move, trim or delete it by the numbers.'));
    return;
  }
  const { track, index } = selection;
  const form = h(
    'form',
    { class: 'clip-form' },
    h('p', {}, h('strong', {}, clipName(c)), h('span', { class: 'muted' }, ` on ${track}, clip ${index + 1}`)),
    h(
      'div',
      { class: 'fields' },
      timeField('clip-start', 'Start', frames(c.start), 'on the timeline'),
      timeField('clip-in', 'In', frames(c.in), 'into the source'),
      timeField('clip-duration', 'Duration', frames(c.duration), 'on the timeline'),
    ),
    h('p', { class: 'muted hint' }, 'HH:MM:SS:FF, or a number of frames.'),
  );
  const apply = h('button', { type: 'submit', class: 'primary' }, 'Apply');
  const earlier = h('button', { type: 'button', 'aria-label': 'Move one frame earlier' }, '◀ 1 frame');
  const later = h('button', { type: 'button', 'aria-label': 'Move one frame later' }, '1 frame ▶');
  const trimIn = h('button', { type: 'button', 'aria-keyshortcuts': '[' }, 'Trim start to playhead');
  const trimOut = h('button', { type: 'button', 'aria-keyshortcuts': ']' }, 'Trim end to playhead');
  const remove = h('button', { type: 'button', class: 'danger', 'aria-keyshortcuts': 'Delete' }, 'Delete clip');
  earlier.addEventListener('click', () => nudge(track, index, -1));
  later.addEventListener('click', () => nudge(track, index, 1));
  trimIn.addEventListener('click', () => trimToPlayhead(track, index, 'start'));
  trimOut.addEventListener('click', () => trimToPlayhead(track, index, 'end'));
  remove.addEventListener('click', () => removeClip(track, index));
  form.append(h('div', { class: 'actions' }, apply, earlier, later, trimIn, trimOut, remove));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const read = (id: string) => parseTime((form.querySelector<HTMLInputElement>(`#${id}`)!).value, rate);
    const start = read('clip-start');
    const inF = read('clip-in');
    const dur = read('clip-duration');
    if (start === null || inF === null || dur === null || dur < 1) {
      say('Not saved: each field needs a time as HH:MM:SS:FF or a number of frames, and the duration at least one frame.');
      return;
    }
    const changed: Clip = { ...c };
    if (start !== frames(c.start)) changed.start = seconds(start);
    if (inF !== frames(c.in)) changed.in = seconds(inF);
    if (dur !== frames(c.duration)) changed.duration = seconds(dur);
    if (changed.start !== c.start) delete changed.transition;
    void saveClip(track, index, changed, `Set ${clipName(c)} to start ${tc(start)}, in ${tc(inF)}, duration ${tc(dur)}`);
  });
  replace(inspector, h('h3', { id: 'inspector-title' }, 'Clip'), form);
}

// ---- edits -----------------------------------------------------------------

function withClip(track: string, index: number, clip: Clip | null): Record<string, Clip[]> {
  const tracks: Record<string, Clip[]> = {};
  for (const [name, clips] of Object.entries(tl!.tracks)) tracks[name] = clips.map((c) => ({ ...c }));
  const list = tracks[track] ?? [];
  if (clip) list[index] = clip;
  else list.splice(index, 1);
  tracks[track] = list;
  return tracks;
}

async function saveClip(track: string, index: number, clip: Clip | null, what: string): Promise<void> {
  const wanted = clip ? { start: frames(clip.start), asset: clip.asset_id } : null;
  const ok = await save(withClip(track, index, clip), what);
  if (ok && wanted && tl) {
    // The service sorts clips by start: follow the edited one.
    const at = (tl.tracks[track] ?? []).findIndex((c) => frames(c.start) === wanted.start && c.asset_id === wanted.asset);
    select(at >= 0 ? { track, index: at } : null);
    if (at >= 0) lanes.querySelector<HTMLElement>(`.clip[data-track="${track}"][data-index="${at}"]`)?.focus();
  } else if (ok && !clip) {
    select(null);
  }
}

/** PATCH the tracks with If-Match; 409 reloads and says so; 422 says why. True when saved. */
async function save(tracks: Record<string, Clip[]>, what: string): Promise<boolean> {
  if (!tl || saving) return false;
  saving = true;
  showProblem(null);
  say(`Saving: ${what}…`);
  try {
    const next = await call<Timeline>(base(), { method: 'PATCH', body: { tracks }, ifMatch: `"${tl.revision}"`, contentType: 'application/merge-patch+json' });
    adopt(next, next.revision);
    say(`Saved revision ${next.revision}: ${what}.`);
    void refreshAfterWrite();
    return true;
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 409) {
      await reload(`This sequence was changed elsewhere while you edited, so your change (${what}) was not saved.`);
    } else {
      drawTimeline();
      say(`Not saved: ${what}.`, true);
      showProblem(failureText(err), clipReasons(err));
    }
    return false;
  } finally {
    saving = false;
  }
}

function nudge(track: string, index: number, by: number): void {
  const c = tl?.tracks[track]?.[index];
  if (!c) return;
  const start = Math.max(0, frames(c.start) + by);
  if (start === frames(c.start)) return;
  const moved: Clip = { ...c, start: seconds(start) };
  delete moved.transition;
  void saveClip(track, index, moved, `Moved ${clipName(c)} to ${tc(start)}`);
}

function trimToPlayhead(track: string, index: number, edge: 'start' | 'end'): void {
  const c = tl?.tracks[track]?.[index];
  if (!c) return;
  const start = frames(c.start);
  const length = frames(c.duration);
  const r = trimClip({ start, in: frames(c.in), length, edge, deltaPx: (playhead - (edge === 'start' ? start : start + length)), pxPerFrame: 1, targets: [], thresholdPx: 0, snapping: false, still: isStill(c) });
  applyTrim(track, index, c, r);
}

function applyTrim(track: string, index: number, c: Clip, r: { start: number; in: number; length: number }): void {
  if (r.start === frames(c.start) && r.length === frames(c.duration)) {
    drawTimeline();
    return;
  }
  const trimmed: Clip = { ...c, start: seconds(r.start), duration: seconds(r.length) };
  if (r.in !== frames(c.in)) trimmed.in = seconds(r.in);
  if (r.start !== frames(c.start)) delete trimmed.transition;
  void saveClip(track, index, trimmed, `Trimmed ${clipName(c)} to ${tc(r.start)}–${tc(r.start + r.length)}`);
}

function removeClip(track: string, index: number): void {
  const c = tl?.tracks[track]?.[index];
  if (!c) return;
  void saveClip(track, index, null, `Deleted ${clipName(c)} from ${track}`);
}

function isStill(c: Clip): boolean {
  return assets.get(c.asset_id)?.kind === 'image';
}

async function undo(): Promise<void> {
  if (!tl || saving) return;
  const target = revisions.find((r) => r.revision === contentRevision - 1);
  if (!target) {
    say('Nothing to undo: no earlier revision is kept.');
    return;
  }
  await revert(target.revision, `Undo: back to revision ${target.revision}`);
}

async function revert(to: number, what: string): Promise<void> {
  if (!tl || saving) return;
  saving = true;
  showProblem(null);
  say(`${what}…`);
  try {
    const next = await call<Timeline>(`${base()}:revert`, { method: 'POST', body: { revision: to }, ifMatch: `"${tl.revision}"` });
    adopt(next, to);
    select(null);
    say(`${what}: saved as revision ${next.revision}.`);
    void refreshAfterWrite();
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 409) await reload('This sequence was changed elsewhere, so the undo was not made.');
    else {
      say(`Not reverted: ${what}.`);
      showProblem(failureText(err), clipReasons(err));
    }
  } finally {
    saving = false;
  }
}

/** A document from the service becomes the page's. */
function adopt(next: Timeline, content: number): void {
  const sameSequence = tl?.id === next.id;
  tl = next;
  rate = frameRate(next.target.fps);
  contentRevision = content;
  if (!sameSequence) selection = null;
  else if (selection && !tl.tracks[selection.track]?.[selection.index]) selection = null;
  drawHead();
  drawTimeline();
  drawInspector();
  void loadAssets().then(() => {
    drawTimeline();
    drawInspector();
    if (!playing) showUnderPlayhead(); // the viewer's caption names the clip by its title too
  });
}

async function reload(why: string): Promise<void> {
  if (!tl) return;
  try {
    const fresh = await call<Timeline>(base());
    adopt(fresh, fresh.revision);
    say(`${why} Reloaded revision ${fresh.revision}.`, true);
    void refreshAfterWrite();
  } catch (err) {
    say(why, true);
    showProblem(`Could not reload the sequence: ${failureText(err)}`);
  }
}

async function refreshAfterWrite(): Promise<void> {
  await Promise.all([loadRevisions(), loadPlan()]);
}

// ---- pointer gestures --------------------------------------------------------

function snapTargets(exceptTrack: string, exceptIndex: number): SnapTarget[] {
  const out: SnapTarget[] = [{ frame: 0, kind: 'zero' }, { frame: playhead, kind: 'playhead' }];
  for (const [name, clips] of Object.entries(tl!.tracks)) {
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

function startGesture(e: PointerEvent, el: HTMLElement, track: string, index: number): void {
  if (!tl || e.button !== 0 || saving) return;
  const c = tl.tracks[track]?.[index];
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
    const snap = snapping && !ev.altKey;
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
    else if (result.start !== start) {
      const moved: Clip = { ...c, start: seconds(result.start) };
      delete moved.transition;
      void saveClip(track, index, moved, `Moved ${clipName(c)} to ${tc(result.start)}`);
    } else drawTimeline();
  };
  el.addEventListener('pointermove', move);
  el.addEventListener('pointerup', end);
  el.addEventListener('pointercancel', end);
}

// ---- keys --------------------------------------------------------------------

function clipKey(e: KeyboardEvent, track: string, index: number): void {
  const step = e.shiftKey ? 10 : 1;
  if (e.key === 'ArrowLeft' || e.key === 'ArrowRight') {
    e.preventDefault();
    select({ track, index });
    nudge(track, index, e.key === 'ArrowLeft' ? -step : step);
  } else if (e.key === 'Delete' || e.key === 'Backspace') {
    e.preventDefault();
    removeClip(track, index);
  } else if (e.key === '[' || e.key === ']') {
    e.preventDefault();
    select({ track, index });
    trimToPlayhead(track, index, e.key === '[' ? 'start' : 'end');
  }
}

function typing(target: EventTarget | null): boolean {
  return target instanceof HTMLInputElement || target instanceof HTMLSelectElement || target instanceof HTMLTextAreaElement;
}

function pageKey(e: KeyboardEvent): void {
  if (!tl || typing(e.target)) return;
  if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'z') {
    e.preventDefault();
    void undo();
  } else if (e.ctrlKey || e.metaKey || e.altKey) {
    return;
  } else if (e.key === '+' || e.key === '=') {
    setZoom(zoom - 1);
  } else if (e.key === '-') {
    setZoom(zoom + 1);
  } else if (e.key === 'n' || e.key === 'N') {
    snapBox.checked = !snapBox.checked;
    snapping = snapBox.checked;
    say(snapping ? 'Snapping on.' : 'Snapping off.');
  } else if (e.key === ' ' && !(e.target instanceof HTMLButtonElement)) {
    e.preventDefault();
    togglePlay();
  }
}

function rulerKey(e: KeyboardEvent): void {
  const step = e.shiftKey ? 10 : 1;
  const moves: Record<string, () => number> = {
    ArrowLeft: () => playhead - step,
    ArrowRight: () => playhead + step,
    ArrowDown: () => playhead - step,
    ArrowUp: () => playhead + step,
    PageDown: () => playhead - 10 * rate.num / rate.den,
    PageUp: () => playhead + 10 * rate.num / rate.den,
    Home: () => 0,
    End: () => totalFrames(),
  };
  const to = moves[e.key];
  if (!to) return;
  e.preventDefault();
  setPlayhead(to());
}

// ---- zoom --------------------------------------------------------------------

function setZoom(next: number, anchorClientX?: number): void {
  const z = Math.min(ZOOMS.length - 1, Math.max(0, next));
  if (z === zoom || !tl) return;
  if (canvasFramesAt(z) * ZOOMS[z]! > MAX_WIDTH_PX) return;
  // Keep the frame under the pointer (else the playhead, if in view, else the left edge) where it is.
  const rect = scroller.getBoundingClientRect();
  const playheadX = LABEL_PX + playhead * px() - scroller.scrollLeft;
  const anchorX = anchorClientX !== undefined ? anchorClientX - rect.left : playheadX >= LABEL_PX && playheadX <= scroller.clientWidth ? playheadX : LABEL_PX;
  const frameAt = Math.max(0, (scroller.scrollLeft + anchorX - LABEL_PX) / px());
  zoom = z;
  drawTimeline();
  scroller.scrollLeft = Math.max(0, LABEL_PX + frameAt * px() - anchorX);
  drawRuler();
}

function fitZoom(): void {
  const width = Math.max(200, scroller.clientWidth - LABEL_PX - 24);
  const total = Math.max(1, totalFrames());
  let z = ZOOMS.findIndex((p) => total * p <= width);
  if (z < 0) z = ZOOMS.length - 1;
  zoom = z;
  drawTimeline();
  scroller.scrollLeft = 0;
  drawRuler();
}

// ---- playing -----------------------------------------------------------------

/** The clip under the playhead: the top video track first (V9 … V1), then sound (A1 … A9). */
function clipAt(f: number): { track: string; clip: Clip } | null {
  if (!tl) return null;
  const names = trackNames();
  const order = [...names.filter((n) => n[0] === 'V').reverse(), ...names.filter((n) => n[0] === 'A')];
  for (const track of order) {
    for (const clip of tl.tracks[track] ?? []) {
      const s = frames(clip.start);
      if (f >= s && f < s + frames(clip.duration)) return { track, clip };
    }
  }
  return null;
}

let playing: { track: string; clip: Clip } | null = null;

function showUnderPlayhead(): void {
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
  if (Math.abs(video.currentTime - at) > 0.5 / (rate.num / rate.den)) video.currentTime = at;
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
const viewerRetried = new Map<HTMLElement, number>();
for (const el of [video, viewerImage]) {
  el.addEventListener('error', () => {
    const id = el.dataset.asset;
    if (!id || !el.getAttribute('src') || Date.now() - (viewerRetried.get(el) ?? 0) < 60_000) return;
    viewerRetried.set(el, Date.now());
    setViewerSource(el, id, true);
  });
}

function togglePlay(): void {
  if (!video.paused) {
    video.pause();
    return;
  }
  const hit = clipAt(playhead);
  if (!hit || isStill(hit.clip)) {
    say(hit ? 'A still picture: nothing to play.' : `No clip under the playhead at ${tc(playhead)}.`);
    return;
  }
  showUnderPlayhead();
  playing = hit;
  video.play().catch((err: unknown) => {
    playing = null;
    say(`Could not play: ${String(err)}`);
  });
}

video.addEventListener('play', () => {
  playButton.textContent = 'Pause';
});
video.addEventListener('pause', () => {
  playButton.textContent = 'Play clip at playhead';
  playing = null;
});
video.addEventListener('timeupdate', () => {
  if (!playing) return;
  const into = video.currentTime - playing.clip.in;
  const f = frames(playing.clip.start) + secondsToFrames(into, rate);
  const end = frames(playing.clip.start) + frames(playing.clip.duration);
  if (f >= end) {
    video.pause();
    setPlayhead(end - 1);
    return;
  }
  playhead = Math.max(0, f);
  drawPlayhead();
});
video.addEventListener('ended', () => video.pause());

// ---- assets: kind and a title ----------------------------------------------

/** What kind each clip's asset is (its type, from HEAD) and a title (its newest gallery item's), once per asset. */
async function loadAssets(): Promise<void> {
  if (!tl) return;
  const ids = [...new Set(Object.values(tl.tracks).flat().map((c) => c.asset_id))].slice(0, 200);
  // Four at a time: the browser's few connections to this origin stay free for edits.
  let next = 0;
  const worker = async () => {
    while (next < ids.length) await loadAsset(ids[next++]!);
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
}

function loadAsset(id: string): Promise<void> {
  let p = assetLoads.get(id);
  if (!p) {
    p = (async () => {
      let kind: AssetInfo['kind'] = 'unknown';
      let titleText: string | null = null;
      try {
        const res = await fetch(`/api/v1/launcher/assets/${id}`, { method: 'HEAD', headers: authHeaders(), credentials: 'omit' });
        const type = res.ok ? (res.headers.get('Content-Type') ?? '') : '';
        kind = type.startsWith('image/') ? 'image' : type.startsWith('video/') ? 'video' : type.startsWith('audio/') ? 'audio' : 'unknown';
      } catch {
        // unknown: shown as such
      }
      try {
        const page = await call<Page<{ title: string | null }>>(`/launcher/gallery/items${query({ asset_id: id, limit: 1 })}`);
        titleText = page.items[0]?.title ?? null;
      } catch {
        // no title
      }
      assets.set(id, { kind, title: titleText });
    })();
    assetLoads.set(id, p);
  }
  return p;
}

// ---- revisions ---------------------------------------------------------------

async function loadRevisions(): Promise<void> {
  if (!tl) return;
  try {
    const page = await call<Page<Revision>>(`${base()}/revisions${query({ limit: 100 })}`);
    revisions = page.items;
  } catch (err) {
    revisions = [];
    showProblem(`Could not read the revisions: ${failureText(err)}`);
  }
  drawRevisions();
}

function clipCount(tracks: Record<string, Clip[]>): number {
  return Object.values(tracks).reduce((n, clips) => n + clips.length, 0);
}

function drawRevisions(): void {
  if (!tl) return;
  undoButton.disabled = !revisions.some((r) => r.revision === contentRevision - 1);
  const current = h(
    'li',
    { class: 'revision current', 'aria-current': 'true' },
    h('span', { class: 'rev' }, `Revision ${tl.revision}`),
    h('span', { class: 'muted' }, `current · ${clipCount(tl.tracks)} clip(s) · ${when(tl.updated_at)}`),
  );
  const rows = revisions.map((r) => {
    const restore = h('button', { type: 'button', 'aria-label': `Restore revision ${r.revision}` }, 'Restore');
    restore.addEventListener('click', () => void revert(r.revision, `Restore revision ${r.revision}`));
    return h(
      'li',
      { class: 'revision', 'data-revision': r.revision },
      h('span', { class: 'rev' }, `Revision ${r.revision}`),
      h('span', { class: 'muted' }, `${clipCount(r.tracks)} clip(s) · ${when(r.created_at)}`),
      restore,
    );
  });
  revisionList.replaceChildren(current, ...rows);
}

// ---- plan and export -----------------------------------------------------------

async function loadPlan(): Promise<void> {
  if (!tl) return;
  const seq = ++planSeq;
  planView.setAttribute('aria-busy', 'true');
  try {
    const plan = await call<Plan>(`${base()}:plan${query({ preset })}`);
    if (seq !== planSeq) return;
    drawPlan(plan);
  } catch (err) {
    if (seq !== planSeq) return;
    const reasons = clipReasons(err);
    replace(
      planView,
      h('p', { class: 'plan-path plan-refused' }, err instanceof ApiFailure && err.status === 422 ? 'This preset cannot export the sequence as it is:' : `No plan: ${failureText(err)}`),
      reasons.length ? h('ul', { class: 'reasons' }, ...reasons.map((r) => h('li', {}, r))) : err instanceof ApiFailure && err.status === 422 ? h('p', {}, err.message) : null,
    );
  } finally {
    if (seq === planSeq) planView.removeAttribute('aria-busy');
  }
}

function drawPlan(plan: Plan): void {
  const headline =
    plan.path === 'copy'
      ? 'Plan: copy (lossless). Every clip is joined as it is, without encoding.'
      : 'Plan: conform (encode). The picture is encoded once to H.264 at the target size and rate.';
  const rows = plan.clips.map((c) =>
    h(
      'tr',
      {},
      h('td', {}, `${c.track} #${c.index + 1}`),
      h('td', {}, clipName({ asset_id: c.asset_id, start: 0, in: 0, duration: 0 })),
      h('td', {}, h('span', { class: `path path-${c.path}` }, c.path)),
      h('td', { class: 'reason' }, c.reason ?? 'Can be copied as it is.'),
    ),
  );
  replace(
    planView,
    h('p', { class: `plan-path plan-${plan.path}` }, headline),
    plan.clips.length
      ? h(
          'table',
          { class: 'plan-clips' },
          h('caption', { class: 'visually-hidden' }, 'Each video clip, copied or encoded, and why'),
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Clip'), h('th', { scope: 'col' }, 'Asset'), h('th', { scope: 'col' }, 'Path'), h('th', { scope: 'col' }, 'Reason'))),
          h('tbody', {}, ...rows),
        )
      : null,
  );
}

async function loadExports(): Promise<void> {
  if (!tl) return;
  try {
    const page = await call<Page<Job>>(`${base()}/exports${query({ limit: 20 })}`);
    for (const job of page.items) exportJobs.set(job.id, job);
  } catch (err) {
    showProblem(`Could not list the exports: ${failureText(err)}`);
  }
  drawExports();
}

function exportBar(job: Job): HTMLElement | null {
  if (FINISHED.has(job.state)) return null;
  if (job.progress_den <= 0) return h('div', { class: 'bar indeterminate', role: 'progressbar', 'aria-label': `${job.title}: in progress` }, h('span'));
  const pct = Math.min(100, Math.round((job.progress_num / job.progress_den) * 100));
  const fill = h('span');
  fill.style.width = `${pct}%`;
  return h('div', { class: 'bar', role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': pct, 'aria-valuetext': `${pct}%`, 'aria-label': `${job.title}: export progress` }, fill);
}

function drawExports(): void {
  if (!tl) return;
  const list = [...exportJobs.values()].filter((j) => j.timeline_id === tl!.id).sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : a.id < b.id ? 1 : -1));
  const running = list.some((j) => !FINISHED.has(j.state));
  exportButton.disabled = running;
  if (list.length === 0) {
    replace(exportList, h('li', { class: 'empty muted' }, 'No export yet.'));
    return;
  }
  const focusedJob = document.activeElement instanceof HTMLElement && exportList.contains(document.activeElement) ? document.activeElement.closest<HTMLElement>('[data-job]')?.dataset.job : null;
  const rows = list.slice(0, 20).map((job) => {
    const finished = FINISHED.has(job.state);
    const asked = cancelling.has(job.id) || job.cancel_requested_at !== null;
    let cancel: HTMLButtonElement | null = null;
    if (!finished) {
      cancel = h('button', { type: 'button', disabled: asked, 'aria-label': `Cancel ${job.title}`, 'data-focus': 'cancel' }, asked ? 'Cancelling…' : 'Cancel');
      cancel.addEventListener('click', () => void cancelExport(job));
    }
    const pct = job.progress_den > 0 ? Math.min(100, Math.round((job.progress_num / job.progress_den) * 100)) : null;
    return h(
      'li',
      { class: 'export', 'data-job': job.id, 'data-state': job.state, tabindex: -1 },
      h('div', { class: 'export-head' }, h('strong', {}, job.title), h('span', { class: 'muted' }, when(job.created_at))),
      exportBar(job),
      h(
        'div',
        { class: 'export-meta' },
        h('span', { class: `state state-${job.state}` }, asked && !finished ? 'cancelling' : job.state),
        !finished && pct !== null ? h('span', { class: 'muted' }, `${pct}%`) : null,
        job.state === 'succeeded' && job.data?.item_id ? h('a', { href: `/#gallery/${job.data.item_id}`, class: 'gallery-link' }, 'Open in the gallery') : null,
        job.state === 'succeeded' && job.data?.asset_id ? playLink(job.data.asset_id) : null,
        job.last_error ? h('span', { class: 'error' }, job.last_error) : null,
        cancel,
      ),
    );
  });
  exportList.replaceChildren(...rows);
  if (focusedJob) {
    const row = exportList.querySelector<HTMLElement>(`[data-job="${focusedJob}"]`);
    const button = row?.querySelector<HTMLButtonElement>('[data-focus="cancel"]');
    if (button && !button.disabled) button.focus();
    else row?.focus();
  }
}

async function startExport(): Promise<void> {
  if (!tl) return;
  exportButton.disabled = true;
  showProblem(null);
  try {
    const job = await call<Job>(`${base()}:export`, { method: 'POST', body: { preset } });
    exportJobs.set(job.id, job);
    say(`Export started (${preset}).`);
  } catch (err) {
    say('The export did not start.');
    showProblem(failureText(err), clipReasons(err));
  }
  drawExports();
}

async function cancelExport(job: Job): Promise<void> {
  cancelling.add(job.id);
  drawExports();
  say(`Cancelling ${job.title}…`);
  try {
    await call(`${base()}/exports/${job.id}:cancel`, { method: 'POST' });
  } catch (err) {
    if (!(err instanceof ApiFailure && err.code === 'job_finished')) {
      cancelling.delete(job.id);
      showProblem(failureText(err));
      drawExports();
    }
  }
}

// ---- opening and the live channels ---------------------------------------------

async function open(next: Timeline, studioId: string): Promise<void> {
  const fresh = tl?.id !== next.id;
  if (fresh) {
    exportJobs.clear();
    revisions = [];
    playhead = 0;
    video.pause();
  }
  waiting.hidden = true;
  surface.hidden = false;
  showProblem(null);
  adopt(next, next.revision);
  if (fresh) fitZoom();
  setPlayhead(playhead, false);
  say(`Opened ${next.name} from ${studioId}, revision ${next.revision}.`);
  await Promise.all([loadRevisions(), loadPlan(), loadExports()]);
}

function connect(): void {
  const events = new EventStream('/editor/events');
  events.addEventListener('hello', () => {
    connection.textContent = 'Connected';
    connection.dataset.state = 'connected';
  });
  // The channel's `open` event shares its name with EventSource's own (connected, no data): only one with data is a sequence.
  events.addEventListener('open', (e) => {
    const raw = (e as MessageEvent<string>).data;
    if (typeof raw !== 'string') return;
    const data = JSON.parse(raw) as { timeline: Timeline; studio_id: string };
    void open(data.timeline, data.studio_id);
  });
  events.addEventListener('error', () => {
    connection.dataset.state = 'disconnected';
    connection.textContent = events.readyState === EventStream.CLOSED ? 'Not connected: sign in to the launcher first (bin/backlot login-url), then reload.' : 'Reconnecting…';
  });
  // Refused (no credential yet: the desktop shell's hidden window can load before the launcher page
  // signed in) and the launcher page of this origin has stored one since: start again with it.
  onCredentialChange(() => {
    if (events.readyState === EventStream.CLOSED) location.reload();
  });

  // Export progress, live (every studio's jobs: only this sequence's are kept).
  const jobs = new EventStream('/api/v1/launcher/events');
  jobs.addEventListener('job', (e) => {
    const job = JSON.parse((e as MessageEvent<string>).data) as Job;
    if (!tl || job.kind !== 'export' || job.timeline_id !== tl.id) return;
    const before = exportJobs.get(job.id);
    exportJobs.set(job.id, job);
    if (FINISHED.has(job.state)) {
      cancelling.delete(job.id);
      if (!before || !FINISHED.has(before.state)) say(job.state === 'succeeded' ? `Export finished: ${job.title}. It is in the gallery.` : `Export ${job.state}: ${job.title}.`);
    }
    drawExports();
  });
  // After a dropped connection the list is read again: events are live only.
  jobs.addEventListener('open', () => {
    if (tl) void loadExports();
  });
}

/** The exported file, opened in a new tab through a fresh media URL. */
function playLink(assetId: string): HTMLElement {
  const a = h('a', { href: '#', 'data-media': assetId }, 'Play the file');
  a.addEventListener('click', (e) => {
    e.preventDefault();
    openMedia(assetId);
  });
  return a;
}

// ---- wiring --------------------------------------------------------------------

undoButton.addEventListener('click', () => void undo());
playButton.addEventListener('click', () => togglePlay());
zoomIn.addEventListener('click', () => setZoom(zoom - 1));
zoomOut.addEventListener('click', () => setZoom(zoom + 1));
zoomFit.addEventListener('click', () => fitZoom());
snapBox.addEventListener('change', () => {
  snapping = snapBox.checked;
});
playheadField.addEventListener('change', () => {
  const f = parseTime(playheadField.value, rate);
  if (f === null) {
    say('The playhead takes a time as HH:MM:SS:FF or a number of frames.');
    playheadField.value = tc(playhead);
  } else setPlayhead(f);
});
presetSelect.addEventListener('change', () => {
  preset = presetSelect.value as Preset;
  void loadPlan();
});
exportButton.addEventListener('click', () => void startExport());
ruler.addEventListener('keydown', rulerKey);
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
    setZoom(e.deltaY < 0 ? zoom - 1 : zoom + 1, e.clientX);
  },
  { passive: false },
);
let rulerFrame = 0;
scroller.addEventListener('scroll', () => {
  cancelAnimationFrame(rulerFrame);
  rulerFrame = requestAnimationFrame(drawRuler);
});
window.addEventListener('resize', () => {
  if (tl) drawTimeline();
});
document.addEventListener('keydown', pageKey);

buildSurface();
replace(
  root,
  h('header', { class: 'top' }, h('h1', {}, 'Backlot editor'), connection),
  statusLine,
  problem,
  waiting,
  surface,
);
connect();
