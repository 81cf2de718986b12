import { ApiFailure, call, query, type Page } from '../../lib/api';
import type { Asset, Job } from '../../lib/api-types';
import { frameRate } from '../frames';
import { base, clipReasons, failureText } from '../read';
import { ports, renderNow, requestRender, state } from '../state';
import type { AssetInfo, Plan, Preset, Revision, Timeline } from '../types';
import { say, showProblem } from './notice';
import { loadBin } from './bin';
import { noteOpened } from './sequences';
import { setPlayhead } from './transport';

/** Opening a sequence and reading what goes with it: revisions, the export plan, exports, asset kinds and titles. */

export async function open(next: Timeline, studioId: string): Promise<void> {
  const fresh = state.tl?.id !== next.id;
  if (fresh) {
    state.exportJobs.clear();
    state.revisions = [];
    state.playhead = 0;
    // Undo and redo are this page's edits of this sequence only.
    state.undo = [];
    state.redo = [];
    state.ownRevision = next.revision;
    state.marks = { in: null, out: null };
    ports.player.pause();
  }
  showProblem(null);
  noteOpened(next.id);
  if (fresh) state.browser.shown = false;
  requestRender('browser');
  adopt(next, next.revision);
  // The surface is shown before the zoom is fitted to its width.
  renderNow();
  if (fresh) ports.viewport.fit();
  setPlayhead(state.playhead, false);
  say(`Opened ${next.name} from ${studioId}, revision ${next.revision}.`);
  await Promise.all([loadRevisions(), loadPlan(), loadExports(), fresh ? loadBin() : Promise.resolve()]);
}

/** A document from the service becomes the page's. */
export function adopt(next: Timeline, content: number): void {
  const sameSequence = state.tl?.id === next.id;
  state.tl = next;
  state.rate = frameRate(next.target.fps);
  state.contentRevision = content;
  if (!sameSequence) state.selection = null;
  else if (state.selection && !next.tracks[state.selection.track]?.[state.selection.index]) state.selection = null;
  requestRender('head', 'timeline', 'inspector', 'revisions');
  void loadAssets().then(() => {
    // the viewer's caption names the clip by its title too
    requestRender('timeline', 'inspector', 'viewer');
  });
}

export async function reload(why: string): Promise<void> {
  if (!state.tl) return;
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

export async function refreshAfterWrite(): Promise<void> {
  await Promise.all([loadRevisions(), loadPlan()]);
}

export async function loadRevisions(): Promise<void> {
  if (!state.tl) return;
  try {
    const page = await call<Page<Revision>>(`${base()}/revisions${query({ limit: 100 })}`);
    state.revisions = page.items;
  } catch (err) {
    state.revisions = [];
    showProblem(`Could not read the revisions: ${failureText(err)}`);
  }
  requestRender('revisions');
}

let planSeq = 0;

export async function loadPlan(): Promise<void> {
  if (!state.tl) return;
  const seq = ++planSeq;
  state.planBusy = true;
  requestRender('plan');
  try {
    const plan = await call<Plan>(`${base()}:plan${query({ preset: state.preset })}`);
    if (seq !== planSeq) return;
    state.plan = { kind: 'plan', plan };
  } catch (err) {
    if (seq !== planSeq) return;
    const unfit = err instanceof ApiFailure && err.status === 422;
    state.plan = { kind: 'refused', unfit, text: unfit ? (err as ApiFailure).message : `No plan: ${failureText(err)}`, reasons: clipReasons(err) };
  } finally {
    if (seq === planSeq) state.planBusy = false;
    requestRender('plan');
  }
}

export function setPreset(preset: Preset): void {
  state.preset = preset;
  void loadPlan();
}

export async function loadExports(): Promise<void> {
  if (!state.tl) return;
  try {
    const page = await call<Page<Job>>(`${base()}/exports${query({ limit: 20 })}`);
    for (const job of page.items) state.exportJobs.set(job.id, job);
  } catch (err) {
    showProblem(`Could not list the exports: ${failureText(err)}`);
  }
  requestRender('exports');
}

// ---- assets: kind and a title ----------------------------------------------

const assetLoads = new Map<string, Promise<void>>();

/** What kind each clip's asset is (its record, from /launcher/assets/{id}/info) and a title (its newest gallery item's), once per asset. */
export async function loadAssets(): Promise<void> {
  if (!state.tl) return;
  const ids = [...new Set(Object.values(state.tl.tracks).flat().map((c) => c.asset_id))].slice(0, 200);
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
        const asset = await call<Asset>(`/launcher/assets/${encodeURIComponent(id)}/info`);
        kind = asset.kind === 'other' ? 'unknown' : asset.kind;
      } catch {
        // unknown: shown as such
      }
      try {
        const page = await call<Page<{ title: string | null }>>(`/launcher/gallery/items${query({ asset_id: id, limit: 1 })}`);
        titleText = page.items[0]?.title ?? null;
      } catch {
        // no title
      }
      state.assets.set(id, { kind, title: titleText });
    })();
    assetLoads.set(id, p);
  }
  return p;
}
