import type { Db } from '../db/open';
import { readClient, type ReadRunner } from '../db/read-pool';
import { selectReclaimable, type Selection } from './reclaim';
import { createAssetsStore, type AssetReferenceSource, type AssetUsage } from './store';

/**
 * The assets reads that run on the read workers (service/db/read-pool.ts): the
 * reclaim preview's selection, which checks every candidate against every
 * kind of reference. `sources` must be the kinds the main store has (app.ts
 * registers the same ones), or a preview would not match its reclaim.
 */

export function assetReadOps(db: Db, sources: readonly AssetReferenceSource[]) {
  const store = createAssetsStore(db);
  for (const source of sources) store.addReferenceSource(source);
  return {
    'assets.reclaimable': (studioId: string | null, assetIds: string[] | undefined): Selection =>
      selectReclaimable(store, studioId, assetIds).selection,
    'assets.usage': (): AssetUsage => store.usage(),
  };
}

export type AssetReadOps = ReturnType<typeof assetReadOps>;

/** The preview's selection through the pool; the caller's studio is the lane (the launcher's: '', no studio's id). */
export function reclaimableReads(runner: ReadRunner) {
  const call = readClient<AssetReadOps>(runner);
  return (studioId: string | null, assetIds: string[] | undefined): Promise<Selection> =>
    call(studioId ?? '', 'assets.reclaimable', studioId, assetIds);
}

/** What the stored assets take, through the pool, in the launcher's lane. */
export function usageReads(runner: ReadRunner) {
  const call = readClient<AssetReadOps>(runner);
  return (): Promise<AssetUsage> => call('', 'assets.usage');
}
