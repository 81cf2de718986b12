import { unsignedPage, type UnsignedPage } from '../core/pagination';
import type { Db } from '../db/open';
import { readClient, type ReadRunner } from '../db/read-pool';
import type { ItemFilter } from './query';
import { itemJson } from './page';
import { createGalleryReader, type ItemRow, type Viewer } from './store';

/**
 * The gallery reads that run on the read workers (service/db/read-pool.ts):
 * list and search pages and lineage walks, each handed back as a page of
 * `limit` items' JSON text and the last one's position (a string crosses
 * threads far cheaper than rows do); the route signs the cursor.
 */

/** Up to `limit + 1` rows read, at most `limit` shown (fewer past PAGE_BYTES): the next one only says that more exist. */
const page = (rows: Iterable<ItemRow>, limit: number): UnsignedPage<string> => unsignedPage(rows, limit, (r) => [r.seq], itemJson);

export function galleryReadOps(db: Db) {
  const reader = createGalleryReader(db);
  return {
    'gallery.search': (filter: ItemFilter, q: string, after: number | null, limit: number) =>
      page(reader.searchRows(filter, q, after, limit + 1), limit),
    'gallery.lineageUp': (viewer: Viewer, startSeq: number, after: number | null, limit: number) =>
      page(reader.lineageUpRows(viewer, startSeq, after, limit + 1), limit),
    'gallery.lineageDown': (viewer: Viewer, assetId: string, after: number | null, limit: number) =>
      page(reader.lineageDownRows(viewer, assetId, after, limit + 1), limit),
  };
}

export type GalleryReadOps = ReturnType<typeof galleryReadOps>;

/** The gallery reads as the routes call them, through the pool; the caller's studio is the lane. */
export function galleryReads(runner: ReadRunner) {
  const call = readClient<GalleryReadOps>(runner);
  return {
    search: (lane: string, filter: ItemFilter, q: string, after: number | null, limit: number) =>
      call(lane, 'gallery.search', filter, q, after, limit),
    lineageUp: (viewer: Viewer, startSeq: number, after: number | null, limit: number) =>
      call(viewer.studioId, 'gallery.lineageUp', viewer, startSeq, after, limit),
    lineageDown: (viewer: Viewer, assetId: string, after: number | null, limit: number) =>
      call(viewer.studioId, 'gallery.lineageDown', viewer, assetId, after, limit),
  };
}

export type GalleryReads = ReturnType<typeof galleryReads>;
