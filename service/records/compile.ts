import type { Json } from '../core/merge-patch';
import { FIELD_PATTERN, type Clause, type DocClause, type Instant, type Order } from './filter';

/**
 * Compiles the filter AST to SQL over the `records` table: a pure function
 * returning `{sql, params}`. SQL text comes only from the fragments written in
 * this file; every value is a bound parameter. The one exception is the JSON
 * path of a field with a declared index, written as a literal so that it is the
 * very expression of the index (the planner matches index expressions by their
 * text); that path is built from a name that matched FIELD_PATTERN, checked
 * again here, so it can hold no quote.
 *
 * One sort key per field, K(field), gives every rule of docs/api.md "Queries: `where`" as plain
 * comparisons that an expression index serves:
 *   number -> its value as a double, as JSON numbers are here (1 = 1.0; an integer
 *             beyond 2^53 written by JavaScript compares as the double it stands for)
 *   string -> its text (BINARY: UTF-8 byte order)
 *   null -> x'01', false -> x'02', true -> x'03'
 *   array -> x'04' || compact JSON, object -> x'05' || compact JSON
 *   missing -> NULL
 * SQLite orders NULL < numbers < text < blobs, so values of different JSON types
 * never compare equal and each type is one contiguous range of K.
 */

export interface Sql {
  sql: string;
  params: unknown[];
}

/** A piece of SQL; interpolating anything else into `sql` binds it as a parameter. */
class Frag implements Sql {
  constructor(
    readonly sql: string,
    readonly params: unknown[],
  ) {}
}

export function sql(strings: TemplateStringsArray, ...values: unknown[]): Frag {
  let text = strings[0]!;
  const params: unknown[] = [];
  values.forEach((value, i) => {
    if (value instanceof Frag) {
      text += value.sql;
      params.push(...value.params);
    } else {
      text += '?';
      params.push(value);
    }
    text += strings[i + 1]!;
  });
  return new Frag(text, params);
}

function joinFrags(frags: Frag[], separator: string): Frag {
  return new Frag(frags.map((f) => f.sql).join(separator), frags.flatMap((f) => f.params));
}

const TRUE = sql`1`;
const FALSE = sql`0`;

/** The JSON path of a top-level key, `$."name"`. */
export function jsonPath(field: string): string {
  if (!FIELD_PATTERN.test(field)) throw new Error(`not a field name: ${field}`);
  return `$."${field}"`;
}

/** The path as a literal (declared index: must equal the index's text) or a bound parameter. */
function pathOf(field: string, indexed: ReadonlySet<string>): Frag {
  return indexed.has(field) ? new Frag(`'${jsonPath(field)}'`, []) : sql`${jsonPath(field)}`;
}

/** The sort key of a field; with a literal path this is exactly the declared index's expression. */
export function keyExpr(path: Frag): Frag {
  return sql`(CASE json_type(doc, ${path}) WHEN 'null' THEN x'01' WHEN 'false' THEN x'02' WHEN 'true' THEN x'03' WHEN 'integer' THEN CAST(doc ->> ${path} AS REAL) WHEN 'array' THEN CAST(char(4) || (doc ->> ${path}) AS BLOB) WHEN 'object' THEN CAST(char(5) || (doc ->> ${path}) AS BLOB) ELSE doc ->> ${path} END)`;
}

/** The key expression text of a declared index on `field`. */
export function indexKeySql(field: string): string {
  return keyExpr(new Frag(`'${jsonPath(field)}'`, [])).sql;
}

/** The same key for an element of json_each (columns `type`, `value`). */
const ELEMENT_KEY = `(CASE type WHEN 'null' THEN x'01' WHEN 'false' THEN x'02' WHEN 'true' THEN x'03' WHEN 'integer' THEN CAST(value AS REAL) WHEN 'array' THEN CAST(char(4) || value AS BLOB) WHEN 'object' THEN CAST(char(5) || value AS BLOB) ELSE value END)`;

/** The key a JSON value has, to compare with K (must agree with keyExpr). */
export function keyOf(value: Json): number | string | Buffer {
  if (typeof value === 'number' || typeof value === 'string') return value;
  if (value === null) return Buffer.from([1]);
  if (typeof value === 'boolean') return Buffer.from([value ? 3 : 2]);
  return Buffer.concat([Buffer.from([Array.isArray(value) ? 4 : 5]), Buffer.from(JSON.stringify(value), 'utf8')]);
}

/**
 * The range of K holding one JSON type, as [lower (inclusive), upper (exclusive)]:
 * numbers from -Infinity up to the empty text; strings up to the empty blob;
 * booleans x'02'..x'04'.
 */
type Key = number | string | Buffer;

function typeRange(value: number | string | boolean): [{ key: Key; sql: Frag }, { key: Key; sql: Frag }] {
  if (typeof value === 'number') return [{ key: -Infinity, sql: sql`-9e999` }, { key: '', sql: sql`''` }];
  if (typeof value === 'string') return [{ key: '', sql: sql`''` }, { key: Buffer.alloc(0), sql: sql`x''` }];
  return [{ key: Buffer.from([2]), sql: sql`x'02'` }, { key: Buffer.from([4]), sql: sql`x'04'` }];
}

/** One side of a range on K: its key, whether it is strict, its SQL. */
interface Bound {
  key: Key;
  strict: boolean;
  sql: Frag;
}

type RangeClause = Extract<DocClause, { op: 'lt' | 'lte' | 'gt' | 'gte' }>;

/** A range clause as its two bounds: one from the value, the other from the value's type. */
function rangeBounds(c: RangeClause, k: Frag): { low: Bound; high: Bound; valueFirst: 'low' | 'high' } {
  const [low, high] = typeRange(c.value);
  const key = keyOf(c.value);
  const value: Bound = { key, strict: c.op === 'lt' || c.op === 'gt', sql: sql`${k} ${new Frag(OPERATOR[c.op], [])} ${key}` };
  if (c.op === 'gt' || c.op === 'gte') return { low: value, high: { key: high.key, strict: true, sql: sql`${k} < ${high.sql}` }, valueFirst: 'low' };
  return { low: { key: low.key, strict: false, sql: sql`${k} >= ${low.sql}` }, high: value, valueFirst: 'high' };
}

const OPERATOR = { lt: '<', lte: '<=', gt: '>', gte: '>=' } as const;

function docClauseSql(c: DocClause, indexed: ReadonlySet<string>): Frag {
  const path = pathOf(c.field, indexed);
  const k = keyExpr(path);
  switch (c.op) {
    case 'eq':
      return sql`${k} = ${keyOf(c.value)}`;
    case 'ne':
      // IS NOT: a missing field (NULL key) matches ne.
      return sql`${k} IS NOT ${keyOf(c.value)}`;
    case 'in':
      if (c.values.length === 0) return FALSE;
      return sql`${k} IN (${joinFrags(c.values.map((v) => sql`${keyOf(v)}`), ', ')})`;
    case 'exists':
      return c.value ? sql`${k} IS NOT NULL` : sql`${k} IS NULL`;
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte': {
      // One bound from the value, the other from the type's range: same JSON type only.
      const b = rangeBounds(c, k);
      return b.valueFirst === 'low' ? sql`(${b.low.sql} AND ${b.high.sql})` : sql`(${b.high.sql} AND ${b.low.sql})`;
    }
    case 'contains': {
      const member = sql`(json_type(doc, ${path}) = 'array' AND EXISTS (SELECT 1 FROM json_each(records.doc, ${path}) WHERE ${new Frag(ELEMENT_KEY, [])} = ${keyOf(c.value)}))`;
      if (typeof c.value !== 'string') return member;
      return sql`((json_type(doc, ${path}) = 'text' AND instr(doc ->> ${path}, ${c.value}) > 0) OR ${member})`;
    }
  }
}

/**
 * An instant given finer than a millisecond equals no stored instant (they are
 * stored at millisecond precision); for ranges it lies strictly between two
 * stored values, so `< x` is `<= floor(x)` and `>= x` is `> floor(x)`.
 */
function instantSql(column: Frag, op: 'eq' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte', v: Instant): Frag {
  if (v.finer) {
    if (op === 'eq') return FALSE;
    if (op === 'ne') return TRUE;
    if (op === 'lt') op = 'lte';
    if (op === 'gte') op = 'gt';
  }
  if (op === 'eq') return sql`${column} = ${v.ms}`;
  if (op === 'ne') return sql`${column} <> ${v.ms}`;
  return sql`${column} ${new Frag(OPERATOR[op], [])} ${v.ms}`;
}

export function clauseSql(c: Clause, indexed: ReadonlySet<string>): Frag {
  if (c.target === 'doc') return docClauseSql(c, indexed);
  if (c.target === 'id') {
    const id = sql`id`;
    switch (c.op) {
      case 'in':
        return c.values.length === 0 ? FALSE : sql`${id} IN (${joinFrags(c.values.map((v) => sql`${v}`), ', ')})`;
      case 'exists':
        return c.value ? TRUE : FALSE;
      case 'contains':
        return sql`instr(${id}, ${c.value}) > 0`;
      case 'eq':
        return sql`${id} = ${c.value}`;
      case 'ne':
        return sql`${id} <> ${c.value}`;
      default:
        return sql`${id} ${new Frag(OPERATOR[c.op], [])} ${c.value}`;
    }
  }
  const column = c.target === 'created_at' ? sql`created_at` : sql`updated_at`;
  if (c.op === 'in') {
    const exact = c.values.filter((v) => !v.finer);
    return exact.length === 0 ? FALSE : sql`${column} IN (${joinFrags(exact.map((v) => sql`${v.ms}`), ', ')})`;
  }
  return instantSql(column, c.op, c.value);
}

/**
 * Where a page starts. A cursor names the last row shown: for a document field
 * its key (`m` segment: the field is missing) and id; for `updated_at` that
 * instant and id; for `id` / `created_at` the id alone.
 */
export type Position =
  | { kind: 'key'; key: number | string | Buffer; id: string }
  | { kind: 'missing'; id: string }
  | { kind: 'updated'; at: string; id: string }
  | { kind: 'id'; id: string };

/**
 * One step of a page: rows of one segment of the order, each served by an index
 * range. A page runs its steps in turn until it has enough rows. Rows whose
 * order field is missing come last in both directions (docs/api.md "Queries: `order` and pages"), so a
 * document-field order is: present keys in order, then missing ones by id.
 * Ties on the key continue by id within the key (`tie` step) before moving to
 * greater keys, so every row is returned once across pages.
 */
interface Step {
  where: Frag;
  orderBy: Frag;
  /**
   * The step reads keys past this one (`K > key` ascending, `K < key`
   * descending), or (null) every present key: range clauses on the order
   * field are folded with it (foldBounds).
   */
  past?: number | string | Buffer | null;
  /** The same for a column order: the step reads `column > value` (or `<`). */
  pastColumn?: { column: 'id' | 'updated_at'; value: string };
}

/**
 * `created_at` is the instant encoded in the record's ULID (see store.ts), so
 * ordering by (created_at, id) is ordering by id.
 */
export function stepsOf(order: Order, indexed: ReadonlySet<string>, after: Position | null): Step[] {
  const desc = order.dir === 'desc';
  const dir = new Frag(desc ? 'DESC' : 'ASC', []);
  const past = new Frag(desc ? '<' : '>', []);
  const byId = sql`id ${dir}`;
  const f = order.field;
  if (f.target === 'id' || f.target === 'created_at') {
    if (!after) return [{ where: TRUE, orderBy: byId }];
    return [{ where: sql`id ${past} ${after.id}`, orderBy: byId, pastColumn: { column: 'id', value: after.id } }];
  }
  if (f.target === 'updated_at') {
    const all = { where: TRUE, orderBy: sql`updated_at ${dir}, id ${dir}` };
    if (!after) return [all];
    if (after.kind !== 'updated') throw new Error('position does not match the order');
    return [
      { where: sql`updated_at = ${after.at} AND id ${past} ${after.id}`, orderBy: byId },
      { where: sql`updated_at ${past} ${after.at}`, orderBy: all.orderBy, pastColumn: { column: 'updated_at', value: after.at } },
    ];
  }
  if (f.target !== 'doc') throw new Error('unreachable');
  const k = keyExpr(pathOf(f.field, indexed));
  const byKey = sql`${k} ${dir}, id ${dir}`;
  const missing = { where: sql`${k} IS NULL`, orderBy: byId };
  if (!after) return [{ where: sql`${k} IS NOT NULL`, orderBy: byKey, past: null }, missing];
  if (after.kind === 'missing') return [{ where: sql`${k} IS NULL AND id ${past} ${after.id}`, orderBy: byId }];
  if (after.kind !== 'key') throw new Error('position does not match the order');
  return [
    { where: sql`${k} = ${after.key} AND id ${past} ${after.id}`, orderBy: byId },
    // Past a key excludes NULL (missing) in both directions.
    { where: sql`${k} ${past} ${after.key}`, orderBy: byKey, past: after.key },
    missing,
  ];
}

/**
 * Whether a page is one range of a declared index read in its order, so that
 * it reads at most the rows it returns, however large the collection: one
 * `eq` clause on a declared field, in id (= created_at) order. The index is
 * (studio_id, collection, K(field), id), partial on live rows, so the rows with
 * K = value come in id order and the page stops at its limit. (A range clause,
 * `in`, other clauses or another order can read many rows for each one shown.)
 */
export function readsOneIndexRange(clauses: readonly Clause[], order: Order, indexed: ReadonlySet<string>): boolean {
  const [c] = clauses;
  return (
    clauses.length === 1 &&
    c!.target === 'doc' &&
    c!.op === 'eq' &&
    indexed.has(c!.field) &&
    (order.field.target === 'id' || order.field.target === 'created_at')
  );
}

export const RECORD_COLUMNS = 'id, created_at, updated_at, etag, json(doc) AS doc';

export interface QuerySpec {
  studioId: string;
  collection: string;
  clauses: readonly Clause[];
  order: Order;
  /** Fields of this collection with a declared index. */
  indexed: ReadonlySet<string>;
  after: Position | null;
}

/**
 * The statements of one page, in order: each selects the record columns plus
 * `k`, the order field's key (for the next cursor), and takes `LIMIT ?` as
 * its last parameter (appended by the caller).
 */
export function compileQuery(q: QuerySpec): Sql[] {
  const scope = sql`studio_id = ${q.studioId} AND collection = ${q.collection} AND deleted_at IS NULL`;
  const plain = joinFrags([scope, ...q.clauses.map((c) => clauseSql(c, q.indexed))], ' AND ');
  const f = q.order.field;
  let key = sql`NULL`;
  if (f.target === 'doc') key = keyExpr(pathOf(f.field, q.indexed));
  else if (f.target === 'updated_at') key = sql`updated_at`;
  return stepsOf(q.order, q.indexed, q.after).map((step) => {
    let where = plain;
    let stepWhere = step.where;
    const folded =
      step.past !== undefined && f.target === 'doc'
        ? foldBounds(q, f.field, step.past)
        : step.pastColumn
          ? foldColumnBounds(q, step.pastColumn)
          : null;
    if (folded) {
      where = joinFrags([scope, ...folded.filters], ' AND ');
      if (folded.cursorImplied) stepWhere = TRUE;
    }
    const s = sql`SELECT ${new Frag(RECORD_COLUMNS, [])}, ${key} AS k FROM records WHERE ${where} AND ${stepWhere} ORDER BY ${step.orderBy} LIMIT `;
    return { sql: `${s.sql}?`, params: s.params };
  });
}

/**
 * A step past the cursor's key and range clauses on the order field give
 * SQLite several bounds on one side of the index range, and it uses one of
 * them, maybe the loosest: every later page would rescan from there (and a
 * first page could start far off). They are all conjunctive, so only the
 * tightest is kept on the side the step moves from (ascending: the lower
 * side), and the others are left out.
 */
function foldBounds(q: QuerySpec, field: string, past: Key | null): { filters: Frag[]; cursorImplied: boolean } {
  const asc = q.order.dir === 'asc';
  const k = keyExpr(pathOf(field, q.indexed));
  const ranges = q.clauses.map((c) =>
    c.target === 'doc' && c.field === field && ['lt', 'lte', 'gt', 'gte'].includes(c.op) ? rangeBounds(c as RangeClause, k) : null,
  );
  // Tighter: further in the step's direction; at equal keys the strict one.
  const tighter = (a: { key: Key; strict: boolean }, b: { key: Key; strict: boolean }) => {
    const cmp = compareKeys(a.key, b.key);
    return cmp === 0 ? a.strict && !b.strict : asc ? cmp > 0 : cmp < 0;
  };
  // Without a cursor the step's own bound is `K IS NOT NULL`, which any range implies.
  let best: { key: Key; strict: boolean; at: number } | null = past === null ? null : { key: past, strict: true, at: -1 };
  ranges.forEach((r, i) => {
    const side = r && (asc ? r.low : r.high);
    if (side && (best === null || tighter(side, best))) best = { key: side.key, strict: side.strict, at: i };
  });
  const chosen = best as { at: number } | null;
  const filters = q.clauses.map((c, i) => {
    const r = ranges[i];
    if (!r) return clauseSql(c, q.indexed);
    const kept = asc ? r.high : r.low;
    if (chosen?.at !== i) return kept.sql;
    return asc ? sql`(${r.low.sql} AND ${r.high.sql})` : sql`(${r.high.sql} AND ${r.low.sql})`;
  });
  return { filters, cursorImplied: chosen !== null && chosen.at !== -1 };
}

/**
 * foldBounds for an `id` or `updated_at` order: range clauses on that column
 * bounding the side the step moves from compete with the cursor; the tightest
 * stays. Ids and instants are ASCII, so string order is SQLite's order.
 */
function foldColumnBounds(q: QuerySpec, past: { column: 'id' | 'updated_at'; value: string }): { filters: Frag[]; cursorImplied: boolean } {
  const asc = q.order.dir === 'asc';
  const sideOps = asc ? ['gt', 'gte'] : ['lt', 'lte'];
  const bounds = q.clauses.map((c): { value: string; strict: boolean } | null => {
    if (c.target !== past.column || c.op === 'in' || !sideOps.includes(c.op)) return null;
    if (c.target === 'id') return { value: c.value as string, strict: c.op === 'gt' || c.op === 'lt' };
    const v = (c as { value: Instant }).value;
    // As instantSql: an instant finer than a millisecond makes `>=` strict, `<` inclusive.
    const strict = v.finer ? c.op === 'gte' || c.op === 'gt' : c.op === 'gt' || c.op === 'lt';
    return { value: v.ms, strict };
  });
  const tighter = (a: { value: string; strict: boolean }, b: { value: string; strict: boolean }) =>
    a.value === b.value ? a.strict && !b.strict : asc ? a.value > b.value : a.value < b.value;
  let best = { value: past.value, strict: true, at: -1 };
  bounds.forEach((b, i) => {
    if (b && tighter(b, best)) best = { ...b, at: i };
  });
  const filters = q.clauses.flatMap((c, i) => (bounds[i] && best.at !== i ? [] : [clauseSql(c, q.indexed)]));
  return { filters, cursorImplied: best.at !== -1 };
}

/** SQLite's order of keys: numbers, then text (UTF-8 bytes), then blobs (bytes). */
export function compareKeys(a: Key, b: Key): number {
  const rank = (x: Key) => (typeof x === 'number' ? 0 : typeof x === 'string' ? 1 : 2);
  if (rank(a) !== rank(b)) return rank(a) - rank(b);
  if (typeof a === 'number') return a === b ? 0 : a < (b as number) ? -1 : 1;
  const bytes = (x: string | Buffer) => (typeof x === 'string' ? Buffer.from(x, 'utf8') : x);
  return Buffer.compare(bytes(a), bytes(b as string | Buffer));
}
