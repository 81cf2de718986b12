import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { documentText, MAX_DEPTH, requireDocument } from '../../service/core/document';
import type { JsonObject } from '../../service/core/merge-patch';
import { nowIso, parseInstant } from '../../service/core/time';

const invalidDocument = { name: 'ApiError', status: 400, code: 'invalid_document' };

describe('parseInstant: valid RFC 3339 -> canonical millisecond UTC', () => {
  const rows: [input: string, canonical: string][] = [
    ['2026-11-22T10:01:24.123Z', '2026-11-22T10:01:24.123Z'],
    ['2026-11-22T10:01:24Z', '2026-11-22T10:01:24.000Z'],
    ['2026-11-22t10:01:24z', '2026-11-22T10:01:24.000Z'],
    ['2026-11-22T10:01:24.5Z', '2026-11-22T10:01:24.500Z'],
    ['2026-11-22T10:01:24.12Z', '2026-11-22T10:01:24.120Z'],
    ['2026-11-22T10:01:24.1239Z', '2026-11-22T10:01:24.123Z'],
    ['2026-11-22T10:01:24.999999999Z', '2026-11-22T10:01:24.999Z'],
    ['2026-11-22T10:01:24+00:00', '2026-11-22T10:01:24.000Z'],
    ['2026-11-22T10:01:24-00:00', '2026-11-22T10:01:24.000Z'],
    ['2026-11-22T10:01:24.5+01:00', '2026-11-22T09:01:24.500Z'],
    ['2026-11-22T10:01:24-05:30', '2026-11-22T15:31:24.000Z'],
    ['2026-11-22T00:30:00+01:00', '2026-11-21T23:30:00.000Z'],
    ['2026-12-31T23:30:00-01:00', '2027-01-01T00:30:00.000Z'],
    ['2026-03-01T00:30:00+01:00', '2026-02-28T23:30:00.000Z'],
    ['2024-02-29T12:00:00Z', '2024-02-29T12:00:00.000Z'],
    ['2026-11-22T23:59:59.999Z', '2026-11-22T23:59:59.999Z'],
  ];
  for (const [input, canonical] of rows) {
    test(`${input} -> ${canonical}`, () => {
      assert.equal(parseInstant(input), canonical);
    });
  }

  test('nowIso is canonical', () => {
    const now = nowIso();
    assert.match(now, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.equal(parseInstant(now), now);
  });
});

describe('parseInstant: not an instant -> null', () => {
  const rows: [input: string, why: string][] = [
    ['2026-02-30T00:00:00Z', 'February 30th'],
    ['2026-02-29T00:00:00Z', 'February 29th outside a leap year'],
    ['2026-04-31T00:00:00Z', 'April 31st'],
    ['2026-02-30T00:30:00+01:00', 'February 30th with an offset'],
    ['2026-13-01T00:00:00Z', 'month 13'],
    ['2026-00-10T00:00:00Z', 'month 0'],
    ['2026-11-00T00:00:00Z', 'day 0'],
    ['2026-11-32T00:00:00Z', 'day 32'],
    ['2026-11-22T24:00:00Z', 'hour 24'],
    ['2026-11-22T10:60:00Z', 'minute 60'],
    ['2026-11-22T10:01:61Z', 'second 61'],
    ['2026-12-31T23:59:60Z', 'a leap second (a JavaScript instant cannot hold it)'],
    ['2026-11-22T10:01:24', 'missing zone'],
    ['2026-11-22T10:01:24.123', 'missing zone with a fraction'],
    ['2026-11-22', 'a date only'],
    ['10:01:24Z', 'a time only'],
    ['2026-11-22 10:01:24Z', 'space instead of T'],
    ['2026-11-22T10:01Z', 'no seconds'],
    ['2026-11-22T10:01:24.Z', 'empty fraction'],
    ['2026-11-22T10:01:24+0100', 'offset without a colon'],
    ['2026-11-22T10:01:24+01', 'offset without minutes'],
    ['2026-11-22T10:01:24+01:60', 'offset minute 60'],
    ['2026-11-22T10:01:24+25:00', 'offset hour 25'],
    ['2026-11-22T10:01:24 Z', 'space before the zone'],
    [' 2026-11-22T10:01:24Z', 'leading space'],
    ['2026-11-22T10:01:24Z ', 'trailing space'],
    ['26-11-22T10:01:24Z', 'two-digit year'],
    ['+002026-11-22T10:01:24Z', 'expanded year'],
    ['1763805684123', 'epoch milliseconds'],
    ['Sun, 22 Nov 2026 10:01:24 GMT', 'an HTTP date'],
    ['garbage', 'garbage'],
    ['', 'empty'],
  ];
  for (const [input, why] of rows) {
    test(`${why}: ${JSON.stringify(input)}`, () => {
      assert.equal(parseInstant(input), null);
    });
  }
});

/** A chain of `levels` nested objects (or arrays), built without recursion. */
function nested(levels: number, kind: 'object' | 'array' = 'object'): Record<string, unknown> {
  let inner: unknown = kind === 'object' ? {} : [];
  for (let i = 1; i < levels - 1; i++) inner = kind === 'object' ? { a: inner } : [inner];
  return levels === 1 ? {} : { a: inner };
}

describe('requireDocument', () => {
  const objects: [name: string, value: Record<string, unknown>][] = [
    ['empty object', {}],
    ['flat object', { a: 1, b: 'x', c: null, d: true }],
    ['object holding arrays', { list: [1, [2, [3]], { x: [] }] }],
    ['the largest and smallest doubles', { max: Number.MAX_VALUE, min: -Number.MAX_VALUE, tiny: 5e-324 }],
    [`nested exactly MAX_DEPTH (${MAX_DEPTH}) levels`, nested(MAX_DEPTH)],
    [`arrays nested up to MAX_DEPTH levels`, nested(MAX_DEPTH, 'array')],
  ];
  for (const [name, value] of objects) {
    test(`${name} passes and is returned as is`, () => {
      assert.equal(requireDocument(value, 'The value'), value);
    });
  }

  const refused: [name: string, value: unknown][] = [
    ['null', null],
    ['undefined', undefined],
    ['an array', []],
    ['an array of objects', [{ a: 1 }]],
    ['a string', 'text'],
    ['a JSON object in a string', '{"a":1}'],
    ['a number', 42],
    ['zero', 0],
    ['true', true],
    ['false', false],
    [`nested MAX_DEPTH + 1 (${MAX_DEPTH + 1}) levels`, nested(MAX_DEPTH + 1)],
    ['arrays nested MAX_DEPTH + 1 levels', nested(MAX_DEPTH + 1, 'array')],
    ['a deep branch next to a shallow one', { shallow: 1, deep: nested(MAX_DEPTH) }],
    ['nested 100000 levels (no stack overflow)', nested(100_000)],
    ['arrays nested 100000 levels (no stack overflow)', nested(100_000, 'array')],
    ['a number too large for a double (JSON 1e400)', JSON.parse('{"a":1e400}')],
    ['a negative one in an array', JSON.parse('{"a":[1,-1e400]}')],
    ['a deep one', JSON.parse('{"a":{"b":{"c":1e999}}}')],
  ];
  for (const [name, value] of refused) {
    test(`${name} -> 400 invalid_document`, () => {
      assert.throws(() => requireDocument(value, 'The value'), invalidDocument);
    });
  }

  test('the message names what was checked', () => {
    assert.throws(() => requireDocument([], 'The session state'), (e: Error) => e.message.startsWith('The session state '));
  });
});

describe('documentText', () => {
  const rows: [doc: JsonObject, text: string, size: number][] = [
    [{}, '{}', 2],
    [{ a: 1 }, '{"a":1}', 7],
    [{ a: 'é' }, '{"a":"é"}', 10], // é is 2 bytes in UTF-8
    [{ a: '☃' }, '{"a":"☃"}', 11], // 3 bytes
    [{ a: '😀' }, '{"a":"😀"}', 12], // 4 bytes, 2 UTF-16 units
    [{ 'ключ': 'значение' }, '{"ключ":"значение"}', 31],
  ];
  for (const [doc, text, size] of rows) {
    test(`${text} is ${size} bytes`, () => {
      assert.deepEqual(documentText(doc), { text, size });
      assert.equal(size, Buffer.byteLength(text, 'utf8'));
    });
  }
});
