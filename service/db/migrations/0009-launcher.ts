import type { Migration } from '../migrate';

/**
 * Launcher credentials (docs/api.md "The launcher credential"): the SHA-256 of each credential
 * `backlot launcher-token` printed, never the credential. A table of their
 * own, apart from studio tokens, so neither kind can be looked up as the
 * other. Looked up by hash (the primary key) on every check; revoked rows
 * stay, marked, like revoked studio tokens.
 */
export const m0009Launcher: Migration = {
  version: 9,
  name: 'launcher',
  up(db) {
    db.exec(`
      CREATE TABLE launcher_credentials (
        hash BLOB PRIMARY KEY,
        created_at TEXT NOT NULL,
        revoked_at TEXT
      ) STRICT, WITHOUT ROWID;
    `);
  },
};
