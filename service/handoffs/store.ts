import type { Db } from '../db/open';
import type { AssetReferenceSource } from '../assets';

/**
 * All SQL of handoffs (docs/api.md "Handoffs"). The domain (domain.ts) runs
 * each change in one immediate transaction; this file only reads and writes
 * rows.
 */

export const HANDOFF_STATES = ['pending', 'approved', 'accepted', 'declined', 'withdrawn', 'expired'] as const;
export type HandoffState = (typeof HANDOFF_STATES)[number];

export interface HandoffRow {
  id: string;
  from_studio: string;
  to_studio: string;
  /** JSON array, in the order offered. */
  asset_ids: string;
  asset_set: string;
  item_id: string | null;
  session_id: string | null;
  note: string | null;
  state: HandoffState;
  approved_at: string | null;
  accepted_session_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface RuleRow {
  from_studio: string;
  to_studio: string;
  created_at: string;
}

/** Position in every list: newest first, by created_at then id. */
export type HandoffPosition = [string, string];

/** Who reads a list: a studio's sent or received side (or both), or the launcher's view of all. */
export type HandoffScope =
  | { kind: 'studio'; studioId: string; direction: 'sent' | 'received' | 'both' }
  | { kind: 'launcher'; state: HandoffState | null; itemId: string | null; from: string | null; to: string | null };

const columns =
  'id, from_studio, to_studio, asset_ids, asset_set, item_id, session_id, note, state, approved_at, accepted_session_id, created_at, updated_at';
const newest = 'ORDER BY created_at DESC, id DESC';
const before = '(created_at, id) < (@at, @id)';

/** The asset set as stored: sorted, joined, so the same set in any order is one value. */
export function assetSet(ids: readonly string[]): string {
  return [...ids].sort().join(',');
}

export function createHandoffsStore(db: Db) {
  const where = {
    sent: 'from_studio = @studio',
    received: 'to_studio = @studio AND approved_at IS NOT NULL',
    both: '(from_studio = @studio OR (to_studio = @studio AND approved_at IS NOT NULL))',
  };
  const page = (filter: string) =>
    db.prepare<Record<string, unknown>, HandoffRow>(
      `SELECT ${columns} FROM handoffs WHERE ${filter} AND (@at IS NULL OR ${before}) ${newest} LIMIT @limit`,
    );
  const stmts = {
    get: db.prepare<[string], HandoffRow>(`SELECT ${columns} FROM handoffs WHERE id = ?`),
    insert: db.prepare(
      `INSERT INTO handoffs (${columns}) VALUES (@id, @from_studio, @to_studio, @asset_ids, @asset_set, @item_id, @session_id,
       @note, @state, @approved_at, @accepted_session_id, @created_at, @updated_at)`,
    ),
    setState: db.prepare(
      `UPDATE handoffs SET state = @state, approved_at = coalesce(approved_at, @approved_at),
       accepted_session_id = coalesce(accepted_session_id, @accepted_session_id), updated_at = @updated_at WHERE id = @id`,
    ),
    same: db.prepare<Record<string, unknown>, { id: string }>(
      `SELECT id FROM handoffs WHERE from_studio = @from AND to_studio = @to AND asset_set = @set
       AND item_id IS @item AND session_id IS @session AND state IN ('pending', 'approved') LIMIT 1`,
    ),
    pendingCount: db.prepare<[string], number>(`SELECT count(*) FROM handoffs WHERE from_studio = ? AND state = 'pending'`).pluck(),
    due: db.prepare<[string], HandoffRow>(`SELECT ${columns} FROM handoffs WHERE state = 'pending' AND created_at <= ?`),
    oldestPending: db.prepare<[], string | null>(`SELECT min(created_at) FROM handoffs WHERE state = 'pending'`).pluck(),
    openOf: db.prepare<[string, string], HandoffRow>(
      `SELECT ${columns} FROM handoffs WHERE (from_studio = ? OR to_studio = ?) AND state IN ('pending', 'approved')`,
    ),
    pages: {
      sent: page(where.sent),
      received: page(where.received),
      both: page(where.both),
      launcher: page(
        '(@state IS NULL OR state = @state) AND (@item IS NULL OR item_id = @item) AND (@from IS NULL OR from_studio = @from) AND (@to IS NULL OR to_studio = @to)',
      ),
    },
    rule: db.prepare<[string, string], RuleRow>('SELECT from_studio, to_studio, created_at FROM handoff_rules WHERE from_studio = ? AND to_studio = ?'),
    addRule: db.prepare('INSERT OR IGNORE INTO handoff_rules (from_studio, to_studio, created_at) VALUES (?, ?, ?)'),
    removeRule: db.prepare('DELETE FROM handoff_rules WHERE from_studio = ? AND to_studio = ?'),
    removeRulesOf: db.prepare('DELETE FROM handoff_rules WHERE from_studio = ? OR to_studio = ?'),
    rules: db.prepare<Record<string, unknown>, RuleRow>(
      `SELECT from_studio, to_studio, created_at FROM handoff_rules
       WHERE @from IS NULL OR (from_studio, to_studio) > (@from, @to) ORDER BY from_studio, to_studio LIMIT @limit`,
    ),
  };

  return {
    get(id: string): HandoffRow | null {
      return stmts.get.get(id) ?? null;
    },
    insert(row: HandoffRow): void {
      stmts.insert.run(row);
    },
    /** A new state; `approved_at` and `accepted_session_id` are set once and then kept. */
    setState(id: string, state: HandoffState, at: string, extra: { approvedAt?: string; acceptedSessionId?: string } = {}): void {
      stmts.setState.run({ id, state, updated_at: at, approved_at: extra.approvedAt ?? null, accepted_session_id: extra.acceptedSessionId ?? null });
    },
    /** An open (pending or approved) handoff with the same sender, recipient, asset set, item and session. */
    same(from: string, to: string, set: string, item: string | null, session: string | null): string | null {
      return stmts.same.get({ from, to, set, item, session })?.id ?? null;
    },
    pendingCount(studioId: string): number {
      return stmts.pendingCount.get(studioId) ?? 0;
    },
    /** Pending handoffs created at or before `cutoff`: due to expire. */
    due(cutoff: string): HandoffRow[] {
      return stmts.due.all(cutoff);
    },
    oldestPending(): string | null {
      return stmts.oldestPending.get() ?? null;
    },
    /** Pending or approved handoffs from or to a studio (its uninstall with purge ends them). */
    openOf(studioId: string): HandoffRow[] {
      return stmts.openOf.all(studioId, studioId);
    },
    page(scope: HandoffScope, after: HandoffPosition | null, limit: number): IterableIterator<HandoffRow> {
      const position = { at: after?.[0] ?? null, id: after?.[1] ?? null, limit };
      if (scope.kind === 'launcher') {
        return stmts.pages.launcher.iterate({ ...position, state: scope.state, item: scope.itemId, from: scope.from, to: scope.to });
      }
      return stmts.pages[scope.direction].iterate({ ...position, studio: scope.studioId });
    },
    rule(from: string, to: string): RuleRow | null {
      return stmts.rule.get(from, to) ?? null;
    },
    addRule(from: string, to: string, at: string): void {
      stmts.addRule.run(from, to, at);
    },
    removeRule(from: string, to: string): boolean {
      return stmts.removeRule.run(from, to).changes === 1;
    },
    removeRulesOf(studioId: string): void {
      stmts.removeRulesOf.run(studioId, studioId);
    },
    rules(after: [string, string] | null, limit: number): IterableIterator<RuleRow> {
      return stmts.rules.iterate({ from: after?.[0] ?? null, to: after?.[1] ?? null, limit });
    },
  };
}

export type HandoffsStore = ReturnType<typeof createHandoffsStore>;

/**
 * Assets on offer (a pending or approved handoff) are referenced: reclaim
 * leaves them, so what the user is asked to approve is still there to accept.
 */
export function handoffReferenceSources(): AssetReferenceSource[] {
  return [
    {
      name: 'handoffs',
      liveSql: `SELECT j.value AS asset_id FROM handoffs h, json_each(h.asset_ids) j WHERE h.state IN ('pending', 'approved')`,
    },
  ];
}
