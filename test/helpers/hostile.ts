import fc from 'fast-check';
import { request } from 'node:http';

/**
 * Arbitraries for the hostile-input test (docs/security.md "Hostile input"): strings that break
 * parsers, filter clauses, cursors, If-Match and Range headers, and JSON
 * bodies shaped by a route's own JSON schema (generated from its zod schema)
 * with wrong types, extra members and malformed text mixed in.
 */

/** Real values of the running fixture: generated inputs reach past 404 and 400 through them. */
export interface Pools {
  /** Ids by what they name: records, sessions, assets, items, jobs, timeline, studios. */
  ids: Record<string, string[]>;
  etags: string[];
  cursors: string[];
  studios: string[];
  ns: string[];
  keys: string[];
  collections: string[];
  /** Folders holding a manifest (valid or not) for the launcher's install, link and update. */
  sources: string[];
  /** Files inside a studio's stage or data folder, and others outside, for adopt. */
  paths: string[];
}

const TRICKY = [
  '', ' ', '.', '..', '../..', '/', '//', 'a/../b', '%', '%00', '%ZZ', '%C3', '%2F', '%2e%2e', '\u0000', '\n', '\r\n', '\t',
  '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'null', 'true', 'false', '1e400', '-1e400', '-0', 'NaN',
  'Infinity', '9007199254740993', '0x10', '1.5', '-1', '0', '500', '501', '01ARZ3NDEKTSV4RRFFQ69G5FAV', '01ARZ3NDEKTSV4RRFFQ69G5FA',
  '7ZZZZZZZZZZZZZZZZZZZZZZZZZ', '\u00ff', '\ud800', '\udfff', '\u{1F600}', '\u202e', '\ufeff', '*', '"', "'", '\\', '`', '{}', '[]',
  '{"a":1}', 'shared', ':', '::', 'a:eq:', 'V1', 'A9', 'V0', 'image', 'all', 'self', '2026-11-22T10:01:24.123Z', '2026-13-45T99:99:99Z',
  '9999-12-31T23:59:59.999Z', '0000-01-01T00:00:00Z', 'x'.repeat(513), '\u00e9'.repeat(300), '/etc/passwd', '/proc/self/environ',
  'file:///etc/passwd', 'http://127.0.0.1:1/x', 'C:\\Windows', 'bytes=0-0', '"quoted"', 'W/"weak"', '<script>', 'SELECT 1', "' OR 1=1 --",
];

export function hostileString(maxRepeat = 300): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
    { weight: 4, arbitrary: fc.constantFrom(...TRICKY) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('x', '\u00e9', '%', '/', '\u{1F600}'), fc.nat({ max: maxRepeat })).map(([c, n]) => c.repeat(n)) },
  );
}

/** JSON nested `depth` levels deep, as text. */
export function nestedText(depth: number, kind: 'array' | 'object' = 'array'): string {
  return kind === 'array' ? `${'['.repeat(depth)}1${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

/** Any JSON value with hostile strings and numbers in it. */
export function wildJson(): fc.Arbitrary<unknown> {
  const leaf = fc.oneof(
    hostileString(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom(0, -1, 2 ** 53, 2 ** 64, 1e308, -1e308, 5e-324, 1.5),
    fc.boolean(),
    fc.constant(null),
  );
  const key = fc.oneof(hostileString(), fc.constantFrom('__proto__', 'constructor', 'id', 'etag', 'prompt'));
  return fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(key, tie('value'), { maxKeys: 4 }),
    ),
  })).value;
}

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minItems?: number;
  maxItems?: number;
  required?: string[];
};

/**
 * Values shaped like `schema`. Loose: any node may be anything at all, objects
 * may carry unknown members. Strict: every node is of its schema's type and
 * within its bounds, so the input reaches the handler (and its own checks).
 */
export function fromSchema(schema: JsonSchema, pools: Pools, name = '', depth = 0): fc.Arbitrary<unknown> {
  return fc.oneof(node(schema, pools, name, depth, true), node(schema, pools, name, depth, false));
}

function node(schema: JsonSchema, pools: Pools, name: string, depth: number, strict: boolean): fc.Arbitrary<unknown> {
  if (depth > 5) return strict ? fc.constant({}) : wildJson();
  const good = shaped(schema, pools, name, depth, strict);
  return strict ? good : fc.oneof({ weight: 5, arbitrary: good }, { weight: 1, arbitrary: wildJson() });
}

function shaped(s: JsonSchema, pools: Pools, name: string, depth: number, strict: boolean): fc.Arbitrary<unknown> {
  if (s.anyOf && s.anyOf.length > 0) return fc.oneof(...s.anyOf.map((x) => shaped({ ...s, anyOf: undefined, ...x }, pools, name, depth, strict)));
  if (s.enum) return fc.constantFrom(...s.enum);
  if (s.const !== undefined) return fc.constant(s.const);
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  if (types.length > 1) return fc.oneof(...types.map((t) => shaped({ ...s, type: t }, pools, name, depth, strict)));
  const min = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1e-3 : -1e6);
  const max = s.maximum ?? 1e6;
  switch (types[0]) {
    case 'object': {
      const props = s.properties ?? {};
      const known = fc.record(
        Object.fromEntries(Object.entries(props).map(([k, p]) => [k, node(p, pools, k, depth + 1, strict)])),
        { requiredKeys: strict ? (s.required ?? []) : [] },
      );
      const open = Object.keys(props).length === 0;
      if (strict && !open) return known;
      const extra = fc.dictionary(open && strict ? fc.stringMatching(/^[a-z_]{1,8}$/) : hostileString(), strict ? fc.jsonValue({ maxDepth: 2 }) : wildJson(), { maxKeys: 3 });
      return fc
        .tuple(known, open ? extra : fc.oneof({ weight: 5, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: extra }))
        .map(([a, b]) => ({ ...b, ...a }));
    }
    case 'array':
      return fc.array(s.items ? node(s.items, pools, name, depth + 1, strict) : wildJson(), {
        minLength: strict ? Math.min(s.minItems ?? 0, 2) : 0,
        maxLength: Math.min(s.maxItems ?? 6, 6),
      });
    case 'string':
      return strict ? namedString(name, pools) : fc.oneof({ weight: 3, arbitrary: namedString(name, pools) }, { weight: 1, arbitrary: hostileString(5000) });
    case 'integer': {
      const inRange = fc.integer({ min: Math.ceil(Math.max(min, -1e9)), max: Math.floor(Math.min(max, 1e9)) });
      return strict ? inRange : fc.oneof(inRange, fc.constantFrom(0, -1, 1, 2 ** 53, 2 ** 53 + 2, 1e21, 1.5, -0));
    }
    case 'number': {
      const inRange = fc.double({ min: Math.max(min, -1e9), max: Math.min(max, 1e9), noNaN: true });
      return strict ? inRange : fc.oneof(inRange, fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0, -1, 1e-9, 1 / 3, 360001, 1e308, 5e-324));
    }
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return strict ? fc.jsonValue({ maxDepth: 2 }) : wildJson();
  }
}

/** A string member named like an id or a path takes a real one most of the time. */
function namedString(name: string, pools: Pools): fc.Arbitrary<string> {
  const kind: Record<string, string> = { asset_id: 'assets', asset_ids: 'assets', session_id: 'sessions', timeline_id: 'timeline', id: 'records' };
  const pool = name === 'source' ? pools.sources : name === 'path' ? pools.paths : kind[name] ? (pools.ids[kind[name]!] ?? []) : [];
  const plain = fc.oneof(fc.stringMatching(/^[A-Za-z0-9 _.-]{1,12}$/), fc.constantFrom('V1', 'A1', 'auto', 'copy', 'h264', 'x.mp4'));
  return pool.length > 0 ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...pool) }, { weight: 1, arbitrary: plain }) : plain;
}

const FIELDS = ['title', 'n', 'id', 'created_at', 'updated_at', 'tags', 'a_b', '__proto__', '', '1x', 'a.b', 'A', 'constructor'];
const OPS = ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'contains', 'exists', 'EQ', 'like', '', 'eq:'];

/** One `where` clause: usually `field:op:value`, sometimes anything. */
export function whereClause(): fc.Arbitrary<string> {
  const value = fc.oneof(
    wildJson().map((v) => JSON.stringify(v) ?? 'null'),
    hostileString(),
    fc.constantFrom('2026-11-22T10:01:24.123Z', '2026-02-30T00:00:00Z', '[1,2', '[]', 'true', '"x"', '1e400', '-0'),
    fc.nat({ max: 300 }).map((d) => nestedText(d)),
    fc.array(fc.integer(), { maxLength: 300 }).map((a) => JSON.stringify(a)),
  );
  return fc.oneof(
    { weight: 5, arbitrary: fc.tuple(fc.oneof(fc.constantFrom(...FIELDS), hostileString()), fc.constantFrom(...OPS), value).map(([f, o, v]) => `${f}:${o}:${v}`) },
    { weight: 1, arbitrary: hostileString() },
  );
}

export function orderClause(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.tuple(fc.oneof(fc.constantFrom(...FIELDS), hostileString()), fc.constantFrom('asc', 'desc', 'ASC', '', 'up', 'asc:desc')).map(([f, d]) => `${f}:${d}`),
    hostileString(),
  );
}

/** A cursor: a real one (maybe tampered with or cut short), or not a cursor at all. */
export function cursor(pools: Pools): fc.Arbitrary<string> {
  const real = pools.cursors.length > 0 ? fc.constantFrom(...pools.cursors) : fc.constant('');
  return fc.oneof(
    real,
    fc.tuple(real, fc.nat(), fc.constantFrom('A', '_', '-', '=', '.', '%')).map(([c, i, ch]) => (c.length ? c.slice(0, i % c.length) + ch + c.slice((i % c.length) + 1) : ch)),
    fc.tuple(real, fc.nat()).map(([c, i]) => c.slice(0, c.length ? i % c.length : 0)),
    fc.base64String({ maxLength: 200 }).map((b) => b.replace(/\+/g, '-').replace(/\//g, '_')),
    hostileString(),
  );
}

export function ifMatch(pools: Pools): fc.Arbitrary<string> {
  const etag = pools.etags.length > 0 ? fc.constantFrom(...pools.etags) : fc.constant('x');
  return fc.oneof(
    fc.constant('*'),
    etag.map((e) => `"${e}"`),
    etag,
    etag.map((e) => `W/"${e}"`),
    fc.tuple(etag, etag).map(([a, b]) => `"${a}", ${b}`),
    fc.constantFrom('', ',', ' , ', '"', '""', '"a', '*, "a"', 'W/', 'W/"', '"a"b"', '\t'),
    hostileString(),
  );
}

export function rangeHeader(): fc.Arbitrary<string> {
  const n = fc.oneof(fc.nat({ max: 200 }), fc.constantFrom('', '18446744073709551616', '99999999999999999999999', '-1', '1.5', '0x1', ' 1'));
  return fc.oneof(
    fc.tuple(n, n).map(([a, b]) => `bytes=${a}-${b}`),
    n.map((a) => `bytes=-${a}`),
    fc.array(fc.tuple(n, n), { minLength: 2, maxLength: 4 }).map((rs) => `bytes=${rs.map(([a, b]) => `${a}-${b}`).join(',')}`),
    fc.constantFrom('bytes=', 'bytes', 'items=0-1', 'bytes=0-0,', 'bytes=--1', 'BYTES=0-1', 'bytes = 0-1'),
    hostileString(),
  );
}

/** A header value Node's client will send (no CR, LF or NUL; Latin-1 only). */
export function headerSafe(value: string): string {
  return value.replace(/[\r\n\0]/g, ' ').replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');
}

/** Percent-encodes every byte outside the unreserved set (a lone surrogate becomes U+FFFD first). */
export function pctEncode(value: string): string {
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

export interface Answer {
  status: number;
  type: string;
  text: string;
  ms: number;
}

export interface Sent {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

/**
 * One request on a fresh connection. Resolves with the status and, for JSON,
 * the body; a stream or file answer is cut after its headers. `null` when no
 * answer came within `ms`.
 */
export function sendOnce(port: number, req: Sent, ms: number): Promise<Answer | null> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (a: Answer | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      r.destroy();
      resolve(a);
    };
    const timer = setTimeout(() => finish(null), ms);
    const r = request({ host: '127.0.0.1', port, method: req.method, path: req.path, headers: req.headers, setHost: false, agent: false }, (res) => {
      const type = String(res.headers['content-type'] ?? '');
      const status = res.statusCode!;
      if (!type.includes('json') || req.method === 'HEAD') {
        finish({ status, type, text: '', ms: performance.now() - started });
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => finish({ status, type, text: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started }));
      res.on('error', (err) => {
        if (!done) reject(err);
      });
    });
    r.on('error', (err) => {
      if (!done) {
        done = true;
        clearTimeout(timer);
        reject(err);
      }
    });
    r.end(req.body);
  });
}
