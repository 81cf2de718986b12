import type { Migration } from '../migrate';

/**
 * The launcher (docs/api.md "Launcher").
 *
 * - `installed_studios`: one row per studio the launcher installed or linked
 *   (a studio registered with `backlot studio add` alone has none). It keeps
 *   the manifest in force, where the app lives, the state the launcher shows,
 *   and while the studio runs its port and the hash of its runtime token.
 *   `installed` is 1 once install, build and download all succeeded (a studio
 *   that failed on its first install is `failed` with `installed` 0: it cannot
 *   start, and installing it again replaces it). `downloads` holds what each
 *   verified download was when verified (size, mtime), so `:start` checks
 *   cheaply and re-hashes only what changed.
 * - `login_codes`: the SHA-256 of each one-time login code, its expiry, and
 *   when it was used. The CLI writes them (`login-url`); the server spends them.
 * - `process_groups`: every process group the service starts for a studio or
 *   a lifecycle step, recorded when it starts and forgotten when it ended. A
 *   crash leaves rows behind; the next start ends those groups before it
 *   serves (`leader_start` and `boot_id` tell a group of ours from a reused pid).
 */
export const m0011StudiosInstalled: Migration = {
  version: 11,
  name: 'studios_installed',
  up(db) {
    db.exec(`
      CREATE TABLE installed_studios (
        id TEXT PRIMARY KEY REFERENCES studios(id),
        name TEXT NOT NULL,
        version TEXT NOT NULL,
        manifest TEXT NOT NULL,
        source TEXT NOT NULL,
        linked INTEGER NOT NULL CHECK (linked IN (0, 1)),
        app_dir TEXT NOT NULL,
        state TEXT NOT NULL,
        installed INTEGER NOT NULL CHECK (installed IN (0, 1)),
        downloads TEXT NOT NULL,
        port INTEGER,
        token_hash BLOB,
        last_error TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;

      CREATE TABLE login_codes (
        hash BLOB PRIMARY KEY,
        expires_at TEXT NOT NULL,
        used_at TEXT
      ) STRICT, WITHOUT ROWID;

      CREATE TABLE process_groups (
        pgid INTEGER PRIMARY KEY,
        leader_start TEXT NOT NULL,
        boot_id TEXT NOT NULL,
        owner TEXT NOT NULL,
        started_at TEXT NOT NULL
      ) STRICT;
    `);
  },
};
