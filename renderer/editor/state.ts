import type { Job } from '../lib/api-types';
import { frameRate, type Rate } from './frames';
import type { AssetInfo, Clip, Plan, Preset, Revision, Selection, Timeline } from './types';

/**
 * The editor page's one state object (docs/design.md, "The editor page is
 * state, actions and views"). Only actions (actions/*.ts, and main.ts's
 * wiring) import this module and write it; views read it through read.ts.
 * A write is followed by `requestRender(part, ...)`: the parts named are
 * drawn once, together, at the end of the current task.
 */

export interface State {
  tl: Timeline | null;
  rate: Rate;
  /** The revision whose content the current document holds (after an undo, the one reverted to). */
  contentRevision: number;
  zoom: number; // index into ZOOMS
  playhead: number; // frames
  /** The clip the inspector shows (the last one clicked), one of `selected`. */
  selection: Selection;
  /** Every selected clip, as "track:index". */
  selected: Set<string>;
  /** This page's own edits, newest last, to undo; and the ones undone, to redo. */
  undo: OwnEdit[];
  redo: OwnEdit[];
  /** The revision this page's last write made: a newer one was written elsewhere. */
  ownRevision: number;
  /** In and out marks (frames), or null. */
  marks: { in: number | null; out: number | null };
  /** The J/K/L shuttle's speed (times normal; negative backwards; 0 stopped). */
  shuttle: number;
  snapping: boolean;
  saving: boolean;
  revisions: Revision[];
  exportJobs: Map<string, Job>;
  cancelling: Set<string>;
  /** An export was asked for and its job is not back yet. */
  exportStarting: boolean;
  /** The file name each export of this page asked for (its Download keeps it). */
  exportNames: Map<string, string>;
  assets: Map<string, AssetInfo>;
  preset: Preset;
  /** The export plan for `preset`: loading, the plan, or why there is none (a 422's clip reasons). */
  plan: { kind: 'plan'; plan: Plan } | { kind: 'refused'; unfit: boolean; text: string; reasons: string[] } | null;
  /** A plan is on its way (the panel keeps the last one, marked busy). */
  planBusy: boolean;
  /** The status line: what just happened; `notice` marks what the person must not miss. */
  status: { text: string; notice: boolean };
  /** The alert under it, with a list of reasons, or null. */
  problem: { text: string; details: string[] } | null;
  connection: { state: 'connecting' | 'connected' | 'disconnected'; text: string };
  /** The media bin: the owning studio's gallery items and the assets handed to it, each with its length in frames once known. */
  bin: { studio: string | null; items: BinItem[]; loading: boolean; error: string | null };
  /** The sequence browser: every studio's sequences (GET /launcher/timelines), searched by name and studio. */
  browser: {
    shown: boolean;
    q: string;
    studio: string;
    studios: string[];
    items: Timeline[];
    next: string | null;
    loading: boolean;
    error: string | null;
  };
}

export const state: State = {
  tl: null,
  rate: frameRate(30),
  contentRevision: 0,
  zoom: 4,
  playhead: 0,
  selection: null,
  selected: new Set(),
  undo: [],
  redo: [],
  ownRevision: 0,
  marks: { in: null, out: null },
  shuttle: 0,
  snapping: true,
  saving: false,
  revisions: [],
  exportJobs: new Map(),
  cancelling: new Set(),
  exportStarting: false,
  exportNames: new Map(),
  assets: new Map(),
  preset: 'auto',
  plan: null,
  planBusy: false,
  status: { text: '', notice: false },
  problem: null,
  connection: { state: 'connecting', text: 'Connecting…' },
  bin: { studio: null, items: [], loading: false, error: null },
  browser: { shown: true, q: '', studio: '', studios: [], items: [], next: null, loading: false, error: null },
};

/** A media bin entry: a gallery item's or a handed asset, its kind, title and length (frames; null until measured). */
export interface BinItem {
  asset_id: string;
  kind: string;
  title: string;
  length: number | null;
}

/** One edit made on this page: the tracks before and after it, and what it did in words. */
export interface OwnEdit {
  before: Record<string, Clip[]>;
  after: Record<string, Clip[]>;
  description: string;
}

/** What a render may redraw; each view draws its own parts. */
export type Part = 'head' | 'timeline' | 'playhead' | 'selection' | 'inspector' | 'viewer' | 'revisions' | 'plan' | 'exports' | 'status' | 'connection' | 'toolbar' | 'browser' | 'marks' | 'bin';

const dirty = new Set<Part>();
let scheduled = false;
let renderer: (parts: ReadonlySet<Part>) => void = () => {};

/** The page's one render: main.ts installs it (it calls each view). */
export function setRenderer(fn: (parts: ReadonlySet<Part>) => void): void {
  renderer = fn;
}

/**
 * Marks parts to redraw; they are drawn once at the end of the current task
 * (a microtask), so an action that writes several fields draws once and the
 * page shows the result before the next input is handled.
 */
export function requestRender(...parts: Part[]): void {
  for (const p of parts) dirty.add(p);
  if (scheduled) return;
  scheduled = true;
  queueMicrotask(renderNow);
}

/** Draws what is pending at once (for an action that must measure or focus the result). */
export function renderNow(): void {
  scheduled = false;
  if (dirty.size === 0) return;
  const parts = new Set(dirty);
  dirty.clear();
  renderer(parts);
}

/**
 * What actions ask of the views that own a browser object: the player (the
 * viewer's media elements) and the timeline's viewport (its scroll position
 * and width). Views install them at start; actions call them and never import
 * a view.
 */
export interface Player {
  /** Plays from frame `from` (to `to`, exclusive, when given); today the clip under `from` only. */
  play(from: number, to?: number): void;
  pause(): void;
  readonly playing: boolean;
}

export interface Viewport {
  /** Whether the timeline can be drawn at zoom level z (browsers stop laying out far beyond some width). */
  fits(z: number): boolean;
  /** The frame under the client x (else the playhead, if in view, else the left edge), to keep in place across a zoom. */
  anchor(clientX?: number): { frame: number; x: number };
  /** Draws the new zoom with the anchored frame where it was. */
  keep(anchor: { frame: number; x: number }): void;
  /** Zooms to show the whole sequence. */
  fit(): void;
  /** Scrolls so the frame is in view. */
  reveal(frame: number): void;
  /** Focuses a clip once it is drawn. */
  focusClip(track: string, index: number): void;
}

export const ports: { player: Player; viewport: Viewport } = {
  player: { play() {}, pause() {}, playing: false },
  viewport: { fits: () => false, anchor: () => ({ frame: 0, x: 0 }), keep() {}, fit() {}, reveal() {}, focusClip() {} },
};
