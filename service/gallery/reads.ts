import type { Db } from '../db/open';
import { readClient, type ReadRunner } from '../db/read-pool';
import type { ItemFilter } from './query';
import { createGalleryReader, type ItemRow, type Viewer } from './store';

/**
 * The gallery reads that run on the read workers (service/db/read-pool.ts):
 * list and search pages and lineage walks. Rows are plain data and cross
 * threads as they are.
 */

export function galleryReadOps(db: Db) {
  const reader = createGalleryReader(db);
  return {
    'gallery.search': reader.search,
    'gallery.lineageUp': reader.lineageUpFrom,
    'gallery.lineageDown': reader.lineageDown,
  };
}

export type GalleryReadOps = ReturnType<typeof galleryReadOps>;

/** The gallery reads as the routes call them, through the pool; the caller's studio is the lane. */
export function galleryReads(runner: ReadRunner) {
  const call = readClient<GalleryReadOps>(runner);
  return {
    search: (lane: string, filter: ItemFilter, q: string, after: number | null, limit: number): Promise<ItemRow[]> =>
      call(lane, 'gallery.search', filter, q, after, limit),
    lineageUp: (viewer: Viewer, startSeq: number, after: number | null, limit: number): Promise<ItemRow[]> =>
      call(viewer.studioId, 'gallery.lineageUp', viewer, startSeq, after, limit),
    lineageDown: (viewer: Viewer, assetId: string, after: number | null, limit: number): Promise<ItemRow[]> =>
      call(viewer.studioId, 'gallery.lineageDown', viewer, assetId, after, limit),
  };
}

export type GalleryReads = ReturnType<typeof galleryReads>;
