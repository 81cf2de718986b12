import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseClause, parseOrder, parseValue, parseWhere, type Clause, type Order } from '../../service/records/filter';

/** The records filter parser (docs/api.md "Queries: `where`"): text in, typed AST or bad_filter out. */

const at = '2026-11-22T10:01:24.123Z';
const instant = (ms: string, finer = false) => ({ ms, finer });

describe('parseValue: JSON when valid, else the text', () => {
  const rows: [string, unknown][] = [
    ['1', 1],
    ['1.0', 1],
    ['-2.5e3', -2500],
    ['"1"', '1'],
    ['true', true],
    ['null', null],
    ['[1,"a"]', [1, 'a']],
    ['{"a":1}', { a: 1 }],
    ['abc', 'abc'],
    ['', ''],
    ['a:b:c', 'a:b:c'],
    ['"unterminated', '"unterminated'],
    [' 7 ', 7],
    ['日本', '日本'],
    ['01ARZ3NDEKTSV4RRFFQ69G5FAV', '01ARZ3NDEKTSV4RRFFQ69G5FAV'],
  ];
  for (const [text, expected] of rows) test(JSON.stringify(text), () => assert.deepEqual(parseValue(text), expected));
});

describe('parseClause: accepted clauses', () => {
  const rows: [string, Clause][] = [
    ['title:eq:hello', { target: 'doc', field: 'title', op: 'eq', value: 'hello' }],
    ['n:eq:1', { target: 'doc', field: 'n', op: 'eq', value: 1 }],
    ['n:eq:"1"', { target: 'doc', field: 'n', op: 'eq', value: '1' }],
    ['n:eq:null', { target: 'doc', field: 'n', op: 'eq', value: null }],
    ['url:eq:http://x/y:z', { target: 'doc', field: 'url', op: 'eq', value: 'http://x/y:z' }],
    ['s:eq:', { target: 'doc', field: 's', op: 'eq', value: '' }],
    ['_x9:ne:[1]', { target: 'doc', field: '_x9', op: 'ne', value: [1] }],
    ['n:lt:5', { target: 'doc', field: 'n', op: 'lt', value: 5 }],
    ['s:gte:abc', { target: 'doc', field: 's', op: 'gte', value: 'abc' }],
    ['b:gt:false', { target: 'doc', field: 'b', op: 'gt', value: false }],
    ['n:in:[1,"1",null]', { target: 'doc', field: 'n', op: 'in', values: [1, '1', null] }],
    ['n:in:[]', { target: 'doc', field: 'n', op: 'in', values: [] }],
    ['tags:contains:red', { target: 'doc', field: 'tags', op: 'contains', value: 'red' }],
    ['tags:contains:{"a":1}', { target: 'doc', field: 'tags', op: 'contains', value: { a: 1 } }],
    ['n:exists:true', { target: 'doc', field: 'n', op: 'exists', value: true }],
    ['n:exists:false', { target: 'doc', field: 'n', op: 'exists', value: false }],
    ['id:eq:01ARZ3NDEKTSV4RRFFQ69G5FAV', { target: 'id', op: 'eq', value: '01ARZ3NDEKTSV4RRFFQ69G5FAV' }],
    ['id:eq:71234567890123456789012345', { target: 'id', op: 'eq', value: '71234567890123456789012345' }],
    ['id:gt:"01ARZ"', { target: 'id', op: 'gt', value: '01ARZ' }],
    ['id:in:["A","B"]', { target: 'id', op: 'in', values: ['A', 'B'] }],
    ['id:contains:ARZ', { target: 'id', op: 'contains', value: 'ARZ' }],
    ['id:exists:true', { target: 'id', op: 'exists', value: true }],
    [`created_at:eq:${at}`, { target: 'created_at', op: 'eq', value: instant(at) }],
    [`created_at:lt:"${at}"`, { target: 'created_at', op: 'lt', value: instant(at) }],
    ['updated_at:gte:2026-11-22T11:01:24+01:00', { target: 'updated_at', op: 'gte', value: instant('2026-11-22T10:01:24.000Z') }],
    ['updated_at:gt:2026-11-22T10:01:24.1239Z', { target: 'updated_at', op: 'gt', value: instant('2026-11-22T10:01:24.123Z', true) }],
    ['updated_at:eq:2026-11-22T10:01:24.1230Z', { target: 'updated_at', op: 'eq', value: instant('2026-11-22T10:01:24.123Z') }],
    [`created_at:in:["${at}"]`, { target: 'created_at', op: 'in', values: [instant(at)] }],
  ];
  for (const [text, expected] of rows) test(text, () => assert.deepEqual(parseClause(text), expected));
});

describe('parseClause: refusals are bad_filter naming the clause and the reason', () => {
  const rows: [string, RegExp][] = [
    ['', /expected field:op:value/],
    ['title', /expected field:op:value/],
    ['title:eq', /expected field:op:value/],
    [':eq:1', /field name is empty/],
    ['a.b:eq:1', /top-level key/],
    ['a[0]:eq:1', /top-level key/],
    ['$.a:eq:1', /top-level key/],
    ["a'b:eq:1", /top-level key/],
    ['a"b:eq:1', /top-level key/],
    ['a b:eq:1', /top-level key/],
    ['1a:eq:1', /top-level key/],
    ['é:eq:1', /top-level key/],
    ['a-b:eq:1', /top-level key/],
    ['a;DROP TABLE records:eq:1', /top-level key/],
    ['etag:eq:x', /etag/],
    ['a:EQ:1', /unknown operator "EQ"/],
    ['a:like:1', /unknown operator "like"/],
    ['a::1', /unknown operator ""/],
    ['a:in:1', /in takes a JSON array, not a number/],
    ['a:in:abc', /in takes a JSON array, not a string/],
    ['a:in:{"a":1}', /in takes a JSON array, not an object/],
    [`a:in:[${Array(257).fill(1).join(',')}]`, /at most 256/],
    ['a:exists:yes', /exists takes true or false/],
    ['a:exists:1', /exists takes true or false/],
    ['a:lt:null', /lt compares a number, a string or a boolean, not null/],
    ['a:gt:[1]', /gt compares a number, a string or a boolean, not an array/],
    ['a:gte:{}', /gte compares .* not an object/],
    ['created_at:eq:yesterday', /created_at compares RFC 3339 instants/],
    ['created_at:eq:1700000000', /RFC 3339/],
    ['created_at:eq:2026-02-30T00:00:00Z', /RFC 3339/],
    ['created_at:eq:2026-11-22', /RFC 3339/],
    ['updated_at:lt:null', /RFC 3339/],
    ['created_at:contains:2026', /contains does not apply to created_at/],
    ['updated_at:exists:true', /exists does not apply to updated_at/],
    ['created_at:in:["nope"]', /RFC 3339/],
    ['id:in:[1]', /array of strings/],
    ['id:exists:maybe', /exists takes true or false/],
    [`a:eq:${'['.repeat(5000)}${']'.repeat(5000)}`, /nested deeper than 100 levels/],
    [`a:in:[${'{"a":'.repeat(101)}1${'}'.repeat(101)}]`, /nested deeper than 100 levels/],
  ];
  for (const [text, reason] of rows) {
    test(JSON.stringify(text), () => {
      assert.throws(
        () => parseWhere(['ok:eq:1', text]),
        (err: { status: number; code: string; message: string; details: { index: number; clause: string; reason: string } }) => {
          assert.equal(err.status, 400);
          assert.equal(err.code, 'bad_filter');
          assert.match(err.message, /^where clause 2 /);
          assert.match(err.details.reason, reason);
          assert.equal(err.details.index, 2);
          assert.equal(err.details.clause, text);
          return true;
        },
      );
    });
  }

  test('a very long clause is cut in the message but whole in details', () => {
    const text = `a:eq:${'x'.repeat(5000)}`;
    assert.doesNotThrow(() => parseClause(text));
    const bad = `a:in:${'x'.repeat(5000)}`;
    assert.throws(
      () => parseClause(bad),
      (err: { message: string; details: { clause: string } }) => err.message.length < 400 && err.details.clause === bad,
    );
  });
});

describe('parseWhere: clause count', () => {
  test('eight clauses are fine', () => assert.equal(parseWhere(Array(8).fill('a:eq:1')).length, 8));
  test('nine are bad_filter', () =>
    assert.throws(() => parseWhere(Array(9).fill('a:eq:1')), { code: 'bad_filter', details: { limit: 8, count: 9 } }));
  test('none is fine', () => assert.deepEqual(parseWhere([]), []));
});

describe('parseOrder', () => {
  const rows: [string | undefined, Order][] = [
    [undefined, { field: { target: 'created_at' }, dir: 'desc' }],
    ['created_at:asc', { field: { target: 'created_at' }, dir: 'asc' }],
    ['updated_at:desc', { field: { target: 'updated_at' }, dir: 'desc' }],
    ['id:asc', { field: { target: 'id' }, dir: 'asc' }],
    ['price:desc', { field: { target: 'doc', field: 'price' }, dir: 'desc' }],
  ];
  for (const [text, expected] of rows) test(String(text), () => assert.deepEqual(parseOrder(text), expected));

  const bad: [string, RegExp][] = [
    ['price', /expected field:asc or field:desc/],
    ['price:ASC', /asc or desc/],
    ['price:up', /asc or desc/],
    ['price:', /asc or desc/],
    [':asc', /field name is empty/],
    ['a.b:asc', /top-level key/],
    ['price:asc,name:desc', /one field/],
    ['a:b:asc', /one field/],
    ['etag:asc', /etag/],
  ];
  for (const [text, reason] of bad) {
    test(`refuses ${JSON.stringify(text)}`, () =>
      assert.throws(() => parseOrder(text), (err: { code: string; details: { reason: string } }) => {
        assert.equal(err.code, 'bad_filter');
        assert.match(err.details.reason, reason);
        return true;
      }));
  }
});
