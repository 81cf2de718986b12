import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applyMergePatch, type Json } from '../../service/core/merge-patch';

/** RFC 7396 Appendix A, every row (target, patch, result), in the RFC's order. */
const APPENDIX_A: [target: string, patch: string, result: string][] = [
  ['{"a":"b"}', '{"a":"c"}', '{"a":"c"}'],
  ['{"a":"b"}', '{"b":"c"}', '{"a":"b","b":"c"}'],
  ['{"a":"b"}', '{"a":null}', '{}'],
  ['{"a":"b","b":"c"}', '{"a":null}', '{"b":"c"}'],
  ['{"a":["b"]}', '{"a":"c"}', '{"a":"c"}'],
  ['{"a":"c"}', '{"a":["b"]}', '{"a":["b"]}'],
  ['{"a":{"b":"c"}}', '{"a":{"b":"d","c":null}}', '{"a":{"b":"d"}}'],
  ['{"a":[{"b":"c"}]}', '{"a":[1]}', '{"a":[1]}'],
  ['["a","b"]', '["c","d"]', '["c","d"]'],
  ['{"a":"b"}', '["c"]', '["c"]'],
  ['{"a":"foo"}', 'null', 'null'],
  ['{"a":"foo"}', '"bar"', '"bar"'],
  ['{"e":null}', '{"a":1}', '{"e":null,"a":1}'],
  ['[1,2]', '{"a":"b","c":null}', '{"a":"b"}'],
  ['{}', '{"a":{"bb":{"ccc":null}}}', '{"a":{"bb":{}}}'],
];

/** RFC 7396 section 3. */
const SECTION_3 = {
  target: {
    title: 'Goodbye!',
    author: { givenName: 'John', familyName: 'Doe' },
    tags: ['example', 'sample'],
    content: 'This will be unchanged',
  },
  patch: {
    title: 'Hello!',
    phoneNumber: '+01-123-456-7890',
    author: { familyName: null },
    tags: ['example'],
  },
  result: {
    title: 'Hello!',
    author: { givenName: 'John' },
    tags: ['example'],
    content: 'This will be unchanged',
    phoneNumber: '+01-123-456-7890',
  },
};

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

describe('applyMergePatch: RFC 7396 Appendix A', () => {
  for (const [target, patch, result] of APPENDIX_A) {
    test(`${target} + ${patch} -> ${result}`, () => {
      assert.deepEqual(applyMergePatch(JSON.parse(target), JSON.parse(patch)), JSON.parse(result));
    });
  }
});

describe('applyMergePatch: more cases', () => {
  const rows: { name: string; target: Json | undefined; patch: Json; result: Json }[] = [
    { name: 'RFC 7396 section 3 example', ...SECTION_3 },
    { name: 'absent target, object patch drops nulls', target: undefined, patch: { a: null, b: 1 }, result: { b: 1 } },
    { name: 'absent target, scalar patch', target: undefined, patch: 3, result: 3 },
    { name: 'empty patch keeps the target', target: { a: 1, b: [2] }, patch: {}, result: { a: 1, b: [2] } },
    { name: 'null member of a missing key is a no-op', target: { a: 1 }, patch: { z: null }, result: { a: 1 } },
    { name: 'scalar target, object patch', target: 'x', patch: { a: { b: null, c: 1 } }, result: { a: { c: 1 } } },
    { name: 'false and 0 are values, not deletions', target: { a: 1, b: 2 }, patch: { a: false, b: 0 }, result: { a: false, b: 0 } },
    { name: 'deep merge three levels', target: { a: { b: { c: 1, d: 2 } } }, patch: { a: { b: { d: null, e: 3 } } }, result: { a: { b: { c: 1, e: 3 } } } },
  ];
  for (const row of rows) {
    test(row.name, () => {
      assert.deepEqual(applyMergePatch(row.target, row.patch), row.result);
    });
  }
});

describe('applyMergePatch never mutates its inputs', () => {
  const rows: [target: string, patch: string][] = [
    ...APPENDIX_A.map(([t, p]) => [t, p] as [string, string]),
    [JSON.stringify(SECTION_3.target), JSON.stringify(SECTION_3.patch)],
  ];
  for (const [target, patch] of rows) {
    test(`${target} + ${patch}`, () => {
      // Frozen inputs make any write throw (strict mode); the snapshots catch anything else.
      const t = deepFreeze(JSON.parse(target) as Json);
      const p = deepFreeze(JSON.parse(patch) as Json);
      const result = applyMergePatch(t, p);
      assert.deepEqual(t, JSON.parse(target));
      assert.deepEqual(p, JSON.parse(patch));
      if (typeof t === 'object' && t !== null && !Array.isArray(t)) assert.notEqual(result, t);
    });
  }
});

describe('applyMergePatch: "__proto__" is an ordinary member', () => {
  const hasOwn = (o: unknown, k: string) => Object.prototype.hasOwnProperty.call(o, k);

  test('a patch {"__proto__":{"x":1}} adds an own member and leaves the prototype alone', () => {
    const patch = JSON.parse('{"__proto__":{"x":1}}') as Json;
    const result = applyMergePatch({ a: 1 }, patch) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(result), Object.prototype);
    assert.ok(hasOwn(result, '__proto__'));
    assert.equal((result as { x?: unknown }).x, undefined);
    assert.equal(JSON.stringify(result), '{"a":1,"__proto__":{"x":1}}');
    assert.equal(({} as { x?: unknown }).x, undefined, 'Object.prototype was polluted');
  });

  test('nested: {"a":{"__proto__":{"polluted":true}}}', () => {
    const patch = JSON.parse('{"a":{"__proto__":{"polluted":true}}}') as Json;
    const result = applyMergePatch({}, patch) as { a: Record<string, unknown> };
    assert.equal(Object.getPrototypeOf(result.a), Object.prototype);
    assert.ok(hasOwn(result.a, '__proto__'));
    assert.equal(result.a.polluted, undefined);
    assert.equal(JSON.stringify(result), '{"a":{"__proto__":{"polluted":true}}}');
    assert.equal(({} as { polluted?: unknown }).polluted, undefined, 'Object.prototype was polluted');
  });

  test('merging into an existing own "__proto__" member', () => {
    const target = JSON.parse('{"__proto__":{"x":1}}') as Json;
    const patch = JSON.parse('{"__proto__":{"y":2}}') as Json;
    const result = applyMergePatch(target, patch);
    assert.equal(Object.getPrototypeOf(result), Object.prototype);
    assert.equal(JSON.stringify(result), '{"__proto__":{"x":1,"y":2}}');
  });

  test('{"__proto__":null} deletes the own member only', () => {
    const target = JSON.parse('{"__proto__":{"x":1},"a":1}') as Json;
    const result = applyMergePatch(target, JSON.parse('{"__proto__":null}') as Json);
    assert.equal(Object.getPrototypeOf(result), Object.prototype);
    assert.equal(JSON.stringify(result), '{"a":1}');
  });
});
