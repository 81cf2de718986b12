import type { Migration } from '../migrate';

/**
 * Jobs: task jobs a studio reports and the lifecycle jobs the service runs
 * (install, build, download, update, export, uninstall). Log lines are not
 * here: they live in one append-only file per job (service/jobs/logs.ts).
 * No foreign key to studios: an install job exists before its studio is
 * registered, and job history outlives a purged studio.
 */
export const m0006Jobs: Migration = {
  version: 6,
  name: 'jobs',
  up(db) {
    db.exec(`
      CREATE TABLE jobs (
        id TEXT PRIMARY KEY,
        studio_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('task', 'install', 'build', 'download', 'update', 'export', 'uninstall')),
        title TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
        progress_num INTEGER NOT NULL,
        progress_den INTEGER NOT NULL,
        last_error TEXT,
        cancel_requested_at TEXT,
        data TEXT NOT NULL,
        timeline_id TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        finished_at TEXT
      ) STRICT;
      CREATE INDEX jobs_studio ON jobs(studio_id, id);
      CREATE INDEX jobs_timeline ON jobs(timeline_id, id) WHERE timeline_id IS NOT NULL;
      CREATE INDEX jobs_unfinished ON jobs(state) WHERE state IN ('queued', 'running');
    `);
  },
};
