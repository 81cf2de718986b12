import type { Db } from '../db/open';
import { ApiError } from '../core/errors';
import { nowIso } from '../core/time';
import type { Manifest } from './manifest';

/**
 * All SQL of the launcher: installed studios (table `installed_studios`,
 * migration 0011) and one-time login codes. Each change is one statement or
 * one immediate transaction.
 */

export const STUDIO_STATES = ['installing', 'installed', 'starting', 'running', 'stopping', 'failed', 'uninstalling'] as const;
export type StudioState = (typeof STUDIO_STATES)[number];

/** What a verified download was when it was verified (a start refuses a changed one: 409 `not_fetched`). */
export interface VerifiedDownload {
  to: string;
  sha256: string;
  size: number;
  mtime_ms: number;
}

export interface InstalledRow {
  id: string;
  name: string;
  version: string;
  manifest: string;
  source: string;
  linked: number;
  app_dir: string;
  state: StudioState;
  installed: number;
  downloads: string;
  port: number | null;
  token_hash: Buffer | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

export interface InstalledStudio extends Omit<InstalledRow, 'manifest' | 'downloads' | 'linked' | 'installed'> {
  manifest: Manifest;
  downloads: VerifiedDownload[];
  linked: boolean;
  installed: boolean;
}

const columns =
  'id, name, version, manifest, source, linked, app_dir, state, installed, downloads, port, token_hash, last_error, created_at, updated_at';

export function createLauncherStore(db: Db) {
  const stmts = {
    get: db.prepare<[string], InstalledRow>(`SELECT ${columns} FROM installed_studios WHERE id = ?`),
    page: db.prepare<[string, number], InstalledRow>(`SELECT ${columns} FROM installed_studios WHERE id > ? ORDER BY id LIMIT ?`),
    all: db.prepare<[], InstalledRow>(`SELECT ${columns} FROM installed_studios ORDER BY id`),
    upsert: db.prepare(
      `INSERT INTO installed_studios (${columns}) VALUES (@id, @name, @version, @manifest, @source, @linked, @app_dir,
        @state, @installed, @downloads, @port, @token_hash, @last_error, @created_at, @updated_at)
       ON CONFLICT (id) DO UPDATE SET name = excluded.name, version = excluded.version, manifest = excluded.manifest,
        source = excluded.source, linked = excluded.linked, app_dir = excluded.app_dir, state = excluded.state,
        installed = excluded.installed, downloads = excluded.downloads, port = excluded.port,
        token_hash = excluded.token_hash, last_error = excluded.last_error, updated_at = excluded.updated_at`,
    ),
    remove: db.prepare('DELETE FROM installed_studios WHERE id = ?'),
    insertCode: db.prepare('INSERT INTO login_codes (hash, expires_at) VALUES (?, ?)'),
    spendCode: db.prepare('UPDATE login_codes SET used_at = ? WHERE hash = ? AND used_at IS NULL AND expires_at > ?'),
    pruneCodes: db.prepare('DELETE FROM login_codes WHERE expires_at < ?'),
  };

  const decode = (row: InstalledRow): InstalledStudio => ({
    ...row,
    manifest: JSON.parse(row.manifest) as Manifest,
    downloads: JSON.parse(row.downloads) as VerifiedDownload[],
    linked: row.linked === 1,
    installed: row.installed === 1,
  });
  const encode = (s: InstalledStudio): InstalledRow => ({
    ...s,
    manifest: JSON.stringify(s.manifest),
    downloads: JSON.stringify(s.downloads),
    linked: s.linked ? 1 : 0,
    installed: s.installed ? 1 : 0,
  });

  const change = db.transaction((id: string, decide: (s: InstalledStudio) => InstalledStudio): InstalledStudio => {
    const row = stmts.get.get(id);
    if (!row) throw ApiError.notFound(`The studio "${id}"`);
    const next = decide(decode(row));
    stmts.upsert.run(encode({ ...next, updated_at: nowIso() }));
    return decode(stmts.get.get(id)!);
  });

  return {
    get(id: string): InstalledStudio | null {
      const row = stmts.get.get(id);
      return row ? decode(row) : null;
    },
    /** The installed studio, or 404. */
    require(id: string): InstalledStudio {
      const s = this.get(id);
      if (!s) throw ApiError.notFound(`The studio "${id}"`);
      return s;
    },
    /** A page's studios by id, read one at a time (core/pagination.ts cuts the page). */
    *page(after: string | null, limit: number): Generator<InstalledStudio> {
      for (const row of stmts.page.iterate(after ?? '', limit)) yield decode(row);
    },
    all(): InstalledStudio[] {
      return stmts.all.all().map(decode);
    },
    put(s: InstalledStudio): InstalledStudio {
      stmts.upsert.run(encode({ ...s, updated_at: nowIso() }));
      return decode(stmts.get.get(s.id)!);
    },
    /** Reads, decides and writes one studio in an immediate transaction. */
    change(id: string, decide: (s: InstalledStudio) => InstalledStudio): InstalledStudio {
      return change.immediate(id, decide);
    },
    remove(id: string): void {
      stmts.remove.run(id);
    },
    transaction<T>(fn: () => T): T {
      return db.transaction(fn).immediate();
    },

    addLoginCode(hash: Buffer, expiresAt: string): void {
      stmts.pruneCodes.run(nowIso());
      stmts.insertCode.run(hash, expiresAt);
    },
    /** True when the code was live and is now spent (once, before its expiry). */
    spendLoginCode(hash: Buffer): boolean {
      const now = nowIso();
      return stmts.spendCode.run(now, hash, now).changes > 0;
    },
  };
}

export type LauncherStore = ReturnType<typeof createLauncherStore>;
