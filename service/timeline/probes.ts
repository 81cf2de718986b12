import type { AssetsDomain, AssetView } from '../assets';
import { probeMedia } from '../media';
import type { MediaProbe } from '../media/types';
import type { TimelineStore } from './store';

/**
 * Probes of asset files, each file probed once: answers come from the
 * database cache (by sha256) and a probe already running for the same file is
 * shared, not started twice.
 */
export function createProbes(store: TimelineStore, assets: AssetsDomain, signal?: AbortSignal) {
  const running = new Map<string, Promise<MediaProbe>>();
  return {
    cached(sha256: string): MediaProbe | null {
      return store.cachedProbe(sha256);
    },

    /** Throws ApiError 501 when ffprobe is unavailable, ProbeError when the file cannot be read. */
    async probe(asset: Pick<AssetView, 'sha256' | 'ext'>): Promise<MediaProbe> {
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
    },
  };
}

export type Probes = ReturnType<typeof createProbes>;
