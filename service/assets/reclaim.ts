import { createHmac } from 'node:crypto';
import { ApiError } from '../core/errors';
import { nowIso } from '../core/time';
import type { BlobStore } from './blobs';
import { THUMB_WIDTH } from './schema';
import type { AssetsStore, Candidate } from './store';

/**
 * POST /assets:reclaim (docs/api.md "Reclaim `POST /assets:reclaim`"). Without `confirm` a preview; with it,
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

/** What a preview names, before it is signed: a read, run on a read worker (reads.ts). */
export interface Selection {
  assets: string[];
  items: string[];
  bytes: number;
}

/** The caller's reclaimable assets (`null`: every studio's, the launcher), or the given ones (409 `not_reclaimable` when any is not). */
export function selectReclaimable(store: AssetsStore, studioId: string | null, assetIds: string[] | undefined): { chosen: Candidate[]; selection: Selection } {
  let chosen = store.candidates(studioId);
  if (assetIds) {
    const wanted = new Set(assetIds);
    const found = new Set(chosen.map((c) => c.id));
    const refused = [...wanted].filter((id) => !found.has(id)).sort();
    if (refused.length > 0) throw ApiError.notReclaimable(refused);
    chosen = chosen.filter((c) => wanted.has(c.id));
  }
  const assets = chosen.map((c) => c.id);
  return { chosen, selection: { assets, items: store.dependents(assets), bytes: chosen.reduce((sum, c) => sum + c.size, 0) } };
}

/**
 * `select` runs the preview's read (on a read worker); the reclaim itself
 * selects again on the main connection, inside its write transaction.
 */
export function createReclaimer(
  store: AssetsStore,
  blobs: BlobStore,
  secret: Buffer,
  select: (studioId: string | null, assetIds: string[] | undefined) => Promise<Selection>,
) {
  function sign(studioId: string | null, { assets, items, bytes }: Selection): Preview {
    const token = createHmac('sha256', secret)
      .update(`assets:reclaim\n${studioId ?? '*'}\n${assets.join(',')}\n${items.join(',')}\n${bytes}`)
      .digest('base64url')
      .slice(0, 32);
    return { preview: token, assets, items, bytes };
  }

  return {
    /** `studioId` null: the launcher, over every asset. */
    async preview(studioId: string | null, assetIds?: string[]): Promise<Preview> {
      return sign(studioId, await select(studioId, assetIds));
    },

    reclaim(studioId: string | null, confirm: string, assetIds?: string[]): { reclaimed: string[]; bytes_freed: number } {
      const { chosen, library } = store.transaction(() => {
        const { chosen, selection } = selectReclaimable(store, studioId, assetIds);
        const preview = sign(studioId, selection);
        if (preview.preview !== confirm) throw ApiError.previewChanged({ ...preview });
        return { chosen, library: store.markReclaimed(preview.assets, nowIso()) };
      });
      let freed = 0;
      try {
        for (const c of chosen) {
          if (blobs.remove(blobs.blobPath(c.sha256, c.ext))) freed += c.size;
          blobs.remove(blobs.thumbPath(c.sha256, THUMB_WIDTH));
        }
        for (const path of library) blobs.remove(path);
        store.clearLibraryPaths(chosen.map((c) => c.id));
      } catch (err) {
        blobs.leftover(); // files of reclaimed rows: the next start removes them
        throw err;
      }
      return { reclaimed: chosen.map((c) => c.id), bytes_freed: freed };
    },
  };
}

export type Reclaimer = ReturnType<typeof createReclaimer>;
