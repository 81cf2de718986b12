import { createHmac } from 'node:crypto';
import { ApiError } from '../core/errors';
import { nowIso } from '../core/time';
import type { BlobStore } from './blobs';
import { THUMB_WIDTH } from './schema';
import type { AssetsStore, Candidate } from './store';

/**
 * POST /assets:reclaim (decisions §7). Without `confirm` a preview; with it,
 * the reclaim, only when the set is exactly the one previewed. The preview
 * token is an HMAC of the caller, the sorted asset ids, the dependent item ids
 * and the byte count, so any change to the set changes the token and nothing
 * needs to be remembered between the two calls.
 *
 * The rows are marked and dependents hard-deleted in one immediate
 * transaction; the files go right after, in the same synchronous turn, so no
 * upload of the same bytes can slip between. A crash between the two leaves
 * files of reclaimed rows, which the next start removes (recover.ts).
 */

export interface Preview {
  preview: string;
  assets: string[];
  items: string[];
  bytes: number;
}

export function createReclaimer(store: AssetsStore, blobs: BlobStore, secret: Buffer) {
  function select(studioId: string | null, assetIds: string[] | undefined): { chosen: Candidate[]; preview: Preview } {
    let chosen = store.candidates(studioId);
    if (assetIds) {
      const wanted = new Set(assetIds);
      const found = new Set(chosen.map((c) => c.id));
      const refused = [...wanted].filter((id) => !found.has(id)).sort();
      if (refused.length > 0) throw ApiError.notReclaimable(refused);
      chosen = chosen.filter((c) => wanted.has(c.id));
    }
    const assets = chosen.map((c) => c.id);
    const items = store.dependents(assets);
    const bytes = chosen.reduce((sum, c) => sum + c.size, 0);
    const token = createHmac('sha256', secret)
      .update(`assets:reclaim\n${studioId ?? '*'}\n${assets.join(',')}\n${items.join(',')}\n${bytes}`)
      .digest('base64url')
      .slice(0, 32);
    return { chosen, preview: { preview: token, assets, items, bytes } };
  }

  return {
    /** `studioId` null: the launcher, over every asset. */
    preview(studioId: string | null, assetIds?: string[]): Preview {
      return select(studioId, assetIds).preview;
    },

    reclaim(studioId: string | null, confirm: string, assetIds?: string[]): { reclaimed: string[]; bytes_freed: number } {
      const { chosen, library } = store.transaction(() => {
        const { chosen, preview } = select(studioId, assetIds);
        if (preview.preview !== confirm) throw ApiError.previewChanged({ ...preview });
        return { chosen, library: store.markReclaimed(preview.assets, nowIso()) };
      });
      let freed = 0;
      for (const c of chosen) {
        if (blobs.remove(blobs.blobPath(c.sha256, c.ext))) freed += c.size;
        blobs.remove(blobs.thumbPath(c.sha256, THUMB_WIDTH));
      }
      for (const path of library) blobs.remove(path);
      store.clearLibraryPaths(chosen.map((c) => c.id));
      return { reclaimed: chosen.map((c) => c.id), bytes_freed: freed };
    },
  };
}

export type Reclaimer = ReturnType<typeof createReclaimer>;
