import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { defaultMaxConnections, DEFAULT_MAX_CONNECTIONS } from '../../service/core/connections';
import { MAX_DEPTH, nestedDeeperThan, textNestedDeeperThan } from '../../service/core/document';
import { MAX_BODY_DEPTH } from '../../service/core/body';
import { rng as seeded } from '../helpers/prng';

const nestObjects = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
const nestArrays = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

describe('textNestedDeeperThan: one pass over the raw text, counted as the parsed check counts', () => {
  const rows: [name: string, text: string, max: number, deeper: boolean][] = [
    ['a scalar', '1', 0, false],
    ['a string', '"x"', 0, false],
    ['an empty object is level 1', '{}', 0, true],
    ['an empty object within 1', '{}', 1, false],
    ['objects nested 100 within 100', nestObjects(100), 100, false],
    ['objects nested 101 past 100', nestObjects(101), 100, true],
    ['arrays nested 100 within 100', nestArrays(100), 100, false],
    ['arrays nested 101 past 100', nestArrays(101), 100, true],
    ['siblings do not add up', `[${Array(500).fill('[[1]]').join(',')}]`, 3, false],
    ['mixed arrays and objects', '{"a":[{"b":[1]}]}', 4, false],
    ['mixed arrays and objects, one level short', '{"a":[{"b":[1]}]}', 3, true],
    ['brackets inside a string do not count', `{"a":"${'['.repeat(1000)}{{{"}`, 1, false],
    ['closing brackets inside a string do not count', `[[["${']'.repeat(10)}"]]]`, 3, false],
    ['an escaped quote does not end the string', `{"a":"\\"[[[[["}`, 1, false],
    ['an escaped backslash before the closing quote ends it', `{"a":"\\\\",  "b":[[1]]}`, 2, true],
    ['an escaped backslash before the closing quote ends it (within)', `{"a":"\\\\",  "b":[[1]]}`, 3, false],
    ['\\u escapes are plain characters', `{"a":"\\u005b\\u007b"}`, 1, false],
    ['keys with brackets do not count', `{"[[[[":{"{{{{":1}}`, 2, false],
    ['white space between brackets', ' [ \n [\t[ ] ] ] ', 2, true],
    ['unbalanced text still gets an answer (the parser refuses it later)', '['.repeat(200), 100, true],
    ['4 MiB of brackets', nestArrays(2 * 1024 * 1024), MAX_DEPTH, true],
  ];
  for (const [name, text, max, deeper] of rows) {
    test(`${name}: ${deeper ? 'deeper' : 'within'}`, () => {
      assert.equal(textNestedDeeperThan(text, max), deeper);
    });
  }

  test('agrees with the parsed check on 500 generated JSON texts', () => {
    const r = seeded(17);
    const between = (lo: number, hi: number) => lo + r.int(hi - lo + 1);
    const leaf = () => {
      const pick = between(0, 4);
      if (pick === 0) return between(-1000, 1000);
      if (pick === 1) return null;
      if (pick === 2) return true;
      // Strings full of brackets, quotes and backslashes: none of them may count.
      return Array.from({ length: between(0, 8) }, () => '[]{}"\\ax'[between(0, 7)]).join('');
    };
    const build = (depth: number): unknown => {
      if (depth === 0 || between(0, 3) === 0) return leaf();
      const n = between(0, 3);
      if (between(0, 1) === 0) return Array.from({ length: n }, () => build(depth - 1));
      return Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}[{"`, build(depth - 1)]));
    };
    for (let i = 0; i < 500; i++) {
      const text = JSON.stringify(build(between(0, 12)));
      const max = between(0, 10);
      assert.equal(textNestedDeeperThan(text, max), nestedDeeperThan(JSON.parse(text), max), text);
    }
  });

  test('the body bound leaves room for a document of 100 levels wrapped in an object', () => {
    assert.ok(MAX_BODY_DEPTH > MAX_DEPTH);
    assert.equal(textNestedDeeperThan(`{"state":${nestObjects(MAX_DEPTH)}}`, MAX_BODY_DEPTH), false);
  });
});

describe('defaultMaxConnections: 2048, less where the open-file limit cannot hold three descriptors each', () => {
  const rows: [openFiles: number | null, cap: number][] = [
    [null, DEFAULT_MAX_CONNECTIONS],
    [1_048_576, 2048],
    [20_000, 2048],
    [6_400, 2048],
    [4_096, 1280],
    [1_024, 256],
    [256, 16],
  ];
  for (const [openFiles, cap] of rows) {
    test(`${openFiles} open files: ${cap}`, () => assert.equal(defaultMaxConnections(openFiles), cap));
  }
});
