import { ApiError } from '../core/errors';
import { MAX_DEPTH, nestedDeeperThan } from '../core/document';
import type { Json } from '../core/merge-patch';
import { parseInstant } from '../core/time';

/**
 * The records query language as a pure parser (docs/api.md "Queries:
 * `where`"): `where` clauses `field:op:value` and `order` `field:asc|desc` become
 * a typed AST. Nothing here knows SQL; every refusal is 400 `bad_filter` naming
 * the clause and the reason.
 */

export const MAX_CLAUSES = 8;
/** Elements of an `in` array: far more than a hand-written filter needs, and it bounds the SQL. */
export const MAX_IN_VALUES = 256;
export const FIELD_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const OPS = ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'contains', 'exists'] as const;
export type Op = (typeof OPS)[number];
export type RangeOp = 'lt' | 'lte' | 'gt' | 'gte';

/** A value ranges may compare: same JSON type only. */
export type Scalar = number | string | boolean;

/** A top-level document key. */
export type DocClause =
  | { target: 'doc'; field: string; op: 'eq' | 'ne' | 'contains'; value: Json }
  | { target: 'doc'; field: string; op: RangeOp; value: Scalar }
  | { target: 'doc'; field: string; op: 'in'; values: Json[] }
  | { target: 'doc'; field: string; op: 'exists'; value: boolean };

/** `id`, compared as a string. */
export type IdClause =
  | { target: 'id'; op: 'eq' | 'ne' | RangeOp | 'contains'; value: string }
  | { target: 'id'; op: 'in'; values: string[] }
  | { target: 'id'; op: 'exists'; value: boolean };

/**
 * `created_at` / `updated_at`, compared as instants. `value` is the canonical
 * millisecond form; `finer` says the instant given had a non-zero part below the
 * millisecond (stored instants never do, so it cannot be equal to one).
 */
export interface Instant {
  ms: string;
  finer: boolean;
}
export type InstantClause =
  | { target: 'created_at' | 'updated_at'; op: 'eq' | 'ne' | RangeOp; value: Instant }
  | { target: 'created_at' | 'updated_at'; op: 'in'; values: Instant[] };

export type Clause = DocClause | IdClause | InstantClause;

export type OrderField = { target: 'doc'; field: string } | { target: 'id' | 'created_at' | 'updated_at' };
export interface Order {
  field: OrderField;
  dir: 'asc' | 'desc';
}

export const DEFAULT_ORDER_TEXT = 'created_at:desc';

function badFilter(message: string, details: Record<string, unknown>): ApiError {
  return new ApiError(400, 'bad_filter', message, details);
}

/** Parses every `where` clause (at most eight). */
export function parseWhere(texts: readonly string[]): Clause[] {
  if (texts.length > MAX_CLAUSES) {
    throw badFilter(`A query takes at most ${MAX_CLAUSES} where clauses; ${texts.length} were given.`, {
      limit: MAX_CLAUSES,
      count: texts.length,
    });
  }
  return texts.map((text, i) => parseClause(text, i + 1));
}

export function parseClause(text: string, index = 1): Clause {
  const fail = (reason: string) =>
    badFilter(`where clause ${index} "${shorten(text)}": ${reason}`, { clause: text, index, reason });
  const first = text.indexOf(':');
  const second = first < 0 ? -1 : text.indexOf(':', first + 1);
  if (second < 0) throw fail('expected field:op:value');
  const name = text.slice(0, first);
  const op = text.slice(first + 1, second);
  const raw = text.slice(second + 1);
  const target = fieldTarget(name, fail);
  if (!(OPS as readonly string[]).includes(op)) {
    throw fail(`unknown operator "${shorten(op)}" (one of ${OPS.join(', ')}; lower-case)`);
  }
  const value = parseValue(raw);
  // Stored documents nest at most MAX_DEPTH levels; a deeper value matches nothing and
  // would only strain every later walk over it (a 500 from the stack, found in review).
  if (nestedDeeperThan(value)) throw fail(`the value is nested deeper than ${MAX_DEPTH} levels`);
  if (target === 'doc') return docClause(name, op as Op, value, fail);
  if (target === 'id') return idClause(op as Op, value, raw, fail);
  return instantClause(target, op as Op, value, fail);
}

/** Parses `order`: `field:asc` or `field:desc`, one field, given once. */
export function parseOrder(text: string | string[] | undefined): Order {
  if (text === undefined) return parseOrder(DEFAULT_ORDER_TEXT);
  if (Array.isArray(text)) throw badFilter('order takes one field and may be given once.', { order: text });
  const fail = (reason: string) => badFilter(`order "${shorten(text)}": ${reason}`, { order: text, reason });
  const colon = text.lastIndexOf(':');
  if (colon < 0) throw fail('expected field:asc or field:desc');
  const name = text.slice(0, colon);
  const dir = text.slice(colon + 1);
  if (dir !== 'asc' && dir !== 'desc') throw fail(`the direction must be asc or desc, not "${shorten(dir)}"`);
  if (name.includes(':')) throw fail('order takes one field');
  const target = fieldTarget(name, fail);
  return { field: target === 'doc' ? { target, field: name } : { target }, dir };
}

/** The value: JSON when the text is valid JSON, else the text itself. */
export function parseValue(raw: string): Json {
  try {
    return JSON.parse(raw) as Json;
  } catch {
    return raw;
  }
}

function fieldTarget(name: string, fail: (reason: string) => ApiError): 'doc' | 'id' | 'created_at' | 'updated_at' {
  if (name === 'id' || name === 'created_at' || name === 'updated_at') return name;
  if (name === 'etag') throw fail('etag is not a document field and cannot be filtered or ordered on');
  if (name === '') throw fail('the field name is empty');
  if (!FIELD_PATTERN.test(name)) {
    throw fail(`the field "${shorten(name)}" must be a top-level key matching ${FIELD_PATTERN.source} (no nested paths)`);
  }
  return 'doc';
}

function docClause(field: string, op: Op, value: Json, fail: (reason: string) => ApiError): DocClause {
  switch (op) {
    case 'eq':
    case 'ne':
    case 'contains':
      return { target: 'doc', field, op, value };
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte':
      if (typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') {
        return { target: 'doc', field, op, value };
      }
      throw fail(`${op} compares a number, a string or a boolean, not ${jsonType(value)}`);
    case 'in':
      return { target: 'doc', field, op, values: inArray(value, fail) };
    case 'exists':
      if (typeof value === 'boolean') return { target: 'doc', field, op, value };
      throw fail('exists takes true or false');
  }
}

/** `id` is a string: a value that parses as another JSON type is taken as its text (`7...` digits). */
function idClause(op: Op, value: Json, raw: string, fail: (reason: string) => ApiError): IdClause {
  const text = typeof value === 'string' ? value : raw;
  switch (op) {
    case 'in': {
      const values = inArray(value, fail);
      if (!values.every((v): v is string => typeof v === 'string')) throw fail('in on id takes an array of strings');
      return { target: 'id', op, values };
    }
    case 'exists':
      if (typeof value === 'boolean') return { target: 'id', op, value };
      throw fail('exists takes true or false');
    default:
      return { target: 'id', op, value: text };
  }
}

function instantClause(
  target: 'created_at' | 'updated_at',
  op: Op,
  value: Json,
  fail: (reason: string) => ApiError,
): InstantClause {
  const instant = (v: Json): Instant => {
    const ms = typeof v === 'string' ? parseInstant(v) : null;
    if (ms === null) throw fail(`${target} compares RFC 3339 instants (e.g. 2026-11-22T10:01:24.123Z), not ${shorten(JSON.stringify(v))}`);
    return { ms, finer: /\.\d{3}\d*[1-9]/.test(v as string) };
  };
  switch (op) {
    case 'contains':
    case 'exists':
      throw fail(`${op} does not apply to ${target}`);
    case 'in':
      return { target, op, values: inArray(value, fail).map(instant) };
    default:
      return { target, op, value: instant(value) };
  }
}

function inArray(value: Json, fail: (reason: string) => ApiError): Json[] {
  if (!Array.isArray(value)) throw fail(`in takes a JSON array, not ${jsonType(value)}`);
  if (value.length > MAX_IN_VALUES) throw fail(`in takes at most ${MAX_IN_VALUES} values`);
  return value;
}

function jsonType(value: Json): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

/** Clause text in messages: long values are cut (the whole clause is in details). */
function shorten(text: string): string {
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
