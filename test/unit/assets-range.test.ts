import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ifRangeHolds, noneMatch, parseRange, type RangeAnswer } from '../../service/assets/range';

/** Range parsing for GET /assets/{id} (RFC 9110 §14), as a table. */

const whole: RangeAnswer = { kind: 'whole' };
const unsat: RangeAnswer = { kind: 'unsatisfiable' };
const part = (start: number, end: number): RangeAnswer => ({ kind: 'partial', start, end });

describe('parseRange on a 1000-byte file', () => {
  const rows: [string | undefined, RangeAnswer][] = [
    [undefined, whole],
    ['bytes=0-0', part(0, 0)],
    ['bytes=0-9', part(0, 9)],
    ['bytes=10-19', part(10, 19)],
    ['bytes=990-999', part(990, 999)],
    ['bytes=990-5000', part(990, 999)],
    ['bytes=500-', part(500, 999)],
    ['bytes=0-', part(0, 999)],
    ['bytes=-1', part(999, 999)],
    ['bytes=-100', part(900, 999)],
    ['bytes=-1000', part(0, 999)],
    ['bytes=-5000', part(0, 999)],
    ['BYTES=1-2', part(1, 2)],
    [' bytes = 1-2 ', part(1, 2)],
    ['bytes=1-2,', part(1, 2)],
    ['bytes=0-99999999999999999999', part(0, 999)],
    // unsatisfiable: starts at or past the end, or an empty suffix
    ['bytes=1000-', unsat],
    ['bytes=1000-2000', unsat],
    ['bytes=5000-6000', unsat],
    ['bytes=-0', unsat],
    ['bytes=99999999999999999999-', unsat],
    // ignored: several ranges, other units, bad syntax, last before first
    ['bytes=0-1,5-6', whole],
    ['bytes=0-1, 2000-3000', whole],
    ['items=0-1', whole],
    ['bytes=', whole],
    ['bytes=abc', whole],
    ['bytes=1-a', whole],
    ['bytes=--1', whole],
    ['bytes=5-1', whole],
    ['bytes 0-1', whole],
    ['bytes=0x10-', whole],
    ['bytes=-', whole],
  ];
  for (const [header, expected] of rows) {
    test(`${JSON.stringify(header)} -> ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(parseRange(header, 1000), expected);
    });
  }
});

describe('parseRange on an empty file', () => {
  for (const header of ['bytes=0-', 'bytes=0-0', 'bytes=-1']) {
    test(`${header} is unsatisfiable`, () => assert.deepEqual(parseRange(header, 0), unsat));
  }
  test('no Range is the whole (empty) file', () => assert.deepEqual(parseRange(undefined, 0), whole));
});

describe('If-None-Match and If-Range', () => {
  const rows: [string | undefined, boolean][] = [
    [undefined, false],
    ['"abc"', true],
    ['W/"abc"', true],
    ['"x", "abc"', true],
    ['*', true],
    ['"abd"', false],
    ['abc', false],
  ];
  for (const [header, expected] of rows) {
    test(`If-None-Match ${JSON.stringify(header)} -> ${expected}`, () => assert.equal(noneMatch(header, 'abc'), expected));
  }
  test('If-Range holds when absent or the strong tag itself', () => {
    assert.equal(ifRangeHolds(undefined, 'abc'), true);
    assert.equal(ifRangeHolds('"abc"', 'abc'), true);
    assert.equal(ifRangeHolds('W/"abc"', 'abc'), false);
    assert.equal(ifRangeHolds('"old"', 'abc'), false);
    assert.equal(ifRangeHolds('Wed, 21 Oct 2015 07:28:00 GMT', 'abc'), false);
  });
});
