import type { Migration } from '../migrate';

/**
 * Assets held by running exports (docs/api.md "Export `POST /timeline/{id}:export`"): ffmpeg reads them
 * until it exits, so they must not be reclaimed meanwhile, even when the
 * sequence is deleted or changed during its export. One row per (job, asset),
 * written when the export starts and deleted when it ends; a service start
 * deletes them all (no export outlives its process). Reclaim reads it as a
 * reference source.
 */
export const m0010Exports: Migration = {
  version: 10,
  name: 'exports',
  up(db) {
    db.exec(`
      CREATE TABLE export_assets (
        job_id TEXT NOT NULL,
        asset_id TEXT NOT NULL,
        PRIMARY KEY (job_id, asset_id)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX export_assets_by_asset ON export_assets(asset_id);
    `);
  },
};
