import type { Db } from '../db/open';
import { ApiError } from '../core/errors';
import { generateToken, hashToken, type TokenGrant } from '../core/auth';
import { nowIso } from '../core/time';

/**
 * The studio registry: studios, their quotas and usage, and their tokens.
 * Used by the CLI (add, set, tokens) and by the service (token resolution,
 * quota charges). Quotas are read in every charge and token grants are
 * re-read after any other connection commits, so CLI changes apply on the
 * server's next request.
 */

export const DEFAULT_QUOTA_RECORDS = 100_000;
export const DEFAULT_QUOTA_KV_BYTES = 100 * 1024 * 1024;

export interface Studio {
  id: string;
  name: string;
  quota_records: number;
  quota_kv_bytes: number;
  records_used: number;
  kv_bytes_used: number;
  created_at: string;
}

export type QuotaName = 'records' | 'kv_bytes';

/** Live grants kept in memory; far more than a desktop ever has. */
const TOKEN_CACHE_SIZE = 10_000;

export function createStudiosStore(db: Db) {
  const stmts = {
    get: db.prepare<[string], Studio>('SELECT * FROM studios WHERE id = ?'),
    list: db.prepare<[], Studio>('SELECT * FROM studios ORDER BY id'),
    insert: db.prepare(
      'INSERT INTO studios (id, name, quota_records, quota_kv_bytes, created_at) VALUES (?, ?, ?, ?, ?)',
    ),
    setQuotas: db.prepare(
      `UPDATE studios SET quota_records = coalesce(?, quota_records), quota_kv_bytes = coalesce(?, quota_kv_bytes)
       WHERE id = ?`,
    ),
    insertToken: db.prepare('INSERT INTO tokens (hash, studio_id, capabilities, created_at) VALUES (?, ?, ?, ?)'),
    revokeToken: db.prepare('UPDATE tokens SET revoked_at = ? WHERE hash = ? AND revoked_at IS NULL'),
    revokeStudioTokens: db.prepare('UPDATE tokens SET revoked_at = ? WHERE studio_id = ? AND revoked_at IS NULL'),
    resolveToken: db.prepare<[Buffer], { hash: Buffer; studio_id: string; capabilities: string }>(
      'SELECT hash, studio_id, capabilities FROM tokens WHERE hash = ? AND revoked_at IS NULL',
    ),
    usage: db.prepare<[string], { quota_records: number; quota_kv_bytes: number; records_used: number; kv_bytes_used: number }>(
      'SELECT quota_records, quota_kv_bytes, records_used, kv_bytes_used FROM studios WHERE id = ?',
    ),
    // Check and charge in one statement: no row changes when the quota would be passed.
    chargeKvBytes: db.prepare(
      'UPDATE studios SET kv_bytes_used = kv_bytes_used + @delta WHERE id = @id AND (@delta <= 0 OR kv_bytes_used + @delta <= quota_kv_bytes)',
    ),
    chargeRecords: db.prepare(
      'UPDATE studios SET records_used = records_used + @delta WHERE id = @id AND (@delta <= 0 OR records_used + @delta <= quota_records)',
    ),
    dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
    secret: db.prepare<[], { value: Buffer }>("SELECT value FROM meta WHERE key = 'cursor_secret'"),
  };

  const tokenCache = { version: -1, grants: new Map<string, TokenGrant>() };
  /** Told after a revocation in this process (core/revocation.ts ends the streams of revoked tokens). */
  const revocationListeners = new Set<() => void>();
  const revoked = <T>(result: T): T => {
    for (const listener of revocationListeners) listener();
    return result;
  };

  return {
    get(id: string): Studio | null {
      return stmts.get.get(id) ?? null;
    },

    list(): Studio[] {
      return stmts.list.all();
    },

    add(input: { id: string; name: string; quotaRecords?: number; quotaKvBytes?: number }): Studio {
      return db
        .transaction(() => {
          if (stmts.get.get(input.id)) {
            throw new ApiError(409, 'id_taken', `id_taken: a studio with the id "${input.id}" already exists.`, { id: input.id });
          }
          stmts.insert.run(
            input.id,
            input.name,
            input.quotaRecords ?? DEFAULT_QUOTA_RECORDS,
            input.quotaKvBytes ?? DEFAULT_QUOTA_KV_BYTES,
            nowIso(),
          );
          return stmts.get.get(input.id)!;
        })
        .immediate();
    },

    setQuotas(id: string, quotas: { quotaRecords?: number; quotaKvBytes?: number }): Studio {
      const result = stmts.setQuotas.run(quotas.quotaRecords ?? null, quotas.quotaKvBytes ?? null, id);
      if (result.changes === 0) throw ApiError.notFound(`The studio "${id}"`);
      return stmts.get.get(id)!;
    },

    createToken(studioId: string, capabilities: readonly string[]): string {
      if (!stmts.get.get(studioId)) throw ApiError.notFound(`The studio "${studioId}"`);
      const token = generateToken();
      stmts.insertToken.run(hashToken(token), studioId, JSON.stringify([...new Set(capabilities)]), nowIso());
      return token;
    },

    /** True when a live token was revoked; false when it was unknown or already revoked. */
    revokeToken(token: string): boolean {
      tokenCache.grants.clear();
      return revoked(stmts.revokeToken.run(nowIso(), hashToken(token)).changes > 0);
    },

    /** Revokes a token by its stored hash (the launcher keeps only the hash of a runtime token it minted). */
    revokeTokenHash(hash: Buffer): boolean {
      tokenCache.grants.clear();
      return revoked(stmts.revokeToken.run(nowIso(), hash).changes > 0);
    },

    /** Revokes every live token of a studio (uninstall); returns how many. */
    revokeStudioTokens(studioId: string): number {
      tokenCache.grants.clear();
      return revoked(stmts.revokeStudioTokens.run(nowIso(), studioId).changes);
    },

    /** Calls `listener` after every revocation made through this store (this process). */
    onRevocation(listener: () => void): () => void {
      revocationListeners.add(listener);
      return () => revocationListeners.delete(listener);
    },

    /**
     * A check that says whether another connection (the CLI, another process)
     * has committed to the database since it last said so (PRAGMA
     * data_version): a token may have been revoked there.
     */
    externalChanges(): () => boolean {
      let seen = stmts.dataVersion.get()!;
      return () => {
        const now = stmts.dataVersion.get()!;
        if (now === seen) return false;
        seen = now;
        return true;
      };
    },

    /**
     * The live grant of a token hash. Grants are cached, and the cache is
     * dropped whenever another connection (the CLI) has committed to the
     * database since (PRAGMA data_version), so a revocation applies on the
     * next request without a token query on every request.
     */
    resolveToken(hash: Buffer): TokenGrant | null {
      const version = stmts.dataVersion.get()!;
      if (version !== tokenCache.version) {
        tokenCache.grants.clear();
        tokenCache.version = version;
      }
      const key = hash.toString('base64');
      const cached = tokenCache.grants.get(key);
      if (cached) return cached;
      const row = stmts.resolveToken.get(hash);
      if (!row) return null;
      const grant = { hash: row.hash, studioId: row.studio_id, capabilities: JSON.parse(row.capabilities) as string[] };
      if (tokenCache.grants.size >= TOKEN_CACHE_SIZE) tokenCache.grants.clear();
      tokenCache.grants.set(key, grant);
      return grant;
    },

    /**
     * Charges `delta` to a studio's usage (a negative delta refunds). Throws
     * 429 `quota_exceeded` when growing usage would pass the quota; a write
     * that shrinks usage always passes. Call inside the write's transaction,
     * so the charge and the write commit or roll back together.
     */
    charge(studioId: string, quota: QuotaName, delta: number): void {
      if (delta === 0) return;
      const stmt = quota === 'records' ? stmts.chargeRecords : stmts.chargeKvBytes;
      if (stmt.run({ delta, id: studioId }).changes > 0) return;
      const row = stmts.usage.get(studioId);
      if (!row) throw ApiError.notFound(`The studio "${studioId}"`);
      const [limit, used] =
        quota === 'records' ? [row.quota_records, row.records_used] : [row.quota_kv_bytes, row.kv_bytes_used];
      throw ApiError.quotaExceeded(quota, limit, used);
    },

    cursorSecret(): Buffer {
      return stmts.secret.get()!.value;
    },
  };
}

export type StudiosStore = ReturnType<typeof createStudiosStore>;
