import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { compileItemQuery, type ItemFilter } from '../service/gallery/query';
import { compileSearch, searchWords, studioWord } from '../service/gallery/search';
import { LINEAGE_SQL } from '../service/gallery';
import { openGallery, queryPlan, type GalleryFixture } from './helpers/gallery-db';
import { propSeed, rng } from './helpers/prng';
import { encodeTime } from 'ulid';

/**
 * The gallery on a real database (migration 0007, the real stores, no HTTP):
 * the query plans of the hot reads, a search property test against a
 * reference matcher, and the seq bounds of since / until.
 */

const SEED = propSeed();
const r = rng(SEED);
const STUDIOS = ['alpha', 'beta'] as const;

let fx: GalleryFixture;
before(() => {
  fx = openGallery(STUDIOS);
});
after(() => fx?.close());

describe('query plans: each page is one index range in seq order, never a sort', () => {
  const since = '2026-01-01T00:00:00.000Z';
  const until = '2026-02-01T00:00:00.000Z';
  const listPlan = (filter: ItemFilter, afterSeq: number | null = null) => {
    const { sql, params } = compileItemQuery(filter, afterSeq, 51);
    const plan = queryPlan(fx.db, sql, params);
    assert.doesNotMatch(plan, /TEMP B-TREE/, `${sql}\n${plan}`);
    return plan;
  };
  /** FTS5 walks its index in row-id order, descending (FTS5_BI_ORDER_ROWID | FTS5_BI_ORDER_DESC), with these constraints. */
  const ftsDriven = (plan: string, constraints: RegExp) => {
    const m = /^SCAN s VIRTUAL TABLE INDEX (\d+):(\S*)$/m.exec(plan);
    assert.ok(m, plan);
    assert.equal(Number(m[1]) & 0xc0, 0xc0, `the order is the index's own: ${plan}`);
    assert.match(m[2]!, constraints, plan);
    assert.ok(plan.indexOf('SCAN s VIRTUAL TABLE') < plan.indexOf('SEARCH i USING INTEGER PRIMARY KEY (rowid=?)'), plan);
  };

  test('newest page of the caller\'s own items: the live-by-studio index', () => {
    assert.match(listPlan({ studioId: 'alpha', tags: [] }), /^SEARCH i USING INDEX gallery_items_live_by_studio \(studio_id=\?\)$/);
    assert.match(listPlan({ studioId: 'alpha', tags: [] }, 10), /^SEARCH i USING INDEX gallery_items_live_by_studio \(studio_id=\? AND rowid<\?\)$/);
    assert.match(listPlan({ studioId: 'alpha', tags: [], since }), /SEARCH i USING INDEX gallery_items_live_by_studio \(studio_id=\? AND rowid>\?\)/);
    assert.match(listPlan({ studioId: 'alpha', tags: [], kind: 'image', starred: false }), /^SEARCH i USING INDEX gallery_items_live_by_kind \(studio_id=\? AND kind=\?\)$/);
    assert.match(listPlan({ studioId: 'alpha', tags: [], kind: 'image', starred: true }), /^SEARCH i USING INDEX gallery_items_live_starred \(studio_id=\?\)$/);
    assert.match(listPlan({ studioId: 'alpha', tags: [], starred: true }, 10), /^SEARCH i USING INDEX gallery_items_live_starred \(studio_id=\? AND rowid<\?\)$/);
  });

  test('scope=all: the table in row-id order; narrowed to a studio, its index', () => {
    assert.match(listPlan({ studioId: null, tags: [] }), /^SCAN i$/);
    assert.match(listPlan({ studioId: null, tags: [] }, 10), /^SEARCH i USING INTEGER PRIMARY KEY \(rowid<\?\)$/);
    assert.match(listPlan({ studioId: 'beta', tags: [] }), /^SEARCH i USING INDEX gallery_items_live_by_studio \(studio_id=\?\)$/);
  });

  test('tag filter: the gallery_tags primary key, then each item by row id', () => {
    const plan = listPlan({ studioId: 'alpha', tags: ['red'] });
    assert.match(plan, /^SEARCH t USING PRIMARY KEY \(tag=\?\)\nSEARCH i USING INTEGER PRIMARY KEY \(rowid=\?\)$/);
    assert.match(listPlan({ studioId: null, tags: ['red'] }, 10), /^SEARCH t USING PRIMARY KEY \(tag=\? AND item<\?\)/);
    assert.match(listPlan({ studioId: 'alpha', tags: ['red'], since, until }), /^SEARCH t USING PRIMARY KEY \(tag=\? AND item>\? AND item<\?\)/);
    const two = listPlan({ studioId: 'alpha', tags: ['red', 'blue'] });
    assert.match(two, /^SEARCH t USING PRIMARY KEY \(tag=\?\)/);
    assert.match(two, /SEARCH gallery_tags EXISTS USING (COVERING INDEX gallery_tags_by_item \(item=\? AND tag=\?\)|PRIMARY KEY \(tag=\? AND item=\?\))/);
  });

  test('q: the full-text index, whose row-id order is the page order', () => {
    ftsDriven(listPlan({ studioId: 'alpha', tags: [], match: '"cat" *' }), /^M\d*$/);
    ftsDriven(listPlan({ studioId: null, tags: [], match: '"cat" *' }, 10), /^M\d*</);
  });

  test('q + tag + since: the full-text index bounded below, the tag as a lookup', () => {
    const plan = listPlan({ studioId: 'alpha', tags: ['red'], match: '"cat" AND "do" *', since });
    ftsDriven(plan, /^M\d*>$/);
    assert.match(plan, /SEARCH gallery_items USING COVERING INDEX sqlite_autoindex_gallery_items_1 \(id>\?\)/);
    assert.match(plan, /SEARCH gallery_tags EXISTS USING/);
    assert.doesNotMatch(plan, /SCAN (t|gallery_tags|gallery_items)\b/);
  });

  test('asset_id and session_id: their own indexes', () => {
    assert.match(listPlan({ studioId: 'alpha', tags: [], assetId: 'A' }), /^SEARCH i USING INDEX gallery_items_by_asset \(asset_id=\?\)$/);
    assert.match(listPlan({ studioId: null, tags: [], assetId: 'A' }, 10), /^SEARCH i USING INDEX gallery_items_by_asset \(asset_id=\? AND rowid<\?\)$/);
    assert.match(listPlan({ studioId: 'alpha', tags: [], sessionId: 'S' }), /^SEARCH i USING INDEX gallery_items_by_session \(session_id=\?\)$/);
    assert.match(listPlan({ studioId: 'alpha', tags: [], sessionId: 'S' }, 10), /^SEARCH i USING INDEX gallery_items_by_session \(session_id=\? AND rowid<\?\)$/);
  });

  test('lineage: the walk by primary key and the asset indexes, the page by row id without a sort', () => {
    const shown = { all: 0, studio: 'alpha', after: 1000, limit: 51 };
    const up = queryPlan(fx.db, LINEAGE_SQL.up, { start: 1, ...shown });
    assert.match(up, /SEARCH n USING PRIMARY KEY \(item=\?\)/);
    assert.match(up, /SEARCH p USING COVERING INDEX gallery_items_by_asset \(asset_id=\?\)/);
    const down = queryPlan(fx.db, LINEAGE_SQL.down, { asset: 'A', ...shown });
    assert.match(down, /SEARCH n USING COVERING INDEX gallery_inputs_by_asset \(asset_id=\?\)/);
    assert.match(down, /SEARCH p USING INTEGER PRIMARY KEY \(rowid=\?\)/);
    for (const [name, plan] of [['up', up], ['down', down]]) {
      assert.match(plan, /SEARCH i USING INTEGER PRIMARY KEY \(rowid=\?\)/, `${name}:\n${plan}`);
      assert.doesNotMatch(plan, /TEMP B-TREE FOR ORDER BY/, `${name}:\n${plan}`);
      assert.doesNotMatch(plan, /SCAN (n|p|i|gallery_items|gallery_inputs)\b/, `${name}:\n${plan}`);
    }
  });

  test('reclaim: live items and live items\' inputs are found through the asset indexes', () => {
    fx.prepared.length = 0;
    fx.assets.candidates('alpha');
    const sql = fx.prepared.find((s) => s.includes('NOT EXISTS'));
    assert.ok(sql, 'the candidates query was prepared');
    assert.ok(sql.includes('gallery_items') && sql.includes('gallery_inputs'), sql);
    const plan = queryPlan(fx.db, sql, ['alpha']);
    assert.match(plan, /SEARCH gallery_items USING INDEX gallery_items_by_asset \(asset_id=\?\)/, plan);
    assert.match(plan, /SEARCH n USING COVERING INDEX gallery_inputs_by_asset \(asset_id=\?\)/, plan);
    assert.doesNotMatch(plan, /SCAN (n|i|gallery_items|gallery_inputs)\b/, plan);
  });
});

describe('since and until are bounds on creation order', () => {
  const ids: string[] = [];
  before(() => {
    const asset = fx.newAsset();
    for (let n = 0; n < 3; n++) ids.push(fx.gallery.create('beta', { asset_id: asset, tags: ['bounds'] }).id);
  });
  const list = (filter: Partial<ItemFilter>) =>
    fx.gallery.list({ studioId: 'beta', tags: ['bounds'], ...filter }, null, 100).map((row) => row.id);

  const rows: [string, Partial<ItemFilter>, () => string[]][] = [
    ['since before 1970: everything', { since: '1969-12-31T23:59:59.999Z' }, () => [...ids].reverse()],
    ['since year 1: everything', { since: '0001-01-01T00:00:00.000Z' }, () => [...ids].reverse()],
    ['until before 1970: nothing', { until: '1969-12-31T23:59:59.999Z' }, () => []],
    ['since the far future: nothing', { since: '9999-12-31T23:59:59.999Z' }, () => []],
    ['until the far future: everything', { until: '9999-12-31T23:59:59.999Z' }, () => [...ids].reverse()],
    ['since the epoch and until the far future, with q: nothing to match', { since: '1970-01-01T00:00:00.000Z', until: '9999-01-01T00:00:00.000Z', match: '"nothing"' }, () => []],
  ];
  for (const [name, filter, expected] of rows) test(name, () => assert.deepEqual(list(filter), expected()));

  test('since is inclusive and until exclusive at an item\'s own instant', () => {
    const rowsNow = fx.gallery.list({ studioId: 'beta', tags: ['bounds'] }, null, 100);
    const middle = rowsNow[1]!;
    const at = middle.created_at;
    const sinceIds = list({ since: at });
    const untilIds = list({ until: at });
    assert.ok(sinceIds.includes(middle.id));
    assert.ok(!untilIds.includes(middle.id));
    // Together they are every item once.
    assert.deepEqual([...sinceIds, ...untilIds].sort(), [...ids].sort());
  });
});

describe('search property: store.list with q equals a reference matcher on searchWords', () => {
  const VOCAB = [
    'cat', 'cats', 'catalog', 'Dog', 'dogs', 'sleepy', 'big', 'BIG', 'Café', 'cafe', 'crème', 'naïve', 'NAIVE', 'ΑΣΤΥ', 'άστυ', 'Москва',
    'москвы', '一只猫在睡觉', '猫', '睡觉', '東京タワー', 'ひらがな', '한국어', 'ภาษาไทย', '😀', '🐱', '😀🐱', 'q', 'qq', 'x2', 'ﬁne', 'ＡＢＣ', 'and', 'NOT', 'near',
  ];
  const SEPARATORS = [' ', ' ', ' ', ', ', '-', '', '\n', '"', '*'];
  const randomText = () => {
    let text = '';
    const count = r.int(7);
    for (let k = 0; k < count; k++) text += (k === 0 ? '' : r.pick(SEPARATORS)) + r.pick(VOCAB);
    return text;
  };

  interface Item { seq: number; id: string; studio: string; title: string | null; prompt: string | null; tags: string[]; deleted: boolean }
  const items: Item[] = [];

  before(() => {
    const asset = fx.newAsset();
    for (let n = 0; n < 250; n++) {
      const studio = r.pick(STUDIOS);
      const title = r.chance(0.15) ? null : randomText();
      const roll = r.next();
      const params = roll < 0.7 ? { prompt: randomText() } : roll < 0.75 ? { prompt: 42, other: 'cat' } : { seed: 7 };
      const tags = r.chance(0.3) ? ['red'] : [];
      const row = fx.gallery.create(studio, { asset_id: asset, title, params, tags });
      items.push({ seq: row.seq, id: row.id, studio, title, prompt: typeof params.prompt === 'string' ? params.prompt : null, tags, deleted: false });
    }
    for (const item of items) {
      const roll = r.next();
      if (roll < 0.1) {
        fx.gallery.delete(item.studio, item.id);
        item.deleted = true;
      } else if (roll < 0.2) {
        item.title = r.chance(0.2) ? null : randomText();
        fx.gallery.update(item.studio, item.id, { title: item.title });
      }
    }
  });

  /** q as terms by docs/api.md "Full-text `q`": words, "quoted phrases" (an unclosed one runs to the end); terms without words left out. */
  const termsOf = (q: string) => {
    const terms: { words: string[]; quoted: boolean }[] = [];
    let rest = q;
    while (rest.length > 0) {
      const ws = /^\s+/.exec(rest);
      if (ws) {
        rest = rest.slice(ws[0].length);
        continue;
      }
      let text: string;
      const quoted = rest.startsWith('"');
      if (quoted) {
        const end = rest.indexOf('"', 1);
        text = end < 0 ? rest.slice(1) : rest.slice(1, end);
        rest = end < 0 ? '' : rest.slice(end + 1);
      } else {
        text = /^[^\s"]+/.exec(rest)![0];
        rest = rest.slice(text.length);
      }
      const words = searchWords(text);
      if (words.length > 0) terms.push({ words, quoted });
    }
    return terms;
  };
  /** The term's words appear consecutively in the text's words (its last word as a prefix when asked). */
  const phraseIn = (words: string[], text: string | null, prefix: boolean) => {
    const hay = text === null ? [] : searchWords(text);
    for (let at = 0; at + words.length <= hay.length; at++) {
      const ok = words.every((w, k) => (prefix && k === words.length - 1 ? hay[at + k]!.startsWith(w) : hay[at + k] === w));
      if (ok) return true;
    }
    return false;
  };
  const reference = (q: string, filter: { studioId: string | null; tag: boolean }): number[] | 'all' => {
    const terms = termsOf(q);
    if (terms.length === 0) return q.trim() === '' ? 'all' : [];
    return items
      .filter((item) => !item.deleted && (filter.studioId === null || item.studio === filter.studioId) && (!filter.tag || item.tags.includes('red')))
      .filter((item) =>
        terms.every((t, n) => {
          const prefix = n === terms.length - 1 && !t.quoted;
          return phraseIn(t.words, item.title, prefix) || phraseIn(t.words, item.prompt, prefix);
        }),
      )
      .map((item) => item.seq)
      .sort((a, b) => b - a);
  };

  const randomQ = () => {
    const terms: string[] = [];
    const count = 1 + r.int(3);
    for (let k = 0; k < count; k++) {
      const roll = r.next();
      const source = r.pick(items);
      const sourceWords = (r.chance(0.5) ? source.title : source.prompt)?.split(/\s+/).filter((w) => w !== '') ?? [];
      if (roll < 0.25 && sourceWords.length >= 2) {
        const at = r.int(sourceWords.length - 1);
        terms.push(`"${sourceWords.slice(at, at + 2).join(' ')}"`);
      } else if (roll < 0.5 && sourceWords.length > 0) {
        terms.push(r.pick(sourceWords));
      } else {
        const word = r.pick(VOCAB);
        terms.push(r.chance(0.3) ? word.toUpperCase() : r.chance(0.2) ? word.toLowerCase() : word);
      }
    }
    // The last word truncated, as when typing.
    const last = terms[terms.length - 1]!;
    if (!last.startsWith('"') && r.chance(0.6)) {
      const chars = Array.from(last);
      terms[terms.length - 1] = chars.slice(0, 1 + r.int(chars.length)).join('');
    }
    if (r.chance(0.05)) terms.push(r.pick(['""', '*', '"', '--']));
    return terms.join(r.pick([' ', '  ', ' \t']));
  };

  test(`every page of a search equals the reference (seed ${SEED})`, { timeout: 60_000 }, () => {
    console.log(`gallery search property seed: ${SEED} (rerun with BACKLOT_PROP_SEED=${SEED})`);
    let hits = 0;
    for (let n = 0; n < 400; n++) {
      const q = randomQ();
      const scope = { studioId: r.chance(0.5) ? r.pick(STUDIOS) : null, tag: r.chance(0.2) };
      const expected = reference(q, scope);
      // Both ways a last-word prefix is asked: FTS5's `*`, and spelled out from the word list.
      for (const complete of [undefined, fx.gallery.completions]) {
        const plan = compileSearch(q, complete);
        const label = `seed ${SEED}, q ${JSON.stringify(q)} -> ${JSON.stringify(plan)}, ${JSON.stringify(scope)}`;
        if (expected === 'all') {
          assert.equal(plan.kind, 'all', label);
          continue;
        }
        if (plan.kind !== 'match') {
          assert.deepEqual(expected, [], label);
          continue;
        }
        if (expected.length > 0) hits++;
        const filter: ItemFilter = { studioId: scope.studioId, tags: scope.tag ? ['red'] : [], match: plan.expression };
        const limit = Math.max(1 + r.int(5), Math.ceil(expected.length / 6));
        const got: number[] = [];
        let afterSeq: number | null = null;
        for (;;) {
          const rows = fx.gallery.list(filter, afterSeq, limit);
          got.push(...rows.map((row) => row.seq));
          if (rows.length < limit) break;
          afterSeq = rows[rows.length - 1]!.seq;
        }
        assert.deepEqual(got, expected, `${label}, limit ${limit}`);
      }
    }
    assert.ok(hits > 100, `queries with matches: ${hits}`);
  });

  test(`hostile q never makes FTS5 fail (seed ${SEED})`, () => {
    const PIECES = ['"', '*', '(', ')', 'AND', 'OR', 'NOT', 'NEAR(', ':', '^', '+', '-', '{', '}', 'title:', 'prompt:', ' ', 'cat', '猫', '😀', '\ud800', '\u0301', 'q', '\0', 'ΣΑ'];
    for (let n = 0; n < 300; n++) {
      const q = Array.from({ length: r.int(10) }, () => r.pick(PIECES)).join(r.pick(['', ' ']));
      const plan = compileSearch(q, fx.gallery.completions);
      if (plan.kind !== 'match') continue;
      assert.doesNotThrow(() => fx.gallery.list({ studioId: null, tags: [], match: plan.expression }, null, 5), JSON.stringify(q));
    }
  });
});

describe('the search index holds live items only (README invariants)', () => {
  const search = (q: string) => {
    const plan = compileSearch(q, fx.gallery.completions);
    return plan.kind === 'match' ? fx.gallery.list({ studioId: 'alpha', tags: [], match: plan.expression }, null, 50).map((row) => row.id) : [];
  };

  test('a purged item\'s row id is never handed out again (AUTOINCREMENT), and its words find nothing', () => {
    // The newest item overall: without AUTOINCREMENT SQLite would hand its row id (max + 1) to the next item.
    const asset = fx.newAsset(['alpha']);
    const doomed = fx.gallery.create('alpha', { asset_id: asset, title: 'quokka lantern', params: { prompt: 'marmalade' } });
    assert.deepEqual(search('quokka'), [doomed.id]);
    fx.gallery.delete('alpha', doomed.id);
    fx.assets.transaction(() => fx.assets.markReclaimed([asset], new Date().toISOString()));
    assert.equal((fx.db.prepare('SELECT count(*) AS n FROM gallery_items WHERE id = ?').get(doomed.id) as { n: number }).n, 0, 'purged');

    const next = fx.gallery.create('alpha', { asset_id: fx.newAsset(['alpha']), title: 'plain heron' });
    assert.ok(next.seq > doomed.seq, `the row id ${doomed.seq} is not reused (got ${next.seq})`);
    for (const q of ['quokka', 'lantern', 'marmalade', 'quok', 'marmalade quokka']) assert.deepEqual(search(q), [], q);
    assert.deepEqual(search('heron'), [next.id]);
  });

  test('a title change takes the old title\'s words out and the prompt stays', () => {
    const item = fx.gallery.create('alpha', { asset_id: fx.newAsset(['alpha']), title: 'wombat', params: { prompt: 'ochre' } });
    fx.gallery.update('alpha', item.id, { title: 'bilby' });
    assert.deepEqual(search('wombat'), []);
    assert.deepEqual(search('bilby ochre'), [item.id]);
    // Deleted: neither its title nor its prompt is in the index any more (row ids of dead items never match).
    fx.gallery.delete('alpha', item.id);
    const dead = (fx.db.prepare("SELECT count(*) AS n FROM gallery_search WHERE gallery_search MATCH '\"bilby\" OR \"ochre\"'").get() as { n: number }).n;
    assert.equal(dead, 0);
  });
});

describe('creation order survives a clock stepped back (migration 0007: seq, id and created_at grow together)', () => {
  test('an item recorded after one stamped in the future gets a greater id and the same instant, and lists first', () => {
    const own = openGallery(['alpha']);
    try {
      const asset = own.newAsset();
      const first = own.gallery.create('alpha', { asset_id: asset });
      // As if the previous run's clock was an hour ahead: its newest item carries a future id.
      const future = Date.now() + 3_600_000;
      const futureId = `${encodeTime(future, 10)}${'0'.repeat(16)}`;
      own.db.prepare('UPDATE gallery_items SET id = ?, created_at = ? WHERE seq = ?').run(futureId, new Date(future).toISOString(), first.seq);
      const next = own.gallery.create('alpha', { asset_id: asset });
      assert.ok(next.id > futureId, `${next.id} > ${futureId}`);
      assert.equal(next.created_at, new Date(future).toISOString());
      const listed = own.gallery.list({ studioId: 'alpha', tags: [] }, null, 10).map((row) => row.id);
      assert.deepEqual(listed, [next.id, futureId], 'newest first is id order');
      // since at the future instant finds both (both were created at it), until finds neither.
      assert.deepEqual(own.gallery.list({ studioId: 'alpha', tags: [], since: new Date(future).toISOString() }, null, 10).length, 2);
      assert.deepEqual(own.gallery.list({ studioId: 'alpha', tags: [], until: new Date(future).toISOString() }, null, 10).length, 0);
    } finally {
      own.close();
    }
  });
});

describe('tag counts: a page with several tags walks the rarest', () => {
  test('counts follow creates, tag changes and purges; rarestFirst orders by them', () => {
    const g = openGallery(['gamma']);
    try {
      const count = (tag: string) =>
        (g.db.prepare('SELECT items FROM gallery_tag_counts WHERE tag = ?').pluck().get(tag) as number | undefined) ?? 0;
      const made = Array.from({ length: 5 }, () => g.gallery.create('gamma', { asset_id: g.newAsset(), tags: ['common'] }));
      const both = g.gallery.create('gamma', { asset_id: g.newAsset(), tags: ['common', 'rare', 'common'] });
      assert.deepEqual([count('common'), count('rare')], [6, 1]);
      assert.deepEqual(g.gallery.rarestFirst(['common', 'rare', 'never']), ['never', 'rare', 'common']);
      assert.deepEqual(g.gallery.list({ studioId: 'gamma', tags: ['common', 'rare'] }, null, 10).map((r) => r.id), [both.id]);
      assert.deepEqual(g.gallery.list({ studioId: 'gamma', tags: ['rare', 'common'] }, null, 10).map((r) => r.id), [both.id]);

      g.gallery.update('gamma', made[0]!.id, { tags: ['rare'] });
      assert.deepEqual([count('common'), count('rare')], [5, 2]);
      g.gallery.update('gamma', made[1]!.id, { tags: null });
      assert.deepEqual([count('common'), count('rare')], [4, 2]);

      // A soft delete keeps the tags (they go with a reclaim's purge).
      g.gallery.delete('gamma', made[0]!.id);
      assert.equal(count('rare'), 2);
      g.db.transaction(() => g.gallery.referenceSources()[0]!.purge!([made[0]!.asset_id]))();
      assert.equal(count('rare'), 1);
      assert.deepEqual(g.gallery.rarestFirst(['common', 'rare']), ['rare', 'common']);
    } finally {
      g.close();
    }
  });
});

describe('the search index: q within a studio', () => {
  test('a q never matches the studio column, and one studio\'s search sees only its items', () => {
    const g = openGallery(['gamma', 'delta']);
    try {
      const mine = g.gallery.create('gamma', { asset_id: g.newAsset(), title: 'shared word' });
      g.gallery.create('delta', { asset_id: g.newAsset(), title: 'shared word' });
      const find = (studioId: string | null, q: string) => {
        const plan = compileSearch(q, g.gallery.completions);
        return plan.kind === 'match' ? g.gallery.list({ studioId, tags: [], match: plan.expression }, null, 10).map((r) => r.id) : [];
      };
      assert.deepEqual(find('gamma', 'shared'), [mine.id]);
      assert.equal(find(null, 'shared').length, 2);
      for (const q of [studioWord('gamma'), `"${studioWord('gamma')}"`, 'st', 'st6']) {
        assert.deepEqual(find('gamma', q), [], `q=${q}`);
        assert.deepEqual(find(null, q), [], `scope=all, q=${q}`);
      }
    } finally {
      g.close();
    }
  });
});
