import type { AssetsDomain, AssetView } from '../assets';
import { ApiError } from '../core/errors';
import { probeMedia, ProbeError, requireTool } from '../media';
import type { MediaProbe } from '../media/types';
import { UNREADABLE, type ClipProblem } from './document';
import type { TimelineStore } from './store';

/**
 * Probes of asset files, each file probed once: answers come from the
 * database cache (by sha256) and a probe already running for the same file is
 * shared, not started twice.
 */

/** A clip's asset as the plan and the export see it. */
export interface ClipAsset {
  view: AssetView;
  /** null for images (never probed). */
  probe: MediaProbe | null;
}

export function createProbes(store: TimelineStore, assets: AssetsDomain, signal?: AbortSignal) {
  const running = new Map<string, Promise<MediaProbe>>();

  /** Throws ApiError 501 when ffprobe is unavailable, ProbeError when the file cannot be read. */
  async function probe(asset: Pick<AssetView, 'sha256' | 'ext'>): Promise<MediaProbe> {
    const cached = store.cachedProbe(asset.sha256);
    if (cached) return cached;
    let pending = running.get(asset.sha256);
    if (!pending) {
      pending = probeMedia(assets.blobs.blobPath(asset.sha256, asset.ext), { signal }).then((probe) => {
        store.cacheProbe(asset.sha256, probe);
        return probe;
      });
      running.set(asset.sha256, pending);
      const forget = () => running.delete(asset.sha256);
      pending.then(forget, forget);
    }
    return pending;
  }

  return {
    cached(sha256: string): MediaProbe | null {
      return store.cachedProbe(sha256);
    },

    probe,

    /**
     * The assets of `clips`, read as `ownerId` reads them, each media file
     * probed (once; every file at once, the media module runs a few at a time
     * and queues the rest). 501 without ffprobe; 422 `invalid_timeline` naming
     * every clip whose asset can no longer be read (reclaimed), cannot be
     * probed, or lacks the stream its track needs (a picture on V tracks,
     * sound on A tracks).
     */
    async clipAssets(ownerId: string, clips: readonly { track: string; index: number; asset_id: string }[]): Promise<Map<string, ClipAsset>> {
      requireTool('ffprobe');
      const found = new Map<string, ClipAsset>();
      const failed = new Map<string, string>();
      await Promise.all(
        [...new Set(clips.map((c) => c.asset_id))].map(async (assetId) => {
          const view = assets.store.view(ownerId, assetId);
          if (!view || view.reclaimed_at !== null) return void failed.set(assetId, `${UNREADABLE}: ${assetId}`);
          if (view.kind === 'image') return void found.set(assetId, { view, probe: null });
          try {
            const probed = await probe(view);
            if (view.kind === 'video' && !probed.video) failed.set(assetId, 'has no video stream that ffprobe can find');
            else if (view.kind === 'audio' && !probed.audio) failed.set(assetId, 'has no sound stream that ffprobe can find');
            else found.set(assetId, { view, probe: probed });
          } catch (err) {
            if (!(err instanceof ProbeError)) throw err;
            failed.set(assetId, `could not be probed: ${err.message}`);
          }
        }),
      );
      if (failed.size > 0) {
        throw invalidClips(clips.filter((c) => failed.has(c.asset_id)).map((c) => ({ track: c.track, index: c.index, reason: failed.get(c.asset_id)! })));
      }
      return found;
    },
  };
}

export type Probes = ReturnType<typeof createProbes>;

/** At most this many problems are listed in `details.clips`. */
const MAX_PROBLEMS = 100;

/** 422 `invalid_timeline`: the first problem in `message`, every one (up to 100) in `details.clips`. */
export function invalidClips(problems: ClipProblem[], prefix = ''): ApiError {
  const first = problems[0];
  const where = first ? (first.track ? `Clip ${first.index} on ${first.track}` : `Clip ${first.index}`) : 'The sequence';
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''}; see details.clips)` : '';
  return ApiError.invalidTimeline(`${prefix}${where} ${first?.reason ?? 'is not valid'}${more}.`, problems.slice(0, MAX_PROBLEMS));
}

/** The plan, unless the `copy` preset was asked for and the plan is `conform`: then 422 with its reasons. */
export function requireCopyable<P extends { preset: string; path: string; clips: { track: string; index: number; reason: string | null }[] }>(plan: P): P {
  if (plan.preset !== 'copy' || plan.path !== 'conform') return plan;
  const problems = plan.clips.filter((c) => c.reason !== null).map(({ track, index, reason }) => ({ track, index, reason: reason! }));
  throw invalidClips(problems, 'The copy preset cannot be used: ');
}
