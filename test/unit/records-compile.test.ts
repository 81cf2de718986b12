import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { clauseSql, compareKeys, compileQuery, indexKeySql, jsonPath, keyOf, stepsOf, type Position } from '../../service/records/compile';
import { parseClause, parseOrder } from '../../service/records/filter';

/** The SQL compiler: values always bound, SQL text only from the compiler's own fragments. */

const NONE = new Set<string>();
const compile = (text: string, indexed: ReadonlySet<string> = NONE) => clauseSql(parseClause(text), indexed);

describe('keyOf: one sort key per JSON value', () => {
  const rows: [unknown, unknown][] = [
    [1, 1],
    [1.5, 1.5],
    ['1', '1'],
    ['', ''],
    [null, Buffer.from([1])],
    [false, Buffer.from([2])],
    [true, Buffer.from([3])],
    [[1, 'a'], Buffer.from('\u0004[1,"a"]')],
    [{ a: [null] }, Buffer.from('\u0005{"a":[null]}')],
  ];
  for (const [value, key] of rows) test(JSON.stringify(value), () => assert.deepEqual(keyOf(value as never), key));
});

describe('clauses compile to bound parameters', () => {
  const rows: { clause: string; sql: RegExp; params: unknown[] }[] = [
    { clause: 'a:eq:1', sql: /^\(CASE json_type\(doc, \?\) .* END\) = \?$/, params: [...Array(5).fill('$."a"'), 1] },
    { clause: 'a:eq:"x"', sql: / = \?$/, params: [...Array(5).fill('$."a"'), 'x'] },
    { clause: 'a:eq:null', sql: / = \?$/, params: [...Array(5).fill('$."a"'), Buffer.from([1])] },
    { clause: 'a:ne:true', sql: / IS NOT \?$/, params: [...Array(5).fill('$."a"'), Buffer.from([3])] },
    { clause: 'a:in:[1,"b"]', sql: / IN \(\?, \?\)$/, params: [...Array(5).fill('$."a"'), 1, 'b'] },
    { clause: 'a:in:[]', sql: /^0$/, params: [] },
    { clause: 'a:exists:true', sql: / IS NOT NULL$/, params: Array(5).fill('$."a"') },
    { clause: 'a:exists:false', sql: / IS NULL$/, params: Array(5).fill('$."a"') },
    { clause: 'a:lt:5', sql: / < \? AND .* >= -9e999\)$/, params: [...Array(5).fill('$."a"'), 5, ...Array(5).fill('$."a"')] },
    { clause: 'a:gte:"m"', sql: / >= \? AND .* < x''\)$/, params: [...Array(5).fill('$."a"'), 'm', ...Array(5).fill('$."a"')] },
    { clause: 'a:gt:false', sql: / > \? AND .* < x'04'\)$/, params: [...Array(5).fill('$."a"'), Buffer.from([2]), ...Array(5).fill('$."a"')] },
    { clause: 'a:contains:1', sql: /^\(json_type\(doc, \?\) = 'array' AND EXISTS \(SELECT 1 FROM json_each\(records\.doc, \?\) WHERE .* = \?\)\)$/, params: ['$."a"', '$."a"', 1] },
    { clause: 'a:contains:x', sql: /instr\(doc ->> \?, \?\) > 0\) OR/, params: ['$."a"', '$."a"', 'x', '$."a"', '$."a"', 'x'] },
    { clause: 'id:eq:01ARZ3NDEKTSV4RRFFQ69G5FAV', sql: /^id = \?$/, params: ['01ARZ3NDEKTSV4RRFFQ69G5FAV'] },
    { clause: 'id:lte:Z', sql: /^id <= \?$/, params: ['Z'] },
    { clause: 'id:in:["A","B"]', sql: /^id IN \(\?, \?\)$/, params: ['A', 'B'] },
    { clause: 'id:contains:RZ', sql: /^instr\(id, \?\) > 0$/, params: ['RZ'] },
    { clause: 'id:exists:false', sql: /^0$/, params: [] },
    { clause: 'created_at:eq:2026-11-22T10:01:24.123Z', sql: /^created_at = \?$/, params: ['2026-11-22T10:01:24.123Z'] },
    { clause: 'updated_at:ne:2026-11-22T10:01:24Z', sql: /^updated_at <> \?$/, params: ['2026-11-22T10:01:24.000Z'] },
    // Finer than a millisecond: equal to no stored instant; ranges move to the millisecond below.
    { clause: 'created_at:eq:2026-11-22T10:01:24.1235Z', sql: /^0$/, params: [] },
    { clause: 'created_at:ne:2026-11-22T10:01:24.1235Z', sql: /^1$/, params: [] },
    { clause: 'created_at:lt:2026-11-22T10:01:24.1235Z', sql: /^created_at <= \?$/, params: ['2026-11-22T10:01:24.123Z'] },
    { clause: 'created_at:gte:2026-11-22T10:01:24.1235Z', sql: /^created_at > \?$/, params: ['2026-11-22T10:01:24.123Z'] },
    { clause: 'created_at:gt:2026-11-22T10:01:24.1235Z', sql: /^created_at > \?$/, params: ['2026-11-22T10:01:24.123Z'] },
    { clause: 'created_at:in:["2026-11-22T10:01:24.1235Z"]', sql: /^0$/, params: [] },
  ];
  for (const row of rows) {
    test(row.clause, () => {
      const out = compile(row.clause);
      assert.match(out.sql, row.sql);
      assert.deepEqual(out.params, row.params);
      assert.equal(out.sql.split('?').length - 1, out.params.length, 'one parameter per placeholder');
    });
  }

  test('hostile values never reach the SQL text', () => {
    for (const value of ["'); DROP TABLE records; --", '" OR 1=1 --', '\u0000', "x'00'", '$."a"', ':eq:1']) {
      for (const op of ['eq', 'ne', 'contains', 'lt', 'gt']) {
        const out = compile(`a:${op}:${value}`);
        assert.ok(!out.sql.includes(value), `${op} ${value}: ${out.sql}`);
        assert.ok(out.params.includes(value));
      }
      const id = compile(`id:eq:${value}`);
      assert.ok(!id.sql.includes(value) && id.params.includes(value));
    }
  });
});

describe('declared indexes: the literal path is the index expression', () => {
  test('an indexed field is written with its path as a literal, the way the index is', () => {
    const out = compile('price:eq:3', new Set(['price']));
    assert.equal(out.sql, `${indexKeySql('price')} = ?`);
    assert.deepEqual(out.params, [3]);
    assert.match(indexKeySql('price'), /json_type\(doc, '\$\."price"'\)/);
  });
  test('another field of the same query still binds its path', () => {
    const out = compile('other:eq:3', new Set(['price']));
    assert.ok(!out.sql.includes('other'));
  });
  test('jsonPath refuses anything but a field name', () => {
    for (const bad of ["a'b", 'a"b', 'a.b', '', '1a', 'é']) assert.throws(() => jsonPath(bad));
    assert.equal(jsonPath('_a9'), '$."_a9"');
  });
});

describe('steps of a page', () => {
  const count = (order: string, after: Position | null) => stepsOf(parseOrder(order), NONE, after).length;
  const rows: [string, Position | null, number][] = [
    ['created_at:desc', null, 1],
    ['created_at:asc', { kind: 'id', id: 'X' }, 1],
    ['id:asc', { kind: 'id', id: 'X' }, 1],
    ['updated_at:desc', null, 1],
    ['updated_at:desc', { kind: 'updated', at: 'T', id: 'X' }, 2],
    // present keys, then records missing the field
    ['price:asc', null, 2],
    // the rest of the tie, greater keys, missing
    ['price:desc', { kind: 'key', key: 3, id: 'X' }, 3],
    ['price:asc', { kind: 'missing', id: 'X' }, 1],
  ];
  for (const [order, after, n] of rows) test(`${order} after ${JSON.stringify(after)}`, () => assert.equal(count(order, after), n));

  test('created_at orders by id; ties continue by id in the same direction', () => {
    const [asc] = compileQuery({ studioId: 's', collection: 'c', clauses: [], order: parseOrder('created_at:asc'), indexed: NONE, after: { kind: 'id', id: 'X' } });
    assert.match(asc!.sql, /id > \? ORDER BY id ASC LIMIT \?$/);
    const steps = compileQuery({ studioId: 's', collection: 'c', clauses: [], order: parseOrder('p:desc'), indexed: NONE, after: { kind: 'key', key: 'k', id: 'X' } });
    assert.match(steps[0]!.sql, / = \? AND id < \? ORDER BY id DESC LIMIT \?$/);
    assert.match(steps[1]!.sql, / < \? ORDER BY \(CASE .* END\) DESC, id DESC LIMIT \?$/);
    assert.match(steps[2]!.sql, / IS NULL ORDER BY id DESC LIMIT \?$/);
  });

  test('every statement scopes to the studio, the collection and live rows, all bound', () => {
    for (const step of compileQuery({ studioId: "st'x", collection: 'c"', clauses: [parseClause('a:eq:1')], order: parseOrder('a:asc'), indexed: NONE, after: null })) {
      assert.match(step.sql, /WHERE studio_id = \? AND collection = \? AND deleted_at IS NULL AND /);
      // The order key in the select list (five path parameters), then the scope.
      assert.deepEqual(step.params.slice(4, 7), ['$."a"', "st'x", 'c"']);
      assert.equal(step.sql.split('?').length - 1, step.params.length + 1, 'LIMIT ? is the caller\'s');
    }
  });
});

describe('a page past a key keeps one bound per side of the index range', () => {
  const pastStep = (where: string, order: string, key: number) =>
    compileQuery({ studioId: 's', collection: 'c', clauses: [parseClause(where)], order: parseOrder(order), indexed: new Set(['p']), after: { kind: 'key', key, id: 'X' } })[1]!;
  const rows: [string, string, number, { has: unknown[]; lacks: unknown[] }][] = [
    // the cursor is tighter: the clause keeps only its type's other bound
    ['p:gte:3', 'p:asc', 10, { has: [10, ''], lacks: [3] }],
    ['p:gt:10', 'p:asc', 10, { has: [10], lacks: [] }],
    ['p:lt:30', 'p:desc', 10, { has: [10], lacks: [30] }],
    // the clause is tighter: the cursor's bound goes
    ['p:gte:30', 'p:asc', 10, { has: [30], lacks: [10] }],
    ['p:lte:3', 'p:desc', 10, { has: [3], lacks: [10] }],
    // other side: nothing to fold
    ['p:lt:30', 'p:asc', 10, { has: [10, 30], lacks: [] }],
  ];
  for (const [where, order, key, { has, lacks }] of rows) {
    test(`${where} ${order} past ${key}`, () => {
      const step = pastStep(where, order, key);
      for (const v of has) assert.ok(step.params.includes(v) || step.sql.includes(`${v === '' ? "''" : v}`), `${v} in ${step.sql}`);
      for (const v of lacks) assert.ok(!step.params.includes(v), `${v} not in ${JSON.stringify(step.params)}`);
    });
  }
  test('a first page keeps the tightest of the clauses\' bounds too', () => {
    const [first] = compileQuery({ studioId: 's', collection: 'c', clauses: [parseClause('p:gte:100'), parseClause('p:lt:900')], order: parseOrder('p:desc'), indexed: new Set(['p']), after: null });
    assert.ok(!first!.sql.includes("< ''"), first!.sql);
    assert.ok(!first!.sql.includes('IS NOT NULL'), 'a range implies the field is present');
    assert.ok(first!.params.includes(900) && first!.params.includes(100));
  });

  test('compareKeys: numbers < text < blobs; text and blobs by bytes', () => {
    assert.ok(compareKeys(1e308, '') < 0);
    assert.ok(compareKeys('\uffff', Buffer.from([1])) < 0);
    assert.ok(compareKeys('\uffff', '😀') < 0, 'UTF-8 order, not UTF-16');
    assert.equal(compareKeys(1, 1.0), 0);
    assert.ok(compareKeys(Buffer.from([2]), Buffer.from([2, 0])) < 0);
  });
});
