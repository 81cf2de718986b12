import { existsSync } from 'node:fs';
import type { BlobStore } from './blobs';
import type { AssetsStore } from './store';

/**
 * Read access handed from one studio to another (an accepted handoff,
 * docs/api.md "Handoffs"): the same grant an upload of the same bytes gives
 * (ingest.ts `reuse`): a row in asset_access under the sender's name for the
 * file, then a library hardlink. The grant runs in the caller's transaction;
 * the links are file steps, made after it commits, as uploads make theirs.
 */

export interface PendingLink {
  id: string;
  blob: string;
  filename: string;
}

export function createHandover(store: AssetsStore, blobs: BlobStore) {
  return {
    /** Of the offered assets, those that cannot be handed over: no longer readable by the sender, reclaimed, or their file gone. */
    missing(fromStudio: string, ids: readonly string[]): string[] {
      return ids.filter((id) => {
        const view = store.view(fromStudio, id);
        return !view || view.reclaimed_at !== null || !existsSync(blobs.blobPath(view.sha256, view.ext));
      });
    },

    /** In the caller's transaction: `toStudio` may read each asset from now on. Returns the library links to make after commit. */
    grant(fromStudio: string, toStudio: string, ids: readonly string[], at: string): PendingLink[] {
      const links: PendingLink[] = [];
      for (const id of ids) {
        const view = store.view(fromStudio, id);
        if (!view) continue; // checked by missing() in the same transaction
        if (store.grant(id, toStudio, view.filename, at)) links.push({ id, blob: blobs.blobPath(view.sha256, view.ext), filename: view.filename });
      }
      return links;
    },

    /** The recipient's library files (null path, logged, where the volume refuses a hardlink: blobs.linkLibrary). */
    link(toStudio: string, links: readonly PendingLink[]): void {
      for (const l of links) store.setLibraryPath(l.id, toStudio, blobs.linkLibrary(l.blob, toStudio, l.filename));
    },
  };
}

export type Handover = ReturnType<typeof createHandover>;
