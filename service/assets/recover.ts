import { join } from 'node:path';
import type { BlobStore } from './blobs';
import type { AssetsStore } from './store';

/**
 * Run once at start (issue: crash safety). A process killed mid-upload or
 * mid-adopt leaves temp files in blobs/.tmp; one killed between the rename of
 * a blob and its row insert leaves a blob no row names; one killed during a
 * reclaim leaves files of reclaimed rows. All of them go. Rows are only ever
 * inserted after their blob is in place, so no row lacks its file because of
 * a crash.
 */
export function recoverBlobStore(store: AssetsStore, blobs: BlobStore): { removed: number } {
  let removed = 0;
  blobs.clearTemp();
  const rows = store.blobNames();
  const live = new Set(rows.filter((r) => !r.reclaimed).map((r) => r.name));
  const liveShas = new Set([...live].map((n) => n.slice(0, 64)));
  for (const name of blobs.listBlobs()) {
    if (!live.has(name) && blobs.remove(join(blobs.blobsDir, name))) removed++;
  }
  for (const name of blobs.listThumbs()) {
    if (!liveShas.has(name.slice(0, 64))) blobs.remove(join(blobs.thumbsDir, name));
  }
  const reclaimed = store.reclaimedWithLibrary();
  if (reclaimed.length > 0) {
    for (const path of store.libraryFiles(reclaimed)) blobs.remove(path);
    store.clearLibraryPaths(reclaimed);
  }
  return { removed };
}
