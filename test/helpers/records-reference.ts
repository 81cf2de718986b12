/**
 * A reference evaluator for record queries, in plain TypeScript, written from
 * the rules and choices of docs/api.md "Records",
 * not from the service's SQL: the property test compares the service with it.
 */

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export interface RefRecord {
  id: string;
  created_at: string;
  updated_at: string;
  doc: Record<string, Json>;
}

export interface RefClause {
  field: string;
  op: string;
  /** The parsed value (JSON when valid, else the text). */
  value: Json;
  raw: string;
}

const utf8 = (s: string) => Buffer.from(s, 'utf8');

function typeOf(v: Json): 'null' | 'boolean' | 'number' | 'string' | 'array' | 'object' {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v as 'boolean' | 'number' | 'string' | 'object';
}

/** Same JSON type and value; arrays and objects by their compact JSON text. */
export function jsonEq(a: Json, b: Json): boolean {
  const t = typeOf(a);
  if (t !== typeOf(b)) return false;
  if (t === 'array' || t === 'object') return JSON.stringify(a) === JSON.stringify(b);
  return a === b;
}

/** Same-type comparison for ranges: numbers, strings (UTF-8 byte order), booleans. */
function compareSame(a: Json, b: Json): number | null {
  const t = typeOf(a);
  if (t !== typeOf(b)) return null;
  if (t === 'number') return (a as number) - (b as number);
  if (t === 'string') return Buffer.compare(utf8(a as string), utf8(b as string));
  if (t === 'boolean') return Number(a) - Number(b);
  return null;
}

/** Order across types: numbers, strings, null, false, true, arrays, objects. */
const RANK = { number: 0, string: 1, null: 2, boolean: 3, array: 4, object: 5 } as const;

export function compareValues(a: Json, b: Json): number {
  const ta = typeOf(a);
  const tb = typeOf(b);
  if (ta !== tb) return RANK[ta] - RANK[tb];
  if (ta === 'array' || ta === 'object') return Buffer.compare(utf8(JSON.stringify(a)), utf8(JSON.stringify(b)));
  if (ta === 'null') return 0;
  return compareSame(a, b)!;
}

function has(doc: Record<string, Json>, field: string): boolean {
  return Object.prototype.hasOwnProperty.call(doc, field);
}

function matchDoc(doc: Record<string, Json>, c: RefClause): boolean {
  const present = has(doc, c.field);
  const stored = present ? doc[c.field]! : undefined;
  switch (c.op) {
    case 'eq':
      return present && jsonEq(stored!, c.value);
    case 'ne':
      return !(present && jsonEq(stored!, c.value));
    case 'in':
      return present && (c.value as Json[]).some((v) => jsonEq(stored!, v));
    case 'exists':
      return present === c.value;
    case 'contains':
      if (!present) return false;
      if (typeof stored === 'string') return typeof c.value === 'string' && stored.includes(c.value);
      if (Array.isArray(stored)) return stored.some((e) => jsonEq(e, c.value));
      return false;
    default: {
      if (!present) return false;
      const cmp = compareSame(stored!, c.value);
      if (cmp === null) return false;
      return { lt: cmp < 0, lte: cmp <= 0, gt: cmp > 0, gte: cmp >= 0 }[c.op as 'lt']!;
    }
  }
}

function matchColumn(actual: string, c: RefClause, value: (v: Json) => string): boolean {
  switch (c.op) {
    case 'eq':
      return actual === value(c.value);
    case 'ne':
      return actual !== value(c.value);
    case 'in':
      return (c.value as Json[]).some((v) => actual === value(v));
    case 'contains':
      return actual.includes(value(c.value));
    case 'exists':
      return c.value === true;
    default: {
      const v = value(c.value);
      return { lt: actual < v, lte: actual <= v, gt: actual > v, gte: actual >= v }[c.op as 'lt']!;
    }
  }
}

export function matches(r: RefRecord, c: RefClause): boolean {
  if (c.field === 'id') return matchColumn(r.id, c, (v) => (typeof v === 'string' ? v : c.raw));
  if (c.field === 'created_at' || c.field === 'updated_at') {
    return matchColumn(r[c.field], c, (v) => new Date(v as string).toISOString());
  }
  return matchDoc(r.doc, c);
}

/** Every match of the clauses in the order: missing order fields last, ties by id in the same direction. */
export function evaluate(records: readonly RefRecord[], clauses: readonly RefClause[], order: { field: string; dir: 'asc' | 'desc' }): string[] {
  const sign = order.dir === 'asc' ? 1 : -1;
  const byId = (a: RefRecord, b: RefRecord) => sign * (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const column = order.field === 'id' || order.field === 'created_at' || order.field === 'updated_at';
  return records
    .filter((r) => clauses.every((c) => matches(r, c)))
    .sort((a, b) => {
      if (column) {
        const x = a[order.field as 'id'];
        const y = b[order.field as 'id'];
        return x === y ? byId(a, b) : sign * (x < y ? -1 : 1);
      }
      const pa = has(a.doc, order.field);
      const pb = has(b.doc, order.field);
      if (pa !== pb) return pa ? -1 : 1;
      if (!pa) return byId(a, b);
      return sign * compareValues(a.doc[order.field]!, b.doc[order.field]!) || byId(a, b);
    })
    .map((r) => r.id);
}
