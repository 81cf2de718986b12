import { encodeTime } from 'ulid';
import type { AssetKind } from '../assets';
import { studioWord } from './search';

/**
 * The gallery list as SQL (pure). Every page is "seq DESC" (= created_at desc,
 * id desc; migration 0007), and the query is driven from the one structure that
 * yields rows already in that order and narrows them most:
 *
 *   - with `q`: the full-text index, walked in row-id order (FTS5 answers
 *     `ORDER BY rowid DESC` and row-id bounds itself, so the first page of a
 *     common word reads a few dozen postings, not every match);
 *   - else with tags: the first tag's rows in gallery_tags (tag, item);
 *   - else the items table through the planner's index of choice (studio,
 *     asset or session, each ending in seq).
 *
 * since/until become bounds on seq, found through the id index: created_at is
 * the instant of the ULID id, and seq follows id, so "created at or after T"
 * is "seq >= the seq of the first id at or after ULID(T, 0...)". Text comes
 * only from the fragments below; every value is a bound parameter.
 */

export interface ItemFilter {
  /** Null: every studio (scope=all without `studio`). */
  studioId: string | null;
  kind?: AssetKind;
  tags: readonly string[];
  sessionId?: string;
  starred?: boolean;
  assetId?: string;
  /** Canonical instants (parseInstant). */
  since?: string;
  until?: string;
  /** A compiled FTS5 expression (search.ts). */
  match?: string;
}

export interface CompiledQuery {
  sql: string;
  params: Record<string, string | number>;
}

export const ITEM_COLUMNS =
  'i.seq, i.id, i.studio_id, i.asset_id, i.kind, i.title, i.tags, i.starred, i.session_id, i.params, i.inputs, i.timeline_id, i.created_at, i.updated_at';

/**
 * The smallest ULID of an instant: ids at or after it were created at or after
 * it. Before 1970 (a valid RFC 3339 instant, but no ULID's) it is the smallest
 * ULID of all, which every id is at or after.
 */
export function firstIdAt(instant: string): string {
  return encodeTime(Math.max(0, Date.parse(instant)), 10) + '0'.repeat(16);
}

const firstSeqAt = (param: string) => `(SELECT seq FROM gallery_items WHERE id >= :${param} ORDER BY id LIMIT 1)`;

/**
 * The index a page without `q` or tags walks, named rather than left to the
 * planner (whose guesses, without statistics, even chose a skip-scan): the
 * narrowest equality the filter has, each index ending in seq so the page is one
 * range in order. Null: the table itself, in row-id order (scope=all).
 */
export function itemIndexFor(filter: ItemFilter): string | null {
  if (filter.assetId !== undefined) return 'gallery_items_by_asset';
  if (filter.sessionId !== undefined) return 'gallery_items_by_session';
  if (filter.studioId === null) return null;
  if (filter.starred === true) return 'gallery_items_live_starred';
  if (filter.kind !== undefined) return 'gallery_items_live_by_kind';
  return 'gallery_items_live_by_studio';
}

export function compileItemQuery(filter: ItemFilter, after: number | null, limit: number): CompiledQuery {
  const params: CompiledQuery['params'] = { limit };
  const where: string[] = [];
  let from: string;
  let seq: string;

  if (filter.match !== undefined) {
    from = 'gallery_search s CROSS JOIN gallery_items i ON i.seq = s.rowid';
    seq = 's.rowid';
    where.push('gallery_search MATCH :match');
    // The words of q search title and prompt only; one studio's page asks for its studio word too.
    const studio = filter.studioId === null ? '' : `studio : "${studioWord(filter.studioId)}" AND `;
    params.match = `${studio}{title prompt} : (${filter.match})`;
  } else if (filter.tags.length > 0) {
    from = 'gallery_tags t CROSS JOIN gallery_items i ON i.seq = t.item';
    seq = 't.item';
    where.push('t.tag = :tag0');
    params.tag0 = filter.tags[0]!;
  } else {
    const index = itemIndexFor(filter);
    from = index === null ? 'gallery_items i' : `gallery_items i INDEXED BY ${index}`;
    seq = 'i.seq';
  }

  // Bounds on the driving structure's own seq, so that it seeks rather than filters.
  if (after !== null) {
    where.push(`${seq} < :after`);
    params.after = after;
  }
  if (filter.since !== undefined) {
    where.push(`${seq} >= ${firstSeqAt('since')}`);
    params.since = firstIdAt(filter.since);
  }
  if (filter.until !== undefined) {
    where.push(`${seq} < coalesce(${firstSeqAt('until')}, 9223372036854775807)`);
    params.until = firstIdAt(filter.until);
  }

  where.push('i.deleted_at IS NULL');
  if (filter.studioId !== null) {
    where.push('i.studio_id = :studio');
    params.studio = filter.studioId;
  }
  if (filter.kind !== undefined) {
    where.push('i.kind = :kind');
    params.kind = filter.kind;
  }
  if (filter.sessionId !== undefined) {
    where.push('i.session_id = :session');
    params.session = filter.sessionId;
  }
  // A literal from a closed set (0 or 1), not a parameter: gallery_items_live_starred
  // is partial on `starred = 1`, which only a literal can be seen to imply.
  if (filter.starred !== undefined) where.push(`i.starred = ${filter.starred ? 1 : 0}`);
  if (filter.assetId !== undefined) {
    where.push('i.asset_id = :asset');
    params.asset = filter.assetId;
  }
  const firstExtraTag = filter.match !== undefined ? 0 : 1;
  filter.tags.forEach((tag, n) => {
    if (n < firstExtraTag) return;
    where.push(`EXISTS (SELECT 1 FROM gallery_tags WHERE tag = :tag${n} AND item = i.seq)`);
    params[`tag${n}`] = tag;
  });

  return {
    sql: `SELECT ${ITEM_COLUMNS} FROM ${from} WHERE ${where.join(' AND ')} ORDER BY ${seq} DESC LIMIT :limit`,
    params,
  };
}
