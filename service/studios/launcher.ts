import type { Db } from '../db/open';
import { generateLauncherCredential, hashToken, isLauncherCredential } from '../core/auth';
import { nowIso } from '../core/time';

/**
 * Launcher credentials (decisions §10; table `launcher_credentials`,
 * migration 0009): created by `backlot launcher-token` (and later by the
 * desktop shell), revoked by `backlot token revoke`, resolved on every check.
 * Nothing is cached: the checks are rare (a channel connect, a launcher
 * call), so a revocation from the CLI applies on the very next one.
 */
export const LAUNCHER_SQL = {
  resolve: 'SELECT hash FROM launcher_credentials WHERE hash = ? AND revoked_at IS NULL',
} as const;

export function createLauncherCredentials(db: Db) {
  const stmts = {
    insert: db.prepare('INSERT INTO launcher_credentials (hash, created_at) VALUES (?, ?)'),
    revoke: db.prepare('UPDATE launcher_credentials SET revoked_at = ? WHERE hash = ? AND revoked_at IS NULL'),
    resolve: db.prepare<[Buffer], Buffer>(LAUNCHER_SQL.resolve).pluck(),
  };

  return {
    /** A new credential, returned once; only its hash is stored. */
    create(): string {
      const credential = generateLauncherCredential();
      stmts.insert.run(hashToken(credential), nowIso());
      return credential;
    },

    /** True when a live credential was revoked; false when it was unknown or already revoked. */
    revoke(credential: string): boolean {
      if (!isLauncherCredential(credential)) return false;
      return stmts.revoke.run(nowIso(), hashToken(credential)).changes > 0;
    },

    /** The stored hash of a live credential (for `authenticateLauncher`), or null. */
    resolve(hash: Buffer): Buffer | null {
      return stmts.resolve.get(hash) ?? null;
    },
  };
}

export type LauncherCredentials = ReturnType<typeof createLauncherCredentials>;
