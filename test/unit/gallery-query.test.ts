import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeTime } from 'ulid';
import { compileItemQuery, firstIdAt, type ItemFilter } from '../../service/gallery/query';
import { studioWord } from '../../service/gallery/search';
import { newId } from '../../service/core/ids';

/**
 * The gallery list as SQL (service/gallery/query.ts): which structure drives
 * the page, that every filter is a bound parameter, and the seq bounds of
 * since / until / the cursor. The plans themselves: test/gallery-db.test.ts.
 */

const base: ItemFilter = { studioId: 's', tags: [] };
const named = (sql: string) => [...new Set(Array.from(sql.matchAll(/:([a-z0-9]+)/g), (m) => m[1]!))].sort();

describe('compileItemQuery: the driving structure and its order', () => {
  const rows: [string, ItemFilter, RegExp, string][] = [
    ['no q, no tag: the items table by studio', base, /FROM gallery_items i INDEXED BY gallery_items_live_by_studio WHERE/, 'i.seq'],
    ['scope=all: the items table in row-id order', { ...base, studioId: null }, /FROM gallery_items i WHERE/, 'i.seq'],
    ['asset first: by asset', { ...base, assetId: 'A', sessionId: 'S', kind: 'image', starred: true }, /FROM gallery_items i INDEXED BY gallery_items_by_asset WHERE/, 'i.seq'],
    ['then session: by session', { ...base, sessionId: 'S', kind: 'image', starred: true }, /FROM gallery_items i INDEXED BY gallery_items_by_session WHERE/, 'i.seq'],
    ['then starred=true: the starred items', { ...base, kind: 'image', starred: true }, /FROM gallery_items i INDEXED BY gallery_items_live_starred WHERE/, 'i.seq'],
    ['then kind: by kind', { ...base, kind: 'image', starred: false }, /FROM gallery_items i INDEXED BY gallery_items_live_by_kind WHERE/, 'i.seq'],
    ['scope=all with a kind: the table', { ...base, studioId: null, kind: 'image', starred: true }, /FROM gallery_items i WHERE/, 'i.seq'],
    ['a tag without q: the first tag\'s rows', { ...base, tags: ['red', 'blue'] }, /FROM gallery_tags t CROSS JOIN gallery_items i ON i\.seq = t\.item WHERE t\.tag = :tag0/, 't.item'],
    ['q: the full-text index', { ...base, match: '"cat" *' }, /FROM gallery_search s CROSS JOIN gallery_items i ON i\.seq = s\.rowid WHERE gallery_search MATCH :match/, 's.rowid'],
    ['q and tags: still the full-text index', { ...base, tags: ['red'], match: '"cat" *' }, /FROM gallery_search s CROSS JOIN/, 's.rowid'],
  ];
  for (const [name, filter, from, seq] of rows) {
    test(name, () => {
      const { sql } = compileItemQuery(filter, null, 10);
      assert.match(sql, from);
      assert.ok(sql.endsWith(`ORDER BY ${seq} DESC LIMIT :limit`), sql);
      assert.match(sql, /i\.deleted_at IS NULL/);
    });
  }
});

describe('compileItemQuery: filters are bound parameters', () => {
  // Values that would break or change the SQL if they were pasted in.
  const evil = (what: string) => `x'); DROP TABLE gallery_items; -- ${what} "`;
  const full: ItemFilter = {
    studioId: evil('studio'),
    kind: 'video',
    tags: [evil('tag0'), evil('tag1'), evil('tag2')],
    sessionId: evil('session'),
    starred: false,
    assetId: evil('asset'),
    since: '2026-11-22T10:01:24.123Z',
    until: '2026-11-23T00:00:00.000Z',
  };
  for (const [name, filter, after] of [
    ['every filter, no q', full, 1234],
    ['every filter and q', { ...full, match: evil('match') }, 99],
    ['every filter, first page', full, null],
  ] as const) {
    test(name, () => {
      const { sql, params } = compileItemQuery(filter, after, 51);
      assert.doesNotMatch(sql, /DROP|'|--|"/, sql);
      assert.deepEqual(named(sql), Object.keys(params).sort(), 'each :name in the SQL has a value, each value a :name');
      assert.equal(params.limit, 51);
      assert.equal(params.studio, full.studioId);
      assert.equal(params.kind, 'video');
      assert.equal(params.session, full.sessionId);
      assert.match(sql, /i\.starred = 0/, 'starred is a literal 0 or 1, for the partial index');
      assert.equal(params.asset, full.assetId);
      assert.equal(params.since, firstIdAt(full.since!));
      assert.equal(params.until, firstIdAt(full.until!));
      assert.deepEqual([params.tag0, params.tag1, params.tag2], full.tags);
      if (after === null) assert.equal(params.after, undefined);
      else assert.equal(params.after, after);
      // q's expression searches title and prompt only, within the studio's word (hex: no quote can get in).
      if ('match' in filter) assert.equal(params.match, `studio : "${studioWord(full.studioId!)}" AND {title prompt} : (${filter.match})`);
    });
  }

  test('starred=true is the literal 1; absent filters bind and mention nothing', () => {
    assert.match(compileItemQuery({ ...base, starred: true }, null, 1).sql, /i\.starred = 1/);
    const { sql, params } = compileItemQuery({ studioId: null, tags: [] }, null, 5);
    assert.deepEqual(params, { limit: 5 });
    assert.equal(sql.slice(sql.indexOf(' FROM ')), ' FROM gallery_items i WHERE i.deleted_at IS NULL ORDER BY i.seq DESC LIMIT :limit');
  });
});

describe('compileItemQuery: q within a studio', () => {
  test('one studio: its studio word and q over title and prompt', () => {
    assert.equal(compileItemQuery({ ...base, match: '"cat" *' }, null, 5).params.match, `studio : "${studioWord('s')}" AND {title prompt} : ("cat" *)`);
  });
  test('scope=all: q over title and prompt of every studio', () => {
    assert.equal(compileItemQuery({ ...base, studioId: null, match: '"cat" *' }, null, 5).params.match, '{title prompt} : ("cat" *)');
  });
  test('studio words are [a-z0-9] and differ per studio', () => {
    assert.match(studioWord('my-studio-9'), /^st[0-9a-f]+$/);
    assert.notEqual(studioWord('ab'), studioWord('ab-'));
  });
});

describe('compileItemQuery: bounds on the driving seq', () => {
  const cases: [string, ItemFilter, string][] = [
    ['items', base, 'i.seq'],
    ['tag', { ...base, tags: ['t'] }, 't.item'],
    ['q', { ...base, match: '"a"' }, 's.rowid'],
  ];
  for (const [name, filter, seq] of cases) {
    test(`${name}: the cursor, since (inclusive) and until (exclusive) bound ${seq}`, () => {
      const { sql } = compileItemQuery({ ...filter, since: '2026-01-01T00:00:00.000Z', until: '2026-02-01T00:00:00.000Z' }, 7, 10);
      assert.ok(sql.includes(`${seq} < :after`), sql);
      assert.ok(sql.includes(`${seq} >= (SELECT seq FROM gallery_items WHERE id >= :since ORDER BY id LIMIT 1)`), sql);
      assert.ok(sql.includes(`${seq} < coalesce((SELECT seq FROM gallery_items WHERE id >= :until ORDER BY id LIMIT 1), 9223372036854775807)`), sql);
    });
  }
});

describe('compileItemQuery: extra tags', () => {
  const exists = (n: number) => `EXISTS (SELECT 1 FROM gallery_tags WHERE tag = :tag${n} AND item = i.seq)`;
  test('without q the first tag drives and the others are EXISTS', () => {
    const { sql, params } = compileItemQuery({ ...base, tags: ['a', 'b', 'c'] }, null, 10);
    assert.ok(sql.includes('t.tag = :tag0'));
    assert.ok(!sql.includes(exists(0)));
    assert.ok(sql.includes(exists(1)) && sql.includes(exists(2)), sql);
    assert.deepEqual([params.tag0, params.tag1, params.tag2], ['a', 'b', 'c']);
  });
  test('with q every tag is EXISTS', () => {
    const { sql } = compileItemQuery({ ...base, tags: ['a', 'b'], match: '"x"' }, null, 10);
    assert.ok(!sql.includes('t.tag'));
    assert.ok(sql.includes(exists(0)) && sql.includes(exists(1)), sql);
  });
  test('a handful of shapes: the SQL depends on which filters are present, not on their values', () => {
    const a = compileItemQuery({ studioId: 'x', tags: ['1', '2'], kind: 'image', since: '2026-01-01T00:00:00.000Z' }, 5, 10);
    const b = compileItemQuery({ studioId: 'y', tags: ['3', '4'], kind: 'audio', since: '2020-01-01T00:00:00.000Z' }, 9, 50);
    assert.equal(a.sql, b.sql);
  });
});

describe('firstIdAt: the smallest ULID of an instant', () => {
  const rows: [string, string][] = [
    ['1970-01-01T00:00:00.000Z', '0'.repeat(26)],
    ['1970-01-01T00:00:00.001Z', '0000000001' + '0'.repeat(16)],
    ['2026-11-22T10:01:24.123Z', '01M81B83CV' + '0'.repeat(16)],
    ['9999-12-31T23:59:59.999Z', '76EZ91ZPZZ' + '0'.repeat(16)],
    // Before the epoch no id exists: every id is at or after the instant.
    ['1969-12-31T23:59:59.999Z', '0'.repeat(26)],
    ['0001-01-01T00:00:00.000Z', '0'.repeat(26)],
  ];
  for (const [instant, id] of rows) test(instant, () => assert.equal(firstIdAt(instant), id));

  test('its instant is the instant; an id made at or after it is not smaller', () => {
    const now = new Date().toISOString();
    const first = firstIdAt(now);
    assert.equal(decodeTime(first), Date.parse(now));
    assert.ok(newId() >= first);
    assert.ok(firstIdAt(new Date(Date.parse(now) + 1).toISOString()) > first);
  });
});
