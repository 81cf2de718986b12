import { randomBytes } from 'node:crypto';
import type { Db } from '../db/open';
import { generateLauncherCredential, hashToken, isLauncherCredential } from '../core/auth';
import { nowIso } from '../core/time';

/**
 * Launcher credentials (table `launcher_credentials`, migrations 0009 and
 * 0012; docs/security.md "The launcher credential"): made by `backlot
 * launcher-token` (`cli`), by a sign-in through the login URL (`browser`) and
 * by a CLI command for itself (`command`); revoked one by one (`backlot token
 * revoke`) or all at once (`backlot launcher-token --revoke-all`).
 *
 * Nothing is cached: every check reads the row, so a revocation from the CLI
 * applies on the very next one. A `browser` credential unused for
 * BROWSER_IDLE_MS opens nothing any more; its use is written at most once per
 * TOUCH_EVERY_MS (a page makes many calls a minute; one write a minute is
 * plenty to measure 30 days).
 */
export const LAUNCHER_SQL = {
  resolve: 'SELECT hash, id, kind, created_at, last_used_at FROM launcher_credentials WHERE hash = ? AND revoked_at IS NULL',
} as const;

export type CredentialKind = 'browser' | 'cli' | 'command';

/** A browser sign-in unused this long has expired. */
export const BROWSER_IDLE_MS = 30 * 24 * 60 * 60 * 1000;
/** How stale `last_used_at` may get before a use writes it again. */
export const TOUCH_EVERY_MS = 60 * 1000;

/** One row of `launcher-token --list`: never the credential nor its hash. */
export interface CredentialListing {
  id: string;
  kind: CredentialKind;
  created_at: string;
  last_used_at: string | null;
  /** When a browser sign-in expires unless used before; null for the others (they last until revoked). */
  expires_at: string | null;
}

interface Row {
  hash: Buffer;
  id: string;
  kind: CredentialKind;
  created_at: string;
  last_used_at: string | null;
}

export function createLauncherCredentials(db: Db, clock: () => number = Date.now) {
  const stmts = {
    insert: db.prepare('INSERT INTO launcher_credentials (hash, id, kind, created_at, last_used_at) VALUES (?, ?, ?, ?, ?)'),
    revoke: db.prepare('UPDATE launcher_credentials SET revoked_at = ? WHERE hash = ? AND revoked_at IS NULL'),
    revokeAll: db.prepare('UPDATE launcher_credentials SET revoked_at = ? WHERE revoked_at IS NULL'),
    resolve: db.prepare<[Buffer], Row>(LAUNCHER_SQL.resolve),
    touch: db.prepare('UPDATE launcher_credentials SET last_used_at = ? WHERE hash = ?'),
    byId: db.prepare<[string], Row>('SELECT hash, id, kind, created_at, last_used_at FROM launcher_credentials WHERE id = ? AND revoked_at IS NULL'),
    live: db.prepare<[], Row>(
      'SELECT hash, id, kind, created_at, last_used_at FROM launcher_credentials WHERE revoked_at IS NULL ORDER BY created_at, id',
    ),
  };
  const lastUse = (row: Row) => Date.parse(row.last_used_at ?? row.created_at);
  const expired = (row: Row, now: number) => row.kind === 'browser' && now - lastUse(row) >= BROWSER_IDLE_MS;
  const live = (hash: Buffer): Row | null => {
    const row = stmts.resolve.get(hash);
    return row && !expired(row, clock()) ? row : null;
  };

  return {
    /** A new credential, returned once; only its hash is stored. */
    create(kind: CredentialKind = 'cli'): string {
      const credential = generateLauncherCredential();
      const at = new Date(clock()).toISOString();
      stmts.insert.run(hashToken(credential), randomBytes(6).toString('hex'), kind, at, at);
      return credential;
    },

    /** True when a live credential was revoked; false when it was unknown or already revoked. */
    revoke(credential: string): boolean {
      if (!isLauncherCredential(credential)) return false;
      return stmts.revoke.run(nowIso(), hashToken(credential)).changes > 0;
    },

    /** Revokes every credential still live (browser sign-ins, `launcher-token` ones, a command's own); returns how many. */
    revokeAll(): number {
      return stmts.revokeAll.run(nowIso()).changes;
    },

    /** The stored hash of a live credential, or null (unknown, revoked, or a browser sign-in unused too long). Writes nothing. */
    resolve(hash: Buffer): Buffer | null {
      return live(hash)?.hash ?? null;
    },

    /**
     * As resolve, for a request the credential opens: records the use when
     * the last one recorded is older than TOUCH_EVERY_MS.
     */
    use(hash: Buffer): { hash: Buffer; id: string } | null {
      const row = live(hash);
      if (!row) return null;
      const now = clock();
      if (now - lastUse(row) >= TOUCH_EVERY_MS) stmts.touch.run(new Date(now).toISOString(), row.hash);
      return { hash: row.hash, id: row.id };
    },

    /** The public id (as `--list` shows it) of a live credential, or null. */
    idOf(hash: Buffer): string | null {
      return live(hash)?.id ?? null;
    },

    /** Whether the credential with this public id is live (a media URL minted for it still opens). */
    liveId(id: string): boolean {
      const row = stmts.byId.get(id);
      return row !== undefined && !expired(row, clock());
    },

    /** The live credentials, oldest first. */
    list(): CredentialListing[] {
      const now = clock();
      return stmts.live
        .all()
        .filter((row) => !expired(row, now))
        .map((row) => ({
          id: row.id,
          kind: row.kind,
          created_at: row.created_at,
          last_used_at: row.last_used_at,
          expires_at: row.kind === 'browser' ? new Date(lastUse(row) + BROWSER_IDLE_MS).toISOString() : null,
        }));
    },
  };
}

export type LauncherCredentials = ReturnType<typeof createLauncherCredentials>;
