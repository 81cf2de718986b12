import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { CursorCodec, integerPosition, listPage, MAX_LIMIT, pageQuery, pageReply, pageStart, stringPosition, toPage, type CursorValue } from '../../service/core/pagination';

const SECRET = Buffer.from('0123456789abcdef0123456789abcdef');
const codec = new CursorCodec(SECRET);
const badCursor = { name: 'ApiError', status: 400, code: 'bad_cursor' };

const LIST = 'kv:studio-a:settings';
const OTHER_LIST = 'kv:studio-a:other';
const FILTERED = 'kv:studio-a:settings?prefix=a';

/** Signs an arbitrary payload the way the codec documents it, to reach the checks behind the signature. */
function forge(binding: string, payloadText: string): string {
  const payload = Buffer.from(payloadText).toString('base64url');
  const sig = createHmac('sha256', SECRET).update(binding).update('\n').update(payload).digest().subarray(0, 16).toString('base64url');
  return `${payload}.${sig}`;
}

/** Replaces the character at i with a different base64url character that changes its top bits. */
function flipChar(text: string, i: number): string {
  const c = text[i]!;
  return text.slice(0, i) + (c === 'A' ? 'z' : 'A') + text.slice(i + 1);
}

describe('CursorCodec round trip', () => {
  const positions: CursorValue[][] = [
    [],
    ['key'],
    ['2026-11-22T10:01:24.123Z', '01JD0000000000000000000000'],
    [42, 'x'],
    [null, 'a'],
    [true, false],
    [-1.5, 'unicode ☃ "quoted" \\ and.dots'],
  ];
  for (const position of positions) {
    test(JSON.stringify(position), () => {
      const cursor = codec.encode(LIST, position);
      assert.match(cursor, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
      assert.deepEqual(codec.decode(LIST, cursor), position);
    });
  }
});

describe('CursorCodec refuses anything it did not hand out for this binding -> 400 bad_cursor', () => {
  const good = codec.encode(LIST, ['key-17', 17]);
  const [payload, sig] = good.split('.') as [string, string];
  const rows: { name: string; binding: string; cursor: string }[] = [
    { name: 'another list', binding: OTHER_LIST, cursor: good },
    { name: 'other filters', binding: FILTERED, cursor: good },
    { name: 'unfiltered binding, filtered cursor', binding: LIST, cursor: codec.encode(FILTERED, ['key-17', 17]) },
    { name: 'another secret', binding: LIST, cursor: new CursorCodec(Buffer.from('another secret')).encode(LIST, ['key-17', 17]) },
    { name: 'tampered payload (one character)', binding: LIST, cursor: `${flipChar(payload, 2)}.${sig}` },
    { name: 'payload of another position, old signature', binding: LIST, cursor: `${codec.encode(LIST, ['key-99', 99]).split('.')[0]}.${sig}` },
    { name: 'tampered signature (first character)', binding: LIST, cursor: `${payload}.${flipChar(sig, 0)}` },
    { name: 'tampered signature (middle character)', binding: LIST, cursor: `${payload}.${flipChar(sig, 10)}` },
    { name: 'signature truncated by one character', binding: LIST, cursor: good.slice(0, -1) },
    { name: 'signature cut off', binding: LIST, cursor: `${payload}.` },
    { name: 'no signature at all', binding: LIST, cursor: payload },
    { name: 'truncated into the payload', binding: LIST, cursor: good.slice(0, 5) },
    { name: 'signature only', binding: LIST, cursor: `.${sig}` },
    { name: 'two dots', binding: LIST, cursor: `${good}.${sig}` },
    { name: 'empty string', binding: LIST, cursor: '' },
    { name: 'a dot', binding: LIST, cursor: '.' },
    { name: 'garbage', binding: LIST, cursor: 'not-a-cursor' },
    { name: 'garbage with a dot', binding: LIST, cursor: 'abc.def' },
    { name: 'plain JSON', binding: LIST, cursor: '["key-17",17]' },
    { name: 'signed, payload not JSON', binding: LIST, cursor: forge(LIST, '["key-17"') },
    { name: 'signed, payload an object', binding: LIST, cursor: forge(LIST, '{"a":1}') },
    { name: 'signed, payload a string', binding: LIST, cursor: forge(LIST, '"key-17"') },
    { name: 'signed, payload holds an object', binding: LIST, cursor: forge(LIST, '[{}]') },
    { name: 'signed, payload holds an array', binding: LIST, cursor: forge(LIST, '[["a"]]') },
  ];
  for (const row of rows) {
    test(row.name, () => {
      assert.throws(() => codec.decode(row.binding, row.cursor), badCursor);
    });
  }

  test('forge() matches the documented format (so the rows above reach the payload checks)', () => {
    assert.equal(forge(LIST, '["key-17",17]'), good);
  });

  // Known service bug (reported): the signature is compared after a lenient
  // base64url decode, so spellings that decode to the same 16 bytes pass.
  test('a signature spelled differently but decoding to the same bytes is refused', () => {
    // 16 bytes are 22 base64url characters; the last one carries 2 bits and 4 unused ones.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sameBytes = alphabet[alphabet.indexOf(sig[sig.length - 1]!) + 1]!;
    assert.deepEqual(Buffer.from(sig.slice(0, -1) + sameBytes, 'base64url'), Buffer.from(sig, 'base64url'));
    assert.throws(() => codec.decode(LIST, `${payload}.${sig.slice(0, -1)}${sameBytes}`), badCursor);
    assert.throws(() => codec.decode(LIST, `${good}!!`), badCursor);
    assert.throws(() => codec.decode(LIST, `${payload}. ${sig}`), badCursor);
  });
});

describe('toPage', () => {
  interface Row {
    id: string;
    n: number;
  }
  const rows: Row[] = [1, 2, 3, 4, 5].map((n) => ({ id: `r${n}`, n }));
  const positionOf = (row: Row): CursorValue[] => [row.n, row.id];
  const shape = (row: Row) => ({ id: row.id });

  const cases: { name: string; fetched: number; limit: number; items: string[]; next: CursorValue[] | null }[] = [
    { name: 'limit + 1 rows: a next page, cursor at the last shown row', fetched: 4, limit: 3, items: ['r1', 'r2', 'r3'], next: [3, 'r3'] },
    { name: 'limit + 1 rows with limit 1', fetched: 2, limit: 1, items: ['r1'], next: [1, 'r1'] },
    { name: 'exactly limit rows: the last page', fetched: 3, limit: 3, items: ['r1', 'r2', 'r3'], next: null },
    { name: 'fewer rows than limit', fetched: 2, limit: 3, items: ['r1', 'r2'], next: null },
    { name: 'no rows', fetched: 0, limit: 3, items: [], next: null },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const page = toPage(rows.slice(0, c.fetched), c.limit, codec, LIST, positionOf, shape);
      assert.deepEqual(page.items, c.items.map((id) => ({ id })));
      if (c.next === null) assert.equal(page.next_cursor, null);
      else assert.deepEqual(codec.decode(LIST, page.next_cursor!), c.next);
    });
  }

  // Items of 10 bytes each ('{"id":"rN"}' is 11: ids padded below), cut by bytes as every list is (PAGE_BYTES).
  const text = (row: Row) => `r${row.n}`.padEnd(10, '.');
  const byteCases: { name: string; limit: number; maxBytes: number; items: number; next: CursorValue[] | null }[] = [
    { name: 'bytes cut before the limit: the row that would pass them only says more exist', limit: 5, maxBytes: 25, items: 2, next: [2, 'r2'] },
    { name: 'exactly at the bound: shown', limit: 5, maxBytes: 30, items: 3, next: [3, 'r3'] },
    { name: 'one item larger than the bound: still shown, with a cursor', limit: 5, maxBytes: 5, items: 1, next: [1, 'r1'] },
    { name: 'the limit before the bytes', limit: 2, maxBytes: 1000, items: 2, next: [2, 'r2'] },
    { name: 'every row fits: the last page', limit: 5, maxBytes: 1000, items: 5, next: null },
  ];
  for (const c of byteCases) {
    test(c.name, () => {
      const page = toPage(rows, c.limit, codec, LIST, positionOf, text, c.maxBytes);
      assert.deepEqual(page.items, rows.slice(0, c.items).map(text));
      if (c.next === null) assert.equal(page.next_cursor, null);
      else assert.deepEqual(codec.decode(LIST, page.next_cursor!), c.next);
    });
  }

  test('rows are read one at a time: none past the cut is read', () => {
    let read = 0;
    function* counted() {
      for (const row of rows) {
        read++;
        yield row;
      }
    }
    toPage(counted(), 5, codec, LIST, positionOf, text, 15);
    assert.equal(read, 2, 'the first row, and the one that passes the bound');
  });

  test('the next cursor is bound to the list it was made for', () => {
    const page = toPage(rows.slice(0, 4), 3, codec, LIST, positionOf, shape);
    assert.throws(() => codec.decode(OTHER_LIST, page.next_cursor!), badCursor);
  });
});

describe('pageQuery.limit', () => {
  const schema = z.object(pageQuery);
  const accepted: [string | undefined, number | undefined][] = [
    [undefined, undefined],
    ['1', 1],
    ['50', 50],
    ['500', MAX_LIMIT],
  ];
  for (const [input, output] of accepted) {
    test(`${JSON.stringify(input)} -> ${output}`, () => {
      const parsed = schema.safeParse(input === undefined ? {} : { limit: input });
      assert.ok(parsed.success, JSON.stringify(parsed.error?.issues));
      assert.equal(parsed.data.limit, output);
    });
  }
  for (const input of ['0', '501', '-1', '1.5', 'abc', '', ' 5', '5 ', '1e2', '0x10', '10000', '+5']) {
    test(`${JSON.stringify(input)} is refused`, () => {
      const parsed = schema.safeParse({ limit: input });
      assert.equal(parsed.success, false);
      const paths = new Set(parsed.error!.issues.map((i) => i.path.join('.')));
      assert.deepEqual([...paths], ['limit']);
    });
  }
});

describe('listPage: the paging block every list route shares', () => {
  const ids = Array.from({ length: 7 }, (_, i) => `id-${i}`);
  const list = {
    after: stringPosition,
    rows: (after: string | null, limit: number) => ids.filter((id) => after === null || id > after).slice(0, limit),
    position: (id: string) => [id],
    json: (id: string) => JSON.stringify(id),
  };
  const page = (query: { limit?: number; cursor?: string }, binding = LIST) => JSON.parse(listPage(codec, binding, query, list).rawJson);

  test('walks the list by its cursors, each page `limit` rows, the last with next_cursor null', () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 10; i++) {
      const p = page({ limit: 3, cursor });
      seen.push(...p.items);
      if (p.next_cursor === null) break;
      cursor = p.next_cursor;
    }
    assert.deepEqual(seen, ids);
    assert.equal(page({}).items.length, 7, 'the default limit (50) holds them all');
  });

  test('refuses an empty cursor, another list\'s cursor and a position of another shape (400 bad_cursor)', () => {
    const next = page({ limit: 2 }).next_cursor as string;
    assert.throws(() => page({ cursor: '' }), badCursor);
    assert.throws(() => page({ cursor: next }, OTHER_LIST), badCursor);
    assert.throws(() => page({ cursor: codec.encode(LIST, [1]) }), badCursor);
    assert.equal(integerPosition([42]), 42);
    assert.throws(() => integerPosition(['42']), badCursor);
    assert.throws(() => integerPosition([1.5]), badCursor);
  });

  test('pageStart and pageReply: a read worker\'s unsigned page is signed for its list', () => {
    assert.deepEqual(pageStart(codec, LIST, {}, stringPosition), { limit: 50, after: null });
    const reply = pageReply({ items: ['"a"'], last: ['a'] }, codec, LIST);
    const body = JSON.parse(reply.rawJson);
    assert.deepEqual(body.items, ['a']);
    assert.deepEqual(pageStart(codec, LIST, { limit: 5, cursor: body.next_cursor }, stringPosition), { limit: 5, after: 'a' });
  });
});
