import type { Db } from './db/open';
import type { ReadOps } from './db/read-pool';
import { assetReadOps } from './assets';
import { galleryReadOps, galleryReferenceSources } from './gallery';
import { recordReadOps } from './records';
import { timelineReferenceSources } from './timeline';
import { handoffReferenceSources } from './handoffs';

/**
 * Every domain's read operations on one connection: a read worker's
 * (read-worker.ts) or, with `--read-workers 0`, the main one. The kinds of
 * asset reference are the ones app.ts registers on the main store (an
 * embedder's own kinds exist on the main thread only: app.ts reads those
 * previews there).
 */
export function readOps(db: Db): ReadOps {
  return {
    ...recordReadOps(db),
    ...galleryReadOps(db),
    ...assetReadOps(db, [...galleryReferenceSources(db), ...timelineReferenceSources(), ...handoffReferenceSources()]),
  };
}
