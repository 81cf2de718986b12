import type { Db } from './db/open';
import type { ReadOps } from './db/read-pool';
import { assetReadOps, type AssetReferenceSource } from './assets';
import { galleryReadOps, galleryReferenceSources } from './gallery';
import { recordReadOps } from './records';
import { timelineReferenceSources } from './timeline';

/**
 * Every domain's read operations on one connection: a read worker's
 * (read-worker.ts) or, with `--read-workers 0`, the main one. The kinds of
 * asset reference are the ones app.ts registers on the main store, plus any
 * an embedder gives (`extraSources`, main thread only).
 */
export function readOps(db: Db, extraSources: readonly AssetReferenceSource[] = []): ReadOps {
  return {
    ...recordReadOps(db),
    ...galleryReadOps(db),
    ...assetReadOps(db, [...galleryReferenceSources(db), ...timelineReferenceSources(), ...extraSources]),
  };
}
