import type { Migration } from '../migrate';

/**
 * Handoffs ("Send to", docs/api.md "Handoffs"): one studio offers assets (and
 * optionally an item and a session) to another; the user approves in the
 * launcher; the recipient accepts.
 *
 * - `asset_ids` is the JSON array as offered; `asset_set` is the same ids
 *   sorted and joined, so "the same asset set in any order" is one equality.
 * - `approved_at` is set once, when the user approves (or a standing rule
 *   does at creation): the recipient sees a handoff from then on, whatever
 *   its state becomes later.
 * - `handoff_rules`: the pairs the user allowed always.
 */
export const m0015Handoffs: Migration = {
  version: 15,
  name: 'handoffs',
  up(db) {
    db.exec(`
      CREATE TABLE handoffs (
        id TEXT PRIMARY KEY,
        from_studio TEXT NOT NULL,
        to_studio TEXT NOT NULL,
        asset_ids TEXT NOT NULL,
        asset_set TEXT NOT NULL,
        item_id TEXT,
        session_id TEXT,
        note TEXT,
        state TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'accepted', 'declined', 'withdrawn', 'expired')),
        approved_at TEXT,
        accepted_session_id TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX handoffs_sent ON handoffs (from_studio, created_at, id);
      CREATE INDEX handoffs_received ON handoffs (to_studio, created_at, id) WHERE approved_at IS NOT NULL;
      CREATE INDEX handoffs_all ON handoffs (created_at, id);
      CREATE INDEX handoffs_pending ON handoffs (created_at) WHERE state = 'pending';
      CREATE INDEX handoffs_item ON handoffs (item_id, created_at, id) WHERE item_id IS NOT NULL;

      CREATE TABLE handoff_rules (
        from_studio TEXT NOT NULL,
        to_studio TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (from_studio, to_studio)
      ) STRICT, WITHOUT ROWID;
    `);
  },
};
