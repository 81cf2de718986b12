import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { ApiError } from './errors';

/**
 * Keyset pagination. A cursor is the sort key of the last row of a page,
 * serialised and signed with the data dir's secret together with a binding
 * string naming the list and its filters: a cursor is only good for the list
 * (and the filters) that handed it out, and any change to it is detected.
 *
 *   cursor = base64url(JSON(position)) "." base64url(HMAC-SHA256(secret, binding "\n" payload))[0..16]
 */

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 500;

export const pageQuery = {
  limit: z
    .string()
    .regex(/^[0-9]{1,4}$/, 'limit must be an integer from 1 to 500')
    .transform(Number)
    .refine((n) => n >= 1 && n <= MAX_LIMIT, 'limit must be an integer from 1 to 500')
    .optional()
    .meta({ description: 'Page size, 1..500 (default 50).', type: 'integer', minimum: 1, maximum: MAX_LIMIT }),
  cursor: z.string().max(4096).optional().meta({ description: 'The previous page\'s `next_cursor`, unchanged.' }),
};

export type CursorValue = string | number | boolean | null;

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export class CursorCodec {
  constructor(private readonly secret: Buffer) {}

  encode(binding: string, position: readonly CursorValue[]): string {
    const payload = Buffer.from(JSON.stringify(position)).toString('base64url');
    return `${payload}.${this.sign(binding, payload)}`;
  }

  /** The position a cursor names, or 400 `bad_cursor` for anything else. */
  decode(binding: string, cursor: string): CursorValue[] {
    const dot = cursor.indexOf('.');
    if (dot <= 0) throw ApiError.badCursor();
    const payload = cursor.slice(0, dot);
    // Compare the signature as text: base64url decoding is lenient (padding,
    // stray characters, unused low bits), so bytes alone would let altered
    // text through.
    const given = Buffer.from(cursor.slice(dot + 1), 'latin1');
    const expected = Buffer.from(this.sign(binding, payload), 'latin1');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw ApiError.badCursor();
    let position: unknown;
    try {
      position = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw ApiError.badCursor();
    }
    if (!Array.isArray(position) || !position.every(isCursorValue)) throw ApiError.badCursor();
    return position as CursorValue[];
  }

  private sign(binding: string, payload: string): string {
    return createHmac('sha256', this.secret).update(binding).update('\n').update(payload).digest().subarray(0, 16).toString('base64url');
  }
}

function isCursorValue(v: unknown): v is CursorValue {
  return v === null || ['string', 'number', 'boolean'].includes(typeof v);
}

/** The position of a cursor that names one string (an id): 400 `bad_cursor` for any other. */
export function stringPosition(values: readonly CursorValue[]): string {
  if (values.length !== 1 || typeof values[0] !== 'string') throw ApiError.badCursor();
  return values[0];
}

/** The position of a cursor that names one integer (a sequence or revision number): 400 `bad_cursor` for any other. */
export function integerPosition(values: readonly CursorValue[]): number {
  const [n] = values;
  if (values.length !== 1 || typeof n !== 'number' || !Number.isSafeInteger(n)) throw ApiError.badCursor();
  return n;
}

/**
 * Bytes of item JSON a page may hold (docs/api.md "Pages"). Every list
 * route cuts its pages here, so no studio's page can grow into hundreds of
 * MB (a V8 string has a length limit; building one holds the event loop):
 * a page stops at `limit` items or once its items' JSON passes this many
 * bytes, whichever comes first, and always shows at least one item.
 */
export const PAGE_BYTES = 8 * 1024 * 1024;

/**
 * Turns up to `limit + 1` rows into a page. Rows are taken one at a time
 * (better-sqlite3's `iterate()`), so rows past the cut are never read: the
 * (limit + 1)th row, or the row whose item would take the page past
 * `maxBytes`, is not shown and only says that another page exists; the
 * cursor names the last row shown. The first item is always shown, whatever
 * its size, so a page is never empty while rows remain.
 */
export function toPage<Row, Item>(
  rows: Iterable<Row>,
  limit: number,
  codec: CursorCodec,
  binding: string,
  positionOf: (row: Row) => CursorValue[],
  shape: (row: Row) => Item,
  maxBytes = PAGE_BYTES,
): Page<Item> {
  return signPage(unsignedPage(rows, limit, positionOf, shape, maxBytes), codec, binding);
}

/** A page before its cursor is signed: what a read worker hands back (it holds no secret). */
export interface UnsignedPage<Item> {
  items: Item[];
  /** The position of the last row shown, when another page follows. */
  last: CursorValue[] | null;
}

/** The page cut of `toPage`, without the signature (read workers). */
export function unsignedPage<Row, Item>(
  rows: Iterable<Row>,
  limit: number,
  positionOf: (row: Row) => CursorValue[],
  shape: (row: Row) => Item,
  maxBytes = PAGE_BYTES,
): UnsignedPage<Item> {
  const items: Item[] = [];
  let bytes = 0;
  let last: Row | undefined;
  for (const row of rows) {
    if (items.length >= limit) return { items, last: positionOf(last!) };
    const item = shape(row);
    bytes += itemBytes(item);
    if (items.length > 0 && bytes > maxBytes) return { items, last: positionOf(last!) };
    items.push(item);
    last = row;
  }
  return { items, last: null };
}

/** An item's size as the page's JSON will hold it (items are JSON text, or small objects). */
function itemBytes(item: unknown): number {
  return typeof item === 'string' ? Buffer.byteLength(item, 'utf8') : Buffer.byteLength(JSON.stringify(item) ?? '', 'utf8');
}

export function signPage<Item>(page: UnsignedPage<Item>, codec: CursorCodec, binding: string): Page<Item> {
  return { items: page.items, next_cursor: page.last === null ? null : codec.encode(binding, page.last) };
}

/** A page whose items are already JSON text (rows that store JSON), as the page's JSON text. */
export function pageJson(page: Page<string>): string {
  return `{"items":[${page.items.join(',')}],"next_cursor":${JSON.stringify(page.next_cursor)}}`;
}

/** What a list's query carries for paging (`pageQuery`, parsed). */
export interface PageQuery {
  limit?: number;
  cursor?: string;
}

/**
 * Where a list's page starts: its size (default 50) and the position its
 * cursor names, read by `read` (400 `bad_cursor` for a position of another
 * shape), or null for the first page. A cursor is checked against the list's
 * binding; an empty one was never handed out and is 400 `bad_cursor` too.
 */
export function pageStart<After>(
  codec: CursorCodec,
  binding: string,
  query: PageQuery,
  read: (position: CursorValue[]) => After,
): { limit: number; after: After | null } {
  return { limit: query.limit ?? DEFAULT_LIMIT, after: query.cursor === undefined ? null : read(codec.decode(binding, query.cursor)) };
}

/** A page of JSON items as a list route's reply, its cursor signed here (pages from a read worker come unsigned). */
export function pageReply(page: Page<string> | UnsignedPage<string>, codec: CursorCodec, binding: string): { status: 200; rawJson: string } {
  const signed = 'last' in page ? signPage(page, codec, binding) : page;
  return { status: 200, rawJson: pageJson(signed) };
}

/**
 * The paging every list route on the main thread shares (docs/api.md
 * "Pages"): where the page starts, up to `limit + 1` rows read after that
 * position, the page cut and its cursor signed, as JSON text.
 */
export function listPage<Row, After>(
  codec: CursorCodec,
  binding: string,
  query: PageQuery,
  list: {
    after: (position: CursorValue[]) => After;
    rows: (after: After | null, limit: number) => Iterable<Row>;
    position: (row: Row) => CursorValue[];
    json: (row: Row) => string;
  },
): { status: 200; rawJson: string } {
  const { limit, after } = pageStart(codec, binding, query, list.after);
  return pageReply(toPage(list.rows(after, limit + 1), limit, codec, binding, list.position, list.json), codec, binding);
}
