import type { AssetsDomain } from '../assets';
import { ApiError } from '../core/errors';
import { checkIfMatch, type IfMatch } from '../core/etag';
import { ProbeError } from '../media';
import type { MediaProbe } from '../media/types';
import {
  assetIdsOf,
  buildDocument,
  layOut,
  trackEnd,
  trackKind,
  withTargetDefaults,
  type AssetFacts,
  type AssetLookup,
  type ClipProblem,
  type TimelineDoc,
} from './document';
import { planExport, videoClips, type ClipSource, type ExportPlan } from './plan';
import { invalidClips, requireCopyable, type Probes } from './probes';
import { LIMITS, type Target, type ClipIn, type ExportPreset, type TimelineAppend, type TimelineCreate, type TimelineUpdate, type TracksIn } from './schema';
import { docOf, type TimelineRow, type TimelineStore } from './store';

/** The editor surface as the timeline sees it (service/editor's hub). */
export interface EditorSurface {
  /** Publishes the sequence to every connected editor page; 501 `unsupported` when none is connected. */
  openTimeline(timeline: Record<string, unknown>, studioId: string): { opened: true; surface: string };
  /** Whether the sequence's `:open` reached a page while this service runs (the launcher's side reaches only these). */
  isOpen(timelineId: string): boolean;
}

/**
 * What the routes do, one function per operation: find the assets' facts
 * (probing lengths the assets do not carry, before the transaction), then
 * build, check and write the document in one transaction.
 */
export function createTimelineOps(deps: { store: TimelineStore; assets: AssetsDomain; probes: Probes; editor: EditorSurface }) {
  const { store, assets, probes } = deps;

  /** Facts of one studio's assets: kind and length (a cached probe's first, then the asset's hint). */
  const lookupFor = (studioId: string, present: ReadonlySet<string>): AssetLookup => {
    // Read once per asset, not once per clip: a lookup lives for one write's transaction.
    const seen = new Map<string, { facts: AssetFacts; reclaimed: boolean } | null>();
    const read = (assetId: string) => {
      if (seen.has(assetId)) return seen.get(assetId)!;
      const view = assets.store.view(studioId, assetId);
      const probed = view && (view.kind === 'video' || view.kind === 'audio') ? probes.cached(view.sha256) : null;
      const entry = view
        ? { facts: { kind: view.kind, duration_s: probedLength(probed) ?? view.duration_s }, reclaimed: view.reclaimed_at !== null }
        : null;
      seen.set(assetId, entry);
      return entry;
    };
    const facts = (assetId: string, allowReclaimed: boolean): AssetFacts | null => {
      const entry = read(assetId);
      return entry && (!entry.reclaimed || allowReclaimed) ? entry.facts : null;
    };
    return {
      readable: (assetId) => facts(assetId, false),
      present: (assetId) => (present.has(assetId) ? facts(assetId, true) : null),
    };
  };

  /**
   * Clips that take their length from the source, whose asset has no length
   * on record: probed now (when ffprobe is there), so the document can be built
   * synchronously inside its transaction. A file that cannot be probed stays
   * unknown, and the document says so for that clip.
   */
  const measure = async (studioId: string, clips: readonly { asset_id: string; duration?: number }[]) => {
    const wanted = new Set(clips.filter((c) => c.duration === undefined).map((c) => c.asset_id));
    // All at once: the media module runs a few probes at a time and queues the rest.
    await Promise.all(
      [...wanted].map(async (assetId) => {
        const view = assets.store.view(studioId, assetId);
        if (!view || view.reclaimed_at !== null || view.duration_s !== null) return;
        if (view.kind !== 'video' && view.kind !== 'audio') return;
        try {
          await probes.probe(view);
        } catch (err) {
          if (!(err instanceof ProbeError) && !(err instanceof ApiError)) throw err;
        }
      }),
    );
  };

  const built = (result: ReturnType<typeof buildDocument>, mapIndex?: (p: ClipProblem) => ClipProblem) => {
    if (!result.ok) throw invalid(mapIndex ? result.problems.map(mapIndex) : result.problems);
    return { doc: result.doc, duration: result.duration };
  };

  return {
    async create(studioId: string, body: TimelineCreate): Promise<TimelineRow> {
      const target = withTargetDefaults(body.target);
      countClips(body.tracks ?? {}, body.clips?.length);
      await measure(studioId, body.clips ?? allClips(body.tracks ?? {}));
      return store.create(studioId, () => {
        const assetsNow = lookupFor(studioId, new Set());
        if (body.clips) {
          const laid = layOut(body.clips, target, assetsNow);
          if (!laid.ok) throw invalid(laid.problems);
          // Problems found after laying out name the clip's place in `clips`.
          const toClipsIndex = (p: ClipProblem) => ({ ...p, index: laid.origin.get(p.track!)?.[p.index] ?? p.index });
          return built(buildDocument({ name: body.name, target, tracks: laid.tracks }, assetsNow), toClipsIndex);
        }
        return built(buildDocument({ name: body.name, target, tracks: body.tracks ?? {} }, assetsNow));
      });
    },

    /** PATCH: name and target merge, tracks are replaced whole; clips already present may stay. */
    async update(studioId: string, id: string, patch: TimelineUpdate, ifMatch: IfMatch): Promise<TimelineRow> {
      requireIfMatch(ifMatch);
      if (patch.tracks) {
        countClips(patch.tracks);
        await measure(studioId, allClips(patch.tracks));
      }
      return store.write(studioId, id, (row) => {
        checkIfMatch(ifMatch, String(row.revision));
        const current = docOf(row);
        const target = mergeTarget(current.target, patch.target);
        const tracks: TracksIn = patch.tracks === undefined ? current.tracks : (patch.tracks ?? {});
        const name = patch.name ?? current.name;
        return built(buildDocument({ name, target, tracks }, lookupFor(studioId, new Set(assetIdsOf(current.tracks)))));
      }, patch.description ?? null);
    },

    /** Writes an earlier revision forward; every clip's asset must be readable now. */
    revert(studioId: string, id: string, revision: number, ifMatch: IfMatch, description?: string): TimelineRow {
      requireIfMatch(ifMatch);
      return store.write(studioId, id, (row) => {
        checkIfMatch(ifMatch, String(row.revision));
        const old = store.revision(id, revision);
        if (!old) throw ApiError.notFound(`Revision ${revision} of the sequence`);
        return built(buildDocument(docOf(old), lookupFor(studioId, new Set())));
      }, description ?? `Restored revision ${revision}`);
    },

    /** Adds one asset at the end of a track of the given sequence, or of the caller's most recently written one. */
    async append(studioId: string, body: TimelineAppend): Promise<TimelineRow> {
      // 404 or 409 before any probing; without timeline_id the choice is made again in the write, after the probe.
      const latest = () => store.mostRecent(studioId)?.id ?? throwNoTimeline();
      if (body.timeline_id === undefined) latest();
      else store.own(studioId, body.timeline_id);
      await measure(studioId, [body]);
      return store.write(studioId, body.timeline_id ?? latest, (row) => {
        const current = docOf(row);
        const present = new Set(assetIdsOf(current.tracks));
        present.delete(body.asset_id); // the appended clip is added by this write: it must be readable
        const lookup = lookupFor(studioId, present);
        const facts = lookup.readable(body.asset_id);
        const kind = facts ? trackKind(facts.kind) : null;
        const track = body.track ?? (kind ? `${kind}1` : 'V1');
        const existing = current.tracks[track] ?? [];
        // The limit is over the whole sequence, as for create and PATCH, not over one track.
        countClips(current.tracks, 1);
        const clip: ClipIn = { asset_id: body.asset_id, start: trackEnd(existing, track, current.target) };
        if (body.in !== undefined) clip.in = body.in;
        if (body.duration !== undefined) clip.duration = body.duration;
        const tracks: TracksIn = { ...current.tracks, [track]: [...existing, clip] };
        return built(buildDocument({ name: current.name, target: current.target, tracks }, lookup));
      });
    },

    /** The export plan for a sequence the viewer can read; probes each video file once. */
    async plan(row: TimelineRow, preset: ExportPreset): Promise<ExportPlan> {
      const doc = docOf(row);
      const sources = await probeSources(row.studio_id, doc);
      const plan = planExport(doc, (assetId) => sources.get(assetId)!, preset);
      requireCopyable(plan);
      return plan;
    },

    /** Publishes the sequence to every connected editor page. */
    open(row: TimelineRow, timeline: Record<string, unknown>): { opened: true; surface: string } {
      return deps.editor.openTimeline(timeline, row.studio_id);
    },

    /** Whether the sequence is open on the editor surface (see EditorSurface.isOpen). */
    isOpen(id: string): boolean {
      return deps.editor.isOpen(id);
    },
  };

  /**
   * Every video clip's source, probed (once per file): 422 when there is no
   * video clip or a clip's asset can no longer be read or probed, 501 without
   * ffprobe. Assets are read as the sequence's owner reads them.
   */
  async function probeSources(ownerId: string, doc: TimelineDoc): Promise<Map<string, ClipSource>> {
    const clips = videoClips(doc);
    if (clips.length === 0) throw ApiError.invalidTimeline('The sequence has no video clip; add one before planning an export.');
    const found = await probes.clipAssets(ownerId, clips);
    return new Map([...found].map(([id, a]) => [id, { kind: a.view.kind, probe: a.probe }]));
  }
}

export type TimelineOps = ReturnType<typeof createTimelineOps>;

const invalid = invalidClips;

function throwNoTimeline(): never {
  throw ApiError.noTimeline();
}

function requireIfMatch(ifMatch: IfMatch): void {
  if (ifMatch.kind === 'absent') throw ApiError.badRequest('This write needs an If-Match header with the revision last read (the ETag).');
}

function allClips(tracks: TracksIn): ClipIn[] {
  return Object.values(tracks).flat();
}

function countClips(tracks: TracksIn, more = 0): void {
  const n = allClips(tracks).length + more;
  if (n > LIMITS.clips) throw ApiError.badRequest(`A sequence holds at most ${LIMITS.clips} clips; this one would have ${n}.`);
}

/** Merge patch of the target: members merge, a null member (or a null target) goes back to its default. */
function mergeTarget(current: Target, patch: TimelineUpdate['target']): Target {
  if (patch === null) return withTargetDefaults(undefined);
  const merged: Partial<Record<keyof Target, number>> = { ...current };
  for (const [key, value] of Object.entries(patch ?? {}) as [keyof Target, number | null | undefined][]) {
    if (value === null) delete merged[key];
    else if (value !== undefined) merged[key] = value;
  }
  return withTargetDefaults(merged);
}

function probedLength(probe: MediaProbe | null): number | null {
  if (!probe) return null;
  return probe.video?.duration_s ?? probe.audio?.duration_s ?? probe.duration_s;
}
