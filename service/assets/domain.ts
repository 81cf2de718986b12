import type { Db } from '../db/open';
import type { AdoptRoot } from './adopt-path';
import { createBlobStore, type BlobStore } from './blobs';
import { createIngest, type Ingest } from './ingest';
import { createHandover, type Handover } from './handover';
import type { ReadRunner } from '../db/read-pool';
import { reclaimableReads, usageReads } from './reads';
import { createReclaimer, selectReclaimable, type Reclaimer } from './reclaim';
import { recoverBlobStore, type BlobRecovery } from './recover';
import { createAssetsStore, type AssetsStore, type AssetUsage } from './store';
import { createThumbnailer, type Thumbnailer } from './thumbs';

/** Everything the assets routes use, built once per service; the blob store is recovered first (recover.ts). */
export interface AssetsDomain {
  store: AssetsStore;
  blobs: BlobStore;
  /** Start-up recovery; what is left of it after listening runs in the background. */
  recovery: BlobRecovery;
  /**
   * Nothing of this run needs the next start's recovery: the recovery settled
   * and no file step failed after its row write (blobs.leftovers). The service's
   * close() writes the clean-stop marker only then.
   */
  stopsClean(): boolean;
  ingest: Ingest;
  /** Read access handed to another studio by an accepted handoff. */
  handover: Handover;
  thumbs: Thumbnailer;
  reclaimer: Reclaimer;
  /** What the stored assets take (on a read worker when there is a pool). */
  usage(): Promise<AssetUsage>;
  uploadLimit: number;
  diskHeadroom: number;
  roots(studioId: string): AdoptRoot[];
}

export interface AssetsOptions {
  dataDir: string;
  uploadLimit: number;
  diskHeadroom: number;
  /** Signs reclaim previews (the data dir's secret). */
  secret: Buffer;
  /** A studio's stage and data folders (service/data-dir.ts), the only roots adopt takes from. */
  studioDirs(studioId: string): { stage_dir: string; data_dir: string };
  /** Where reclaim previews read (the read pool; see reads.ts). Default: this store, on the main thread. */
  reads?: ReadRunner;
  /** The previous run stopped cleanly (service/clean-stop.ts): recovery past its first part is skipped. */
  cleanStop?: boolean;
  /** The service's media scope: video and sound thumbnails' ffmpeg runs end at its close. */
  media?: { signal: AbortSignal };
}

export function createAssets(db: Db, options: AssetsOptions): AssetsDomain {
  const store = createAssetsStore(db);
  const blobs = createBlobStore(options.dataDir);
  const recovery = recoverBlobStore(store, blobs, { cleanStop: options.cleanStop ?? false });
  return {
    store,
    blobs,
    recovery,
    stopsClean: () => recovery.settled() && blobs.leftovers() === 0,
    ingest: createIngest(store, blobs),
    handover: createHandover(store, blobs),
    thumbs: createThumbnailer(
      blobs,
      (sha256) => {
        const row = store.bySha(sha256);
        return row !== null && row.reclaimed_at === null;
      },
      { signal: options.media?.signal, onDuration: (sha256, seconds) => store.fillDuration(sha256, seconds) },
    ),
    reclaimer: createReclaimer(
      store,
      blobs,
      options.secret,
      options.reads ? reclaimableReads(options.reads) : async (studioId, ids) => selectReclaimable(store, studioId, ids).selection,
    ),
    usage: options.reads ? usageReads(options.reads) : async () => store.usage(),
    uploadLimit: options.uploadLimit,
    diskHeadroom: options.diskHeadroom,
    roots(studioId) {
      const dirs = options.studioDirs(studioId);
      return [
        { kind: 'stage', dir: dirs.stage_dir },
        { kind: 'data', dir: dirs.data_dir },
      ];
    },
  };
}
