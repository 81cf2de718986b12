import { isCapability, isLauncherCredential } from './core/auth';
import { ApiError } from './core/errors';
import { ensureDir } from './core/files';
import { STUDIO_ID_PATTERN } from './core/origin';

export { STUDIO_ID_PATTERN };
import { openDatabase } from './db/open';
import { studioDirs } from './data-dir';
import { createLauncherCredentials, createStudiosStore } from './studios';
import { declareIndex } from './records';
import { createLauncherStore, createLoginCode, loginUrl, readServerInfo, type ServerInfo } from './launcher';

/** The server running on a data dir (its server file, and its process alive), or null. */
export function runningServer(dataDir: string): ServerInfo | null {
  return readServerInfo(dataDir);
}

/**
 * What the CLI does to a data dir, while the server may be running on it:
 * register studios, set quotas, issue and revoke tokens and launcher
 * credentials. SQLite (WAL, busy
 * timeout) serialises it with the server; the server reads these tables on
 * every request, so it sees the change on the next one.
 */
export function openAdmin(dataDir: string) {
  const db = openDatabase(dataDir);
  const studios = createStudiosStore(db);
  const launcher = createLauncherCredentials(db);

  return {
    addStudio(input: { id: string; name?: string; quotaRecords?: number; quotaKvBytes?: number }) {
      if (!STUDIO_ID_PATTERN.test(input.id)) {
        throw ApiError.badRequest(`The studio id "${input.id}" must match ${STUDIO_ID_PATTERN.source}.`);
      }
      const studio = studios.add({ ...input, name: input.name ?? input.id });
      const dirs = studioDirs(dataDir, studio.id);
      ensureDir(dirs.stage_dir);
      ensureDir(dirs.data_dir);
      return { id: studio.id, name: studio.name, ...dirs };
    },

    setStudio(id: string, quotas: { quotaRecords?: number; quotaKvBytes?: number }) {
      const s = studios.setQuotas(id, quotas);
      return { id: s.id, name: s.name, quota_records: s.quota_records, quota_kv_bytes: s.quota_kv_bytes };
    },

    createToken(studioId: string, capabilities: string[]): string {
      const unknown = capabilities.filter((c) => !isCapability(c));
      if (unknown.length > 0) throw ApiError.badRequest(`Unknown capabilities: ${unknown.join(', ')}.`);
      return studios.createToken(studioId, capabilities);
    },

    /** Declares an index on a record field (docs/api.md "Declared indexes"); a running server uses it from its next query. */
    addIndex(input: { studioId: string; collection: string; field: string }) {
      return declareIndex(db, input);
    },

    /** A new launcher credential, returned once; only its hash is stored. `command`: one a CLI command makes for itself. */
    createLauncherCredential(kind: 'cli' | 'command' = 'cli'): string {
      return launcher.create(kind);
    },

    /** The live launcher credentials (id, kind, created, last used; never the credential). */
    listLauncherCredentials() {
      return launcher.list();
    },

    /** Revokes every live launcher credential (browser sign-ins included); a running server ends their open streams. */
    revokeAllLauncherCredentials(): number {
      return launcher.revokeAll();
    },

    /** A one-time login URL for the running server, or null when none runs. */
    loginUrl(): string | null {
      const info = readServerInfo(dataDir);
      return info ? loginUrl(info.port, createLoginCode(createLauncherStore(db))) : null;
    },

    /** Revokes a studio token or a launcher credential (told apart by their prefixes). */
    revokeToken(token: string): boolean {
      return isLauncherCredential(token) ? launcher.revoke(token) : studios.revokeToken(token);
    },

    close() {
      db.close();
    },
  };
}
