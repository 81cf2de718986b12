import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { client, send } from './helpers/http';
import { assertError } from './helpers/scenario';
import { startService, type TestService } from './helpers/service';
import { createItem, ids, newAsset, newestFirst, walk, type Client } from './helpers/gallery';

/**
 * `q` on GET /gallery/items (docs/api.md "Full-text `q`"): words,
 * case-insensitive, every word must match, the last one as a prefix, quoted
 * phrases, over title and params.prompt only; accents folded; scripts written
 * without spaces searchable by a word inside a run; any string at all is a
 * valid query (never a 500 or a syntax error).
 */

let svc: TestService;
let delta: Client;
let token = '';
let asset = '';
const items: Record<string, any> = {};
let omegaItem: any;
let deltaAll: Client;

/** Title and prompt of each item, by name. */
const CORPUS: Record<string, { title?: string | null; prompt?: unknown; tags?: string[]; params?: Record<string, unknown> }> = {
  sunset: { title: 'Sunset over the Zebra crossing', prompt: 'a wide shot' },
  savanna: { title: null, prompt: 'A ZEBRA in the Savanna at dawn' },
  zebraOnly: { title: 'zebra only' },
  xylophone: { title: 'Zebra playing a xylophone' },
  xray: { title: 'x marks the zebra', prompt: 'lone x' },
  cafe: { title: 'Café Noir', prompt: 'espresso' },
  cafePlain: { title: 'cafe society' },
  chinese: { prompt: '一只猫在睡觉' },
  japanese: { title: '猫が寝ている', prompt: null },
  thai: { prompt: 'แมวนอนหลับ' },
  korean: { prompt: '고양이가 잔다' },
  fox1: { title: 'red fox jumps' },
  fox2: { title: 'fox red jumps' },
  hidden: { title: 'visible', tags: ['hiddentag'], params: { prompt: 'shown', negative: 'hiddenparam', nested: { prompt: 'hiddennested' } } },
  numeric: { title: 'render 2048 v2', params: { prompt: 42 } },
  fullwidth: { title: 'ＦＵＬＬ width' },
  symbols: { title: 'C++ & "quotes" (brackets) *star* title:foo NEAR(a b) -minus ^caret' },
  emoji: { title: 'party 🎉 time' },
  queen: { title: 'Quiet QUEEN', prompt: 'AI猫 mix' },
  long: { prompt: Array.from({ length: 20 }, (_, i) => `word${i}`).join(' ') },
};

function body(name: string): Record<string, unknown> {
  const c = CORPUS[name]!;
  const params = c.params ?? (c.prompt === undefined ? {} : { prompt: c.prompt });
  return { asset_id: asset, title: c.title ?? null, tags: c.tags ?? [], params };
}

const search = async (q: string, c: Client = delta) => {
  const res = await c.get(`/gallery/items?q=${encodeURIComponent(q)}&limit=500`);
  assert.equal(res.status, 200, `${q}: ${res.text}`);
  assert.equal(res.json.next_cursor, null);
  return res.json.items as any[];
};
const names = (found: any[]) => found.map((f) => Object.keys(items).find((k) => items[k].id === f.id) ?? f.id).sort();
const finds = async (q: string, expected: string[]) => assert.deepEqual(names(await search(q)), [...expected].sort(), `q=${q}`);

before(async () => {
  svc = await startService();
  token = svc.studio('delta', ['gallery', 'assets']);
  delta = client(svc.port, token);
  asset = (await newAsset(svc.port, token, 'image')).id;
  for (const name of Object.keys(CORPUS)) items[name] = await createItem(delta, body(name));
  // Another studio's matching item is never found by delta's search.
  const other = svc.studio('omega', ['gallery', 'assets']);
  const oc = client(svc.port, other);
  omegaItem = await createItem(oc, { asset_id: (await newAsset(svc.port, other)).id, title: 'zebra from omega' });
  deltaAll = client(svc.port, svc.token('delta', ['gallery', 'gallery.read_all']));
});

after(async () => {
  await svc?.stop();
});

describe('the rules of q', () => {
  const words = (order: number[]) => order.map((i) => `word${i}`).join(' ');
  const rows: [string, string, string[]][] = [
    // docs/api.md §Full-text q: the first 16 phrase words of q stand as written, later ones need only be present.
    ['a quoted phrase of 20 words finds its prompt', `"${words([...Array(20).keys()])}"`, ['long']],
    ['the 16 words of a phrase must stand together', `"${words([1, 0, ...Array.from({ length: 14 }, (_, i) => i + 2)])}"`, []],
    ['past 16, a phrase\'s words need only be present', `"${words([...Array.from({ length: 16 }, (_, i) => i), 19, 18, 17, 16])}"`, ['long']],
    ['a repeated phrase spends the budget once', `${'"word0 word1" '.repeat(8)}"${words([3, 2])}"`, []],
    ['a 16-word run ending in a prefix of many words still finds its prompt', `${words([...Array(15).keys()]).replace(/ /g, '-')}-word1`, ['long']],
    ['... and only where the prefix stands next to the run', `${words([...Array(15).keys()]).replace(/ /g, '-')}-word2`, []],
    ['one word, in title or prompt', 'zebra', ['sunset', 'savanna', 'zebraOnly', 'xylophone', 'xray']],
    ['case-insensitive', 'ZeBrA', ['sunset', 'savanna', 'zebraOnly', 'xylophone', 'xray']],
    ['a word of the prompt only', 'savanna', ['savanna']],
    ['every word must match (title and prompt together)', 'zebra dawn', ['savanna']],
    ['every word must match: one missing is no hit', 'zebra espresso', []],
    ['the last word is a prefix', 'sava', ['savanna']],
    ['the last word is a prefix, after whole words', 'zebra sav', ['savanna']],
    ['a word before the last is whole, not a prefix', 'sava zebra', []],
    ['a prefix of one character', 'zebra x', ['xylophone', 'xray']],
    ['a one-character word before the last is never dropped', 'x zebra', ['xray']],
    ['a one-character word alone', 'x', ['xylophone', 'xray']],
    ['a quoted phrase: adjacent words in order', '"red fox"', ['fox1']],
    ['the same words unquoted: both', 'red fox', ['fox1', 'fox2']],
    ['a quoted phrase is not a prefix', '"red fo"', []],
    ['a quoted phrase and a word', '"fox red" jumps', ['fox2']],
    ['an unclosed quote runs to the end', '"red fox', ['fox1']],
    ['accents fold: cafe finds Café', 'cafe', ['cafe', 'cafePlain']],
    ['accents fold: CAFÉ finds cafe', 'CAFÉ', ['cafe', 'cafePlain']],
    ['accents fold inside a phrase', '"café noir"', ['cafe']],
    ['full-width letters fold', 'full', ['fullwidth']],
    ['digits are words', '2048', ['numeric']],
    ['a mixed word', 'v2', ['numeric']],
    ['Chinese: one character inside a run', '猫', ['chinese', 'japanese', 'queen']],
    ['Chinese: two characters inside a run', '睡觉', ['chinese']],
    ['Chinese: characters not adjacent in the text do not match as one word', '猫睡', []],
    ['Chinese: two words, both needed', '猫 睡觉', ['chinese']],
    ['Japanese: a word inside a run', '寝て', ['japanese']],
    ['Japanese: kana at the end of a run', 'いる', ['japanese']],
    ['Thai: a word inside a run', 'นอน', ['thai']],
    ['Thai: a word with a vowel mark', 'หลับ', ['thai']],
    ['Korean: a syllable inside a word', '양', ['korean']],
    ['emoji is a word', '🎉', ['emoji']],
    ['the letter q (the index\'s escape letter) as a prefix', 'qu', ['queen', 'symbols']],
    ['the letter q alone', 'q', ['queen', 'symbols']],
    ['a word with q, in capitals', 'QUEEN', ['queen']],
    ['text looking like the index\'s encoding finds nothing', 'q0003h', []],
    ['a Latin word written against Chinese', 'ai', ['queen']],
    ['Chinese written against a Latin word', '猫 mix', ['queen']],
    ['words around symbols', 'c quotes brackets star', ['symbols']],
    ['a field-looking term is plain text', 'title:foo', ['symbols']],
    ['NEAR( is plain text', 'NEAR(a b)', ['symbols']],
    ['a leading minus is not a negation', '-minus', ['symbols']],
    ['a caret is not an anchor', '^caret', ['symbols']],
    ['tags are not searched', 'hiddentag', []],
    ['other params members are not searched', 'hiddenparam', []],
    ['a nested prompt is not searched', 'hiddennested', []],
    ['params.prompt is searched', 'shown', ['hidden']],
    ['a prompt that is not a string is not searched', '42', []],
    ['another studio\'s items are not searched', 'omega', []],
  ];
  for (const [name, q, expected] of rows) test(`${name}: q=${q}`, () => finds(q, expected));

  test('with scope=all, q searches every studio; studio narrows it', async () => {
    const zebras = ['sunset', 'savanna', 'zebraOnly', 'xylophone', 'xray'].map((n) => items[n]);
    assert.deepEqual(ids(await walk(deltaAll, '/gallery/items?scope=all&q=zebra', 2)), ids(newestFirst([...zebras, omegaItem])));
    assert.deepEqual(ids(await walk(deltaAll, '/gallery/items?scope=all&studio=omega&q=zebra', 2)), [omegaItem.id]);
    assert.deepEqual(ids(await walk(deltaAll, '/gallery/items?scope=all&studio=omega&q=savanna', 2)), []);
  });

  test('an empty or blank q is no filter', async () => {
    const all = ids((await delta.get('/gallery/items?limit=500')).json.items);
    assert.equal(all.length, Object.keys(CORPUS).length);
    for (const q of ['', ' ', '   \t ']) assert.deepEqual(ids(await search(q)), all, JSON.stringify(q));
  });

  test('a q with no letter or digit is an empty page', async () => {
    for (const q of ['***', '"', '""', '()', '-', '+ - * ^', '" "']) {
      assert.deepEqual(await search(q), [], JSON.stringify(q));
    }
  });

  test('results come newest first, pages walk every match once, and filters combine with q', async () => {
    const expected = ids(newestFirst(['sunset', 'savanna', 'zebraOnly', 'xylophone', 'xray'].map((n) => items[n])));
    assert.deepEqual(ids(await search('zebra')), expected);
    for (const limit of [1, 2, 3]) assert.deepEqual(ids(await walk(delta, '/gallery/items?q=zebra', limit)), expected, `limit ${limit}`);
    assert.deepEqual(ids(await walk(delta, `/gallery/items?q=zebra&since=${encodeURIComponent(items.zebraOnly.created_at)}`, 1)),
      ids(newestFirst(['zebraOnly', 'xylophone', 'xray'].map((n) => items[n]))));
    assert.deepEqual(ids(await walk(delta, '/gallery/items?q=zebra&kind=video', 1)), []);
  });

  test('q with tags: every tag and every word', async () => {
    const a = await createItem(delta, { asset_id: asset, title: 'tagged zebra', tags: ['t1', 't2'] });
    const b = await createItem(delta, { asset_id: asset, title: 'tagged zebra too', tags: ['t1'] });
    assert.deepEqual(ids(await walk(delta, '/gallery/items?q=tagged&tag=t1', 1)), [b.id, a.id]);
    assert.deepEqual(ids(await walk(delta, '/gallery/items?q=tagged&tag=t2', 1)), [a.id], 'a single tag narrows a search');
    assert.deepEqual(ids(await walk(delta, '/gallery/items?q=tagged&tag=t3', 1)), []);
    assert.deepEqual(ids(await walk(delta, '/gallery/items?q=tagged+zebra&tag=t1&tag=t2', 1)), [a.id]);
    for (const it of [a, b]) assert.equal((await delta.delete(`/gallery/items/${it.id}`)).status, 204);
  });

  test('pages with q stay stable while matching items are inserted', async () => {
    const expected = ids(await search('zebra'));
    const added: any[] = [];
    const got = ids(await walk(delta, '/gallery/items?q=zebra', 2, async () => {
      added.push(await createItem(delta, { asset_id: asset, title: 'zebra newcomer' }));
    }));
    assert.deepEqual(got, expected);
    for (const it of added) assert.equal((await delta.delete(`/gallery/items/${it.id}`)).status, 204);
  });

  test('a cursor is bound to its q', async () => {
    const first = await delta.get('/gallery/items?q=zebra&limit=1');
    const cursor = encodeURIComponent(first.json.next_cursor);
    assert.equal((await delta.get(`/gallery/items?q=zebra&cursor=${cursor}`)).status, 200);
    assertError(await delta.get(`/gallery/items?q=zebr&cursor=${cursor}`), 400, 'bad_cursor');
    assertError(await delta.get(`/gallery/items?q=ZEBRA&cursor=${cursor}`), 400, 'bad_cursor');
    assertError(await delta.get(`/gallery/items?cursor=${cursor}`), 400, 'bad_cursor');
  });

  test('a title change changes what q finds; a prompt stays searchable across it', async () => {
    const it = await createItem(delta, { asset_id: asset, title: 'walrus portrait', params: { prompt: 'tusk study' } });
    assert.deepEqual(ids(await search('walrus')), [it.id]);
    const patched = await delta.patch(`/gallery/items/${it.id}`, { title: 'narwhal portrait' });
    assert.equal(patched.status, 200, patched.text);
    await finds('walrus', []);
    assert.deepEqual(ids(await search('narwhal')), [it.id]);
    assert.deepEqual(ids(await search('tusk')), [it.id]);
    assert.equal((await delta.patch(`/gallery/items/${it.id}`, { tags: ['x'], starred: true })).status, 200);
    assert.deepEqual(ids(await search('narwhal tusk')), [it.id], 'a patch without title keeps the entry');
    assert.equal((await delta.patch(`/gallery/items/${it.id}`, { title: null })).status, 200);
    assert.deepEqual(ids(await search('narwhal')), []);
    assert.deepEqual(ids(await search('tusk')), [it.id]);
    assert.equal((await delta.delete(`/gallery/items/${it.id}`)).status, 204);
    assert.deepEqual(ids(await search('tusk')), [], 'a deleted item is never found');
    assert.deepEqual(ids(await search('portrait')), []);
  });
});

// ---------------------------------------------------------------------------
describe('hostile q strings: always 200 with a page', () => {
  const words2000 = Array.from({ length: 2000 }, (_, i) => `w${i}`).join('+');
  /** Raw query-string values, sent as written (already encoded where needed). */
  const hostile: [string, string][] = [
    ['a double quote', '%22'],
    ['two double quotes', '%22%22'],
    ['an unclosed quote', '%22a'],
    ['quotes inside a word', 'a%22b%22c'],
    ['a star', '*'],
    ['a prefix star', 'zeb*'],
    ['FTS5 operators', 'AND+OR+NOT+NEAR('],
    ['a NEAR group', 'NEAR(a+b%2C+2)'],
    ['a column filter', 'title%3Afoo'],
    ['a column filter with braces', '%7Btitle+prompt%7D%3A+foo'],
    ['a leading minus', '-foo'],
    ['a caret', '%5Efoo'],
    ['an open bracket', '('],
    ['a close bracket', ')'],
    ['a brace', '%7B'],
    ['a plus (encoded)', '%2B'],
    ['a lone AND', 'AND'],
    ['a lone NOT', 'NOT'],
    ['a lone OR', 'OR'],
    ['a single quote', "'"],
    ['a backslash', '%5C'],
    ['a semicolon and SQL', "'%3B+DROP+TABLE+gallery_items%3B--"],
    ['emoji', '%F0%9F%8E%AC%F0%9F%98%80'],
    ['an emoji ZWJ sequence', '%F0%9F%91%A8%E2%80%8D%F0%9F%91%A9%E2%80%8D%F0%9F%91%A7'],
    ['empty', ''],
    ['whitespace', '%20%09%20'],
    ['a 10,000-character word', 'z'.repeat(10_000)],
    ['10,000 characters of words', 'ab+'.repeat(3334)],
    ['a NUL', '%00'],
    ['a NUL inside a word', 'zeb%00ra'],
    ['control characters', '%01%02%1B%7F'],
    ['a lone high surrogate as UTF-8 bytes', '%ED%A0%80'],
    ['a lone low surrogate as UTF-8 bytes', 'zebra%ED%B0%80'],
    ['invalid UTF-8', '%FF%FE'],
    ['a lone percent', '%'],
    ['a bad percent escape', '%zz'],
    ['2,000 words', words2000],
    ['combining marks only', '%CC%81%CC%81'],
    ['a right-to-left word', '%D7%A9%D7%9C%D7%95%D7%9D'],
    ['a zero-width space', 'zebra%E2%80%8B'],
    ['q given twice', 'zebra&q=fox'],
  ];
  for (const [name, raw] of hostile) {
    test(`${name}`, async () => {
      const res = await send(svc.port, { path: `/api/v1/gallery/items?q=${raw}`, token });
      if (name === 'q given twice') {
        // Two values are not one string: a plain 400, never a 500.
        assertError(res, 400, 'bad_request');
        return;
      }
      assert.equal(res.status, 200, `${name}: ${res.status} ${res.text.slice(0, 300)}`);
      assert.deepEqual(Object.keys(res.json).sort(), ['items', 'next_cursor']);
      assert.ok(Array.isArray(res.json.items));
    });
  }

  test('hostile strings find what their words find', async () => {
    await finds('zeb*', ['sunset', 'savanna', 'zebraOnly', 'xylophone', 'xray']);
    await finds('"zebra', ['sunset', 'savanna', 'zebraOnly', 'xylophone', 'xray']);
    await finds('zebra AND', []);
    await finds('z'.repeat(10_000), []);
    await finds(Array.from({ length: 2000 }, () => 'zebra').join(' '), ['sunset', 'savanna', 'zebraOnly', 'xylophone', 'xray']);
  });
});
