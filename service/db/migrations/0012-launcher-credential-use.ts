import type { Migration } from '../migrate';

/**
 * What `backlot launcher-token --list` shows and what lets a browser sign-in
 * expire (docs/security.md "The launcher credential"):
 *
 * - `id`: a short public name for a credential (12 hex digits), never the
 *   credential or its hash, so a list can be shown and one can be named.
 * - `kind`: `browser` (a sign-in through the one-time login URL, the desktop
 *   shell's window included), `cli` (`backlot launcher-token`) or `command`
 *   (made by one CLI command for itself and revoked after it).
 * - `last_used_at`: when the credential last opened a request, written at most
 *   once a minute per credential (not on every request). A `browser` one
 *   unused for 30 days no longer opens anything.
 *
 * Rows made before this migration were all made by the CLI: `cli`, last used
 * when they were made.
 */
export const m0012LauncherCredentialUse: Migration = {
  version: 12,
  name: 'launcher_credential_use',
  up(db) {
    db.exec(`
      ALTER TABLE launcher_credentials ADD COLUMN id TEXT;
      ALTER TABLE launcher_credentials ADD COLUMN kind TEXT NOT NULL DEFAULT 'cli' CHECK (kind IN ('browser', 'cli', 'command'));
      ALTER TABLE launcher_credentials ADD COLUMN last_used_at TEXT;
      UPDATE launcher_credentials SET id = lower(hex(randomblob(6))), last_used_at = created_at;
      CREATE UNIQUE INDEX launcher_credentials_id ON launcher_credentials (id);
    `);
  },
};
