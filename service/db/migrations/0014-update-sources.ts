import type { Migration } from '../migrate';

/**
 * Where each update job took its new version from, and which added
 * capabilities the person approved for it, so that a failed or interrupted
 * update can be retried as it was asked (docs/api.md "POST
 * /launcher/jobs/{id}:retry"). Kept out of the job's `data`: a studio reads
 * its own jobs, and the folder path on the person's disk is the launcher's.
 */
export const m0014UpdateSources: Migration = {
  version: 14,
  name: 'update_sources',
  up(db) {
    db.exec(`
      CREATE TABLE update_sources (
        job_id TEXT PRIMARY KEY,
        studio_id TEXT NOT NULL,
        source TEXT NOT NULL,
        approved TEXT NOT NULL DEFAULT '[]'
      );
      CREATE INDEX update_sources_studio ON update_sources (studio_id);
    `);
  },
};
