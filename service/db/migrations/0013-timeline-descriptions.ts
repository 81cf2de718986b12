import type { Migration } from '../migrate';

/**
 * What each write of a sequence changed, in words ("Moved Test card to
 * 00:00:04:25"), as its writer said it (docs/api.md §Timelines,
 * "Descriptions"): `timelines.description` belongs to the current revision
 * and moves with it to `timeline_revisions` when a later write replaces it.
 * Null for writes made before this migration and for writers that give none.
 */
export const m0013TimelineDescriptions: Migration = {
  version: 13,
  name: 'timeline_descriptions',
  up(db) {
    db.exec(`
      ALTER TABLE timelines ADD COLUMN description TEXT;
      ALTER TABLE timeline_revisions ADD COLUMN description TEXT;
    `);
  },
};
