import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkIfMatch, ifMatchHolds, parseIfMatch, quoteEtag, newEtag, type IfMatch } from '../../service/core/etag';

const badRequest = { name: 'ApiError', status: 400, code: 'bad_request' };
const etagMismatch = { name: 'ApiError', status: 409, code: 'etag_mismatch' };

describe('parseIfMatch', () => {
  const rows: { header: string | undefined; expect: IfMatch }[] = [
    { header: undefined, expect: { kind: 'absent' } },
    { header: '*', expect: { kind: 'any' } },
    { header: '  *  ', expect: { kind: 'any' } },
    { header: '"abc"', expect: { kind: 'list', etags: ['abc'] } },
    { header: 'abc', expect: { kind: 'list', etags: ['abc'] } },
    { header: ' "abc" ', expect: { kind: 'list', etags: ['abc'] } },
    { header: 'Zm9v-_x', expect: { kind: 'list', etags: ['Zm9v-_x'] } },
    { header: '"a", "b"', expect: { kind: 'list', etags: ['a', 'b'] } },
    { header: '"a",b,"c"', expect: { kind: 'list', etags: ['a', 'b', 'c'] } },
    { header: 'a, b', expect: { kind: 'list', etags: ['a', 'b'] } },
    { header: '"a", , "b"', expect: { kind: 'list', etags: ['a', 'b'] } },
    // Weak etags never match (strong comparison, RFC 9110 §13.1.1): dropped from the list.
    { header: 'W/"x"', expect: { kind: 'list', etags: [] } },
    { header: 'W/"x", "y"', expect: { kind: 'list', etags: ['y'] } },
    { header: '"y", W/"x"', expect: { kind: 'list', etags: ['y'] } },
  ];
  for (const row of rows) {
    test(`${JSON.stringify(row.header)} -> ${JSON.stringify(row.expect)}`, () => {
      assert.deepEqual(parseIfMatch(row.header), row.expect);
    });
  }

  const malformed = ['*, "a"', '"a", *', '', '   ', ',', ' , , ', '"abc', 'abc"', 'a"b', '"a""b"', '"a", "b', 'W/"x", b"'];
  for (const header of malformed) {
    test(`${JSON.stringify(header)} -> 400 bad_request`, () => {
      assert.throws(() => parseIfMatch(header), badRequest);
    });
  }
});

describe('ifMatchHolds and checkIfMatch', () => {
  const rows: { name: string; header: string | undefined; current: string | null; holds: boolean }[] = [
    { name: 'absent, resource exists', header: undefined, current: 'e1', holds: true },
    { name: 'absent, no resource', header: undefined, current: null, holds: true },
    { name: '* and the resource exists', header: '*', current: 'e1', holds: true },
    { name: '* and no resource', header: '*', current: null, holds: false },
    { name: 'quoted equal', header: '"e1"', current: 'e1', holds: true },
    { name: 'bare equal', header: 'e1', current: 'e1', holds: true },
    { name: 'quoted different', header: '"e2"', current: 'e1', holds: false },
    { name: 'bare different', header: 'e2', current: 'e1', holds: false },
    { name: 'comparison is case-sensitive', header: 'E1', current: 'e1', holds: false },
    { name: 'list containing it', header: '"e0", e1, "e2"', current: 'e1', holds: true },
    { name: 'list not containing it', header: '"e0", "e2"', current: 'e1', holds: false },
    { name: 'an etag and no resource', header: '"e1"', current: null, holds: false },
    { name: 'weak etag with the same value', header: 'W/"e1"', current: 'e1', holds: false },
    { name: 'weak etag next to a strong match', header: 'W/"e0", "e1"', current: 'e1', holds: true },
    { name: 'weak etag next to a strong mismatch', header: 'W/"e1", "e0"', current: 'e1', holds: false },
  ];
  for (const row of rows) {
    test(`${row.name}: ${JSON.stringify(row.header)} vs ${JSON.stringify(row.current)} -> ${row.holds ? 'holds' : '409'}`, () => {
      const ifMatch = parseIfMatch(row.header);
      assert.equal(ifMatchHolds(ifMatch, row.current), row.holds);
      if (row.holds) assert.doesNotThrow(() => checkIfMatch(ifMatch, row.current));
      else assert.throws(() => checkIfMatch(ifMatch, row.current), etagMismatch);
    });
  }
});

describe('newEtag and quoteEtag', () => {
  test('a new etag is opaque base64url, round-trips through the quoted header form', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 100; i++) {
      const etag = newEtag();
      assert.match(etag, /^[A-Za-z0-9_-]+$/);
      assert.deepEqual(parseIfMatch(quoteEtag(etag)), { kind: 'list', etags: [etag] });
      seen.add(etag);
    }
    assert.equal(seen.size, 100);
  });
});
