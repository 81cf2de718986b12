import { opendirSync, type Dir } from 'node:fs';
import { join } from 'node:path';
import type { BlobStore } from './blobs';
import type { AssetsStore, ReclaimedCursor } from './store';

/**
 * Start-up recovery of the blob store (crash safety; incremental, so start-up
 * does not grow with the rows: docs/reliability.md "Start-up and recovery at
 * scale"). A process killed mid-upload or mid-adopt leaves temp files in
 * blobs/.tmp; one killed between the rename of a blob and its row insert
 * leaves a blob no row names; one killed during a reclaim leaves the blob,
 * thumbnail and library files of reclaimed rows. All of them go. Rows are
 * only ever inserted after their blob is in place, so no row lacks its file
 * because of a crash, and recovery never changes a row except to clear the
 * library path of a reclaimed one whose file it removed.
 *
 * Its cost must not grow with the data before the service listens:
 *
 * - Temp files go at once (before listening): new uploads share the folder.
 * - Then up to UP_FRONT checks run at once too, so a small data dir is
 *   recovered completely before the first request, as it always was.
 * - The rest (a big data dir) runs in the background, SLICE checks per turn of
 *   the event loop, while the service serves: after a clean stop (the marker
 *   written by close(), see service/clean-stop.ts) it is skipped, since a run
 *   that stopped cleanly leaves nothing to recover.
 *
 * The checks walk the files (blobs/, thumbs/) and the reclaimed rows (through
 * their partial index), never every row. Each check looks its row up and
 * removes the file in one synchronous turn, as ingest (rename + insert) and
 * reclaim (mark + unlink) do theirs, so no request can slip between: a blob
 * whose row a request inserts meanwhile is seen live and kept. A request that
 * touches an asset recovery has not reached yet gets the answer it would get
 * after recovery: a row-less blob is no asset (404) and new bytes at its name
 * replace it; a reclaimed row answers 410 whatever files are left; reviving a
 * reclaimed row first removes its leftover library files (ingest.ts, through
 * clearReclaimedLibrary below).
 */

/** Checks done before listening: every check is one indexed lookup (and at most one unlink). */
export const UP_FRONT = 2048;
/** Checks per turn of the event loop in the background. */
export const SLICE = 256;

export interface RecoveryCounts {
  /** Directory entries of blobs/ and thumbs/ looked at, reclaimed rows looked at. */
  files: number;
  reclaimed: number;
  /** Blobs, thumbnails and library files removed. */
  blobs: number;
  thumbs: number;
  libraries: number;
}

export interface BlobRecovery {
  /** Everything was checked, or the rest was skipped after a clean stop. */
  settled(): boolean;
  /** Resolves once the background part ended (settled, stopped, or failed). */
  done: Promise<void>;
  counts(): RecoveryCounts;
  /** Ends the background part between two slices (service close) and waits for it. */
  stop(): Promise<void>;
}

/** One kind of check: a file folder or the reclaimed rows. */
interface Pass {
  /** Up to `max` checks now; how many were done. */
  runNow(max: number): number;
  /** One slice in the background. */
  runSlice(): Promise<void>;
  finished(): boolean;
  close(): void;
}

export function recoverBlobStore(
  store: AssetsStore,
  blobs: BlobStore,
  options: { cleanStop?: boolean; log?: (line: string) => void } = {},
): BlobRecovery {
  const log = options.log ?? ((line: string) => console.warn(line));
  const counts: RecoveryCounts = { files: 0, reclaimed: 0, blobs: 0, thumbs: 0, libraries: 0 };
  blobs.clearTemp();

  const liveBlob = (name: string): boolean => {
    const row = store.bySha(name.slice(0, 64));
    return row !== null && row.reclaimed_at === null && row.sha256 + row.ext === name;
  };
  const liveSha = (name: string): boolean => {
    const row = store.bySha(name.slice(0, 64));
    return row !== null && row.reclaimed_at === null;
  };
  const passes: Pass[] = [
    folderPass(blobs.blobsDir, (name) => {
      if (name === '.tmp') return;
      counts.files++;
      if (!liveBlob(name) && blobs.remove(join(blobs.blobsDir, name))) counts.blobs++;
    }),
    folderPass(blobs.thumbsDir, (name) => {
      counts.files++;
      if (!liveSha(name) && blobs.remove(join(blobs.thumbsDir, name))) counts.thumbs++;
    }),
    reclaimedPass(store, (ids) => {
      counts.reclaimed += ids.length;
      counts.libraries += clearReclaimedLibrary(store, blobs, ids);
    }),
  ];

  let budget = UP_FRONT;
  for (const pass of passes) {
    budget -= pass.runNow(budget);
    if (budget <= 0) break;
  }
  let settled = passes.every((p) => p.finished());
  let stopped = false;
  const report = () => {
    if (counts.blobs > 0) log(`assets: removed ${counts.blobs} blob(s) left without a row by an earlier crash`);
  };
  let done: Promise<void> = Promise.resolve();
  if (settled) {
    report();
  } else if (options.cleanStop) {
    for (const pass of passes) pass.close();
    settled = true;
    report();
  } else {
    log('assets: the last run did not stop cleanly; checking the rest of the blob store in the background');
    done = (async () => {
      try {
        for (const pass of passes) {
          while (!stopped && !pass.finished()) {
            await pass.runSlice();
            await new Promise((resolve) => setImmediate(resolve));
          }
        }
        settled = !stopped;
        if (settled) {
          report();
          log(
            `assets: blob store recovery finished: ${counts.files} file(s) and ${counts.reclaimed} reclaimed row(s) checked; ` +
              `removed ${counts.blobs} blob(s), ${counts.thumbs} thumbnail(s), ${counts.libraries} library file(s)`,
          );
        }
      } catch (err) {
        // Left unsettled: no clean-stop marker, so the next start checks again.
        log(`assets: blob store recovery stopped: ${(err as Error).message}`);
      } finally {
        for (const pass of passes) pass.close();
      }
    })();
  }

  return {
    settled: () => settled,
    done,
    counts: () => ({ ...counts }),
    async stop() {
      stopped = true;
      await done;
    },
  };
}

/**
 * A reclaimed asset's library files are leftovers of a reclaim a crash cut
 * short (reclaim.ts removes them right after marking the row): they go and
 * the paths are cleared. `ids` are rows the caller read as reclaimed in this
 * same synchronous turn. Returns how many files were removed.
 */
export function clearReclaimedLibrary(store: AssetsStore, blobs: BlobStore, ids: readonly string[]): number {
  if (ids.length === 0) return 0;
  let removed = 0;
  const files = store.libraryFiles(ids);
  if (files.length === 0) return 0;
  for (const path of files) if (blobs.remove(path)) removed++;
  store.clearLibraryPaths(ids);
  return removed;
}

/** Every entry of a folder, read in batches from one open directory handle. */
function folderPass(dir: string, check: (name: string) => void): Pass {
  let handle: Dir | null = opendirSync(dir, { bufferSize: SLICE });
  const close = () => {
    if (handle === null) return;
    const h = handle;
    handle = null;
    h.close().catch(() => {});
  };
  return {
    runNow(max) {
      let n = 0;
      while (handle !== null && n < max) {
        const entry = handle.readSync();
        if (entry === null) {
          close();
        } else {
          check(entry.name);
          n++;
        }
      }
      return n;
    },
    async runSlice() {
      for (let n = 0; handle !== null && n < SLICE; n++) {
        const entry = await handle.read();
        // Checked in the turn the entry arrives: the lookup and the unlink are one synchronous step.
        if (entry === null) close();
        else check(entry.name);
      }
    },
    finished: () => handle === null,
    close,
  };
}

/** Reclaimed rows, a page at a time in (reclaimed_at, rowid) order; each page is checked in the turn it is read. */
function reclaimedPass(store: AssetsStore, check: (ids: string[]) => void): Pass {
  let after: ReclaimedCursor | null = null;
  let finished = false;
  const step = (max: number): number => {
    const page = store.reclaimedPage(after, Math.min(max, SLICE));
    after = page.after;
    if (page.ids.length === 0) finished = true;
    else check(page.ids);
    return page.ids.length;
  };
  return {
    runNow(max) {
      let n = 0;
      while (!finished && n < max) n += step(max - n);
      return n;
    },
    async runSlice() {
      if (!finished) step(SLICE);
    },
    finished: () => finished,
    close() {
      finished = true;
    },
  };
}
