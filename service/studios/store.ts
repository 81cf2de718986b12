import type { Db } from '../db/open';
import { ApiError } from '../core/errors';
import { generateToken, hashToken, type TokenGrant } from '../core/auth';
import { nowIso } from '../core/time';

/**
 * The studio registry: studios, their quotas and usage, and their tokens.
 * Used by the CLI (add, set, tokens) and by the service (token resolution,
 * quota checks). Nothing here is cached, so CLI changes are seen at once.
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
    resolveToken: db.prepare<[Buffer], { hash: Buffer; studio_id: string; capabilities: string }>(
      'SELECT hash, studio_id, capabilities FROM tokens WHERE hash = ? AND revoked_at IS NULL',
    ),
    usage: db.prepare<[string], { quota_records: number; quota_kv_bytes: number; records_used: number; kv_bytes_used: number }>(
      'SELECT quota_records, quota_kv_bytes, records_used, kv_bytes_used FROM studios WHERE id = ?',
    ),
    secret: db.prepare<[], { value: Buffer }>("SELECT value FROM meta WHERE key = 'cursor_secret'"),
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
      return stmts.revokeToken.run(nowIso(), hashToken(token)).changes > 0;
    },

    resolveToken(hash: Buffer): TokenGrant | null {
      const row = stmts.resolveToken.get(hash);
      if (!row) return null;
      return { hash: row.hash, studioId: row.studio_id, capabilities: JSON.parse(row.capabilities) as string[] };
    },

    /**
     * Throws 429 `quota_exceeded` when growing the studio's usage by `delta`
     * would pass its quota. Call inside the write's transaction, before the
     * write: the counters are exact there (triggers keep them) and no other
     * writer can interleave. A write that shrinks usage is always allowed.
     */
    checkQuota(studioId: string, quota: QuotaName, delta: number): void {
      if (delta <= 0) return;
      const row = stmts.usage.get(studioId);
      if (!row) throw ApiError.notFound(`The studio "${studioId}"`);
      const [limit, used] =
        quota === 'records' ? [row.quota_records, row.records_used] : [row.quota_kv_bytes, row.kv_bytes_used];
      if (used + delta > limit) throw ApiError.quotaExceeded(quota, limit, used);
    },

    cursorSecret(): Buffer {
      return stmts.secret.get()!.value;
    },
  };
}

export type StudiosStore = ReturnType<typeof createStudiosStore>;
