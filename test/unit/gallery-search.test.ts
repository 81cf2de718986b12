import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compileSearch, completableWords, PREFIX_INDEXED, searchText, searchWords, type Completions, type SearchPlan } from '../../service/gallery/search';
import { propSeed, rng } from '../helpers/prng';

/**
 * Gallery search, the pure part (docs/api.md "Full-text `q`", service/gallery/search.ts):
 * folding, words, their encoding for FTS5, and `q` compiled to an FTS5
 * expression that no user text can reach the FTS5 parser through.
 */

/** The documented encoding of one folded word: a-z (but q) and 0-9 as they are, any other character q + 5 base-32 digits. */
const enc = (word: string) =>
  Array.from(word, (ch) => (/^[a-pr-z0-9]$/.test(ch) ? ch : `q${ch.codePointAt(0)!.toString(32).padStart(5, '0')}`)).join('');
/** Its inverse, to read an encoded word back. */
const dec = (word: string) => word.replace(/q([0-9a-v]{5})/g, (_, code: string) => String.fromCodePoint(parseInt(code, 32)));
const ENCODED_WORD = /^(?:[a-pr-z0-9]|q[0-9a-v]{5})+$/;

const SEED = propSeed();
const r = rng(SEED);

describe('searchWords: folding', () => {
  const rows: [string, string, string[]][] = [
    ['ASCII words, case folded', 'Hello WORLD 42', ['hello', 'world', '42']],
    ['Latin accents dropped', 'CAFÉ crème brûlée naïve', ['cafe', 'creme', 'brulee', 'naive']],
    ['a decomposed accent is the same as a composed one', 'Cafe\u0301 e\u0301\u0302', ['cafe', 'e']],
    ['full-width letters and digits (NFKC)', 'ＡＢＣ１２３ ｃａｔ', ['abc123', 'cat']],
    ['ligatures (NFKC)', 'ﬁne ﬂow oﬃce', ['fine', 'flow', 'office']],
    ['superscripts and fractions (NFKC)', 'x² ½ ①', ['x2', '1', '2', '1']],
    ['trade mark sign (NFKC)', 'Acme™', ['acmetm']],
    ['dotted capital I', 'İSTANBUL', ['istanbul']],
    ['Greek: case and accents', 'Ἀθῆναι ΑΘΗΝΑ Ωμέγα', [enc('αθηναι'), enc('αθηνα'), enc('ωμεγα')]],
    ['Cyrillic: case and accents (й and ё lose their marks too)', 'Ёлка МОСКВА йод', [enc('елка'), enc('москва'), enc('иод')]],
    ['a word of two scripts is one word', 'abcабв', [enc('abcабв')]],
    ['other scripts keep their marks', 'हिन्दी عربي', [enc('हिन्दी'), enc('عربي')]],
    ['sharp s is kept (no full case folding)', 'Straße ẞ', [enc('straße'), enc('ß')]],
    ['dotless i is its own letter', 'ı', [enc('ı')]],
  ];
  for (const [name, text, words] of rows) test(name, () => assert.deepEqual(searchWords(text), words));
});

describe('searchWords: scripts without spaces, Hangul and emoji are one word per character', () => {
  const rows: [string, string, string[]][] = [
    ['Chinese', '一只猫在睡觉', ['一', '只', '猫', '在', '睡', '觉']],
    ['hiragana and katakana', 'ひらがなカタカナ', ['ひ', 'ら', 'が', 'な', 'カ', 'タ', 'カ', 'ナ']],
    ['kana keep their voicing marks, composed or not', 'が か\u3099', ['が', 'が']],
    ['half-width katakana with a voicing mark (NFKC)', 'ｶﾞ', ['ガ']],
    ['Hangul syllables', '한국어', ['한', '국', '어']],
    ['Thai: a base letter with its marks is one word; a vowel letter is its own', 'กิน ภาษา', ['กิ', 'น', 'ภ', 'า', 'ษ', 'า']],
    ['Lao, Khmer, Myanmar', 'ລາ ក ម', ['ລ', 'າ', 'ក', 'ម']],
    ['next to Latin words', 'abc猫def 猫cat', ['abc', '猫', 'def', '猫', 'cat']],
    ['emoji', '😀🐱 cat😀', ['😀', '🐱', 'cat', '😀']],
    ['a skin tone modifier is not a word of its own', '👍🏽', ['👍']],
    ['a ZWJ sequence is its people', '👨\u200d👩\u200d👧', ['👨', '👩', '👧']],
    ['pictographic symbols', 'a©b', ['a', '©', 'b']],
  ];
  for (const [name, text, words] of rows) test(name, () => assert.deepEqual(searchWords(text), words.map(enc)));
});

describe('searchWords: what separates words', () => {
  const rows: [string, string, string[]][] = [
    ['punctuation and symbols of ASCII', 'a-b_c.d/e:f"g*h(i)', ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i']],
    ['apostrophes', "don't don’t", ['don', 't', 'don', 't']],
    ['white space of every kind', 'a\tb\nc\u3000d\u00a0e', ['a', 'b', 'c', 'd', 'e']],
    ['nothing', '', []],
    ['only separators', ' -- ** !! "" ', []],
    ['FTS5 syntax is plain words', 'AND OR NOT NEAR(a b)', ['and', 'or', 'not', 'near', 'a', 'b']],
    ['lone surrogates separate', 'a\ud800b\udc00c', ['a', 'b', 'c']],
  ];
  for (const [name, text, words] of rows) test(name, () => assert.deepEqual(searchWords(text), words));
});

describe('searchText: what the index holds', () => {
  test('the words separated by single spaces', () => assert.equal(searchText('  Big  CAT, 猫! '), `big cat ${enc('猫')}`));
  test('null and blank are empty', () => {
    assert.equal(searchText(null), '');
    assert.equal(searchText(' \t'), '');
  });
});

describe('the encoding', () => {
  test('a-z but q and 0-9 stand for themselves', () => {
    assert.deepEqual(searchWords('abcdefghijklmnoprstuvwxyz0123456789'), ['abcdefghijklmnoprstuvwxyz0123456789']);
  });
  test('q and every other character are q and five base-32 digits of the code point', () => {
    assert.deepEqual(searchWords('q Q'), ['q0003h', 'q0003h']);
    assert.deepEqual(searchWords('ß'), [`q${(0xdf).toString(32).padStart(5, '0')}`]);
    assert.deepEqual(searchWords('😀'), ['q03tg0']); // U+1F600
    assert.deepEqual(searchWords('\u{10fffd}'), ['q11vvt']); // the highest private-use code point
  });
  test('a typed encoding is not the character it encodes', () => {
    assert.notDeepEqual(searchWords('q0003h'), searchWords('q'));
    assert.deepEqual(searchWords('q0003h'), ['q0003h0003h']);
    assert.notDeepEqual(searchWords('q03tg0'), searchWords('😀'));
    assert.notDeepEqual(searchWords('qq'), searchWords('q'));
  });

  // Words of characters that fold to themselves or to a single word, incl. Σ (final sigma) and combining accents.
  const POOL = [
    ...'abcdefghijklmnopqrstuvwxyzQZ0189', ...'ÀÉéüñçøåßẞ', 'e\u0301', 'ﬁ', 'Ａ', 'ｑ',
    ...'αβγδεζηθλμξοπρστυφχψωΑΒΓΣΤΥΩάέήίόύώςΐ', ...'абвгдеёжзийклмнопрстуфхцчшщъыьэюяАБВЁЙЖ',
    ...'İı', ...'عربي', ...'हिन्दी', '\u{e000}', '\u{10fffd}',
  ];
  const randomWord = () => Array.from({ length: 1 + r.int(8) }, () => r.pick(POOL)).join('');

  test(`every word is encoded, and reads back as its folded text (seed ${SEED})`, () => {
    for (let n = 0; n < 2000; n++) {
      const text = Array.from({ length: 1 + r.int(4) }, randomWord).join(r.pick([' ', '-', ', ']));
      for (const word of searchWords(text)) {
        assert.match(word, ENCODED_WORD, JSON.stringify(text));
        assert.equal(enc(dec(word)), word, JSON.stringify(text));
      }
    }
  });

  test(`the words of a prefix are a prefix of the words, at character boundaries (seed ${SEED})`, () => {
    // What makes "the last word as a prefix" work: typing more of a word only lengthens its encoding.
    for (let n = 0; n < 2000; n++) {
      const text = randomWord();
      const words = searchWords(text);
      assert.equal(words.length, 1, JSON.stringify(text));
      const chars = Array.from(text);
      for (let k = 1; k < chars.length; k++) {
        const prefix = chars.slice(0, k).join('');
        const got = searchWords(prefix);
        assert.equal(got.length, 1, JSON.stringify(prefix));
        assert.ok(words[0]!.startsWith(got[0]!), `${JSON.stringify(prefix)} (${dec(got[0]!)}) is a prefix of ${JSON.stringify(text)} (${dec(words[0]!)})`);
      }
    }
  });

  test('Greek: capitals typed as a prefix find the word (final sigma folds to sigma)', () => {
    const [word] = searchWords('ΑΣΤΥ');
    for (const prefix of ['ΑΣ', 'ας', 'ασ', 'Ασ']) assert.ok(word!.startsWith(searchWords(prefix)[0]!), prefix);
    assert.deepEqual(searchWords('ΟΔΟΣ'), searchWords('οδος'));
    assert.deepEqual(searchWords('ΟΔΟΣ'), searchWords('οδοσ'));
  });
});

describe('compileSearch', () => {
  const w = (text: string) => searchWords(text).join(' ');
  /** Words w{from}..w{to} as a phrase's text, and as one term each. */
  const n = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `w${from + i}`).join(' ');
  const singles = (from: number, to: number) => n(from, to).split(' ').map((x) => `"${x}"`).join(' AND ');
  const rows: [string, string, SearchPlan][] = [
    ['blank is everything', '', { kind: 'all' }],
    ['white space is everything', ' \t\n\u3000', { kind: 'all' }],
    ['one word, as a prefix', 'cat', { kind: 'match', expression: '"cat" *', terms: 1 }],
    ['every word must match; only the last is a prefix', 'Big cat', { kind: 'match', expression: '"big" AND "cat" *', terms: 2 }],
    ['a quoted phrase', '"big cat" sle', { kind: 'match', expression: '"big cat" AND "sle" *', terms: 2 }],
    ['a quoted last term is not a prefix', 'sleepy "big cat"', { kind: 'match', expression: '"sleepy" AND "big cat"', terms: 2 }],
    ['an unclosed quote runs to the end', 'a "big cat', { kind: 'match', expression: '"a" AND "big cat"', terms: 2 }],
    ['quotes inside a run split it', 'a"b c"d', { kind: 'match', expression: '"a" AND "b c" AND "d" *', terms: 3 }],
    ['adjacent phrases', '"a""b"', { kind: 'match', expression: '"a" AND "b"', terms: 2 }],
    ['empty quotes are left out', '"" cat ""', { kind: 'match', expression: '"cat" *', terms: 1 }],
    ['punctuation-only terms are left out', '-- cat * ...', { kind: 'match', expression: '"cat" *', terms: 1 }],
    ['a punctuated run is a phrase of its words', 'foo-bar', { kind: 'match', expression: '"foo bar" *', terms: 1 }],
    // A repeat adds nothing to an AND, but FTS5 would walk its postings again for every candidate row.
    ['a repeated word is searched once', 'odd even odd even odd', { kind: 'match', expression: '"odd" AND "even" AND "odd" *', terms: 3 }],
    ['a repeated phrase is searched once', '"big cat" "big cat" cat "big cat"', { kind: 'match', expression: '"big cat" AND "cat"', terms: 2 }],
    ['a word and the same word quoted are one term', 'cat "cat" dog', { kind: 'match', expression: '"cat" AND "dog" *', terms: 2 }],
    ['many repeats are one term', 'zebra '.repeat(20) + 'zebra', { kind: 'match', expression: '"zebra" AND "zebra" *', terms: 2 }],
    ['FTS5 operators are words', 'AND OR NOT NEAR(', { kind: 'match', expression: '"and" AND "or" AND "not" AND "near" *', terms: 4 }],
    ['FTS5 column filters and carets are words', 'title:cat ^dog', { kind: 'match', expression: '"title cat" AND "dog" *', terms: 2 }],
    ['a star after a word', 'cat*', { kind: 'match', expression: '"cat" *', terms: 1 }],
    ['folding applies to q', 'CAFÉ', { kind: 'match', expression: '"cafe" *', terms: 1 }],
    ['a run of Chinese is a phrase of its characters', '一只猫', { kind: 'match', expression: `"${w('一只猫')}" *`, terms: 1 }],
    ['a single character is a term (never dropped)', '猫 a', { kind: 'match', expression: `"${w('猫')}" AND "a" *`, terms: 2 }],
    ['emoji', '😀', { kind: 'match', expression: `"${w('😀')}" *`, terms: 1 }],
    // Phrase positions are checked word by word on every candidate row: only PHRASE_WORD_BUDGET
    // words of all phrases together must stand as written; later ones need only be present.
    ['a phrase over the budget: its first 16 words stand together, the rest are required words', `"${n(1, 20)}" z`, { kind: 'match', expression: `"${n(1, 16)}" AND ${singles(17, 20)} AND "z" *`, terms: 6 }],
    ['the budget counts every phrase of q', `"${n(1, 10)}" "${n(11, 20)}"`, { kind: 'match', expression: `"${n(1, 10)}" AND "${n(11, 16)}" AND ${singles(17, 20)}`, terms: 6 }],
    ['a spent budget leaves later phrases as words', `"${n(1, 16)}" "a b"`, { kind: 'match', expression: `"${n(1, 16)}" AND "a" AND "b"`, terms: 3 }],
    ['a repeated phrase spends the budget once (docs/api.md: repeated terms count once)', `"${n(1, 2)}" `.repeat(8) + `"${n(3, 4)}"`, { kind: 'match', expression: `"${n(1, 2)}" AND "${n(3, 4)}"`, terms: 2 }],
    ['a repeat of a split phrase splits the same way', `"${n(1, 17)}" "${n(1, 17)}" "a b"`, { kind: 'match', expression: `"${n(1, 16)}" AND "w17" AND "a" AND "b"`, terms: 4 }],
    ['a quoted single word is no phrase: it spends no budget', `"a" "${n(1, 16)}"`, { kind: 'match', expression: `"a" AND "${n(1, 16)}"`, terms: 2 }],
    ['an unquoted run is a phrase: it spends the budget', `${n(1, 10).replace(/ /g, '-')} "${n(11, 20)}"`, { kind: 'match', expression: `"${n(1, 10)}" AND "${n(11, 16)}" AND ${singles(17, 20)}`, terms: 6 }],
    ['an unquoted long run past the budget keeps its last word a prefix', n(1, 18).replace(/ /g, '-'), { kind: 'match', expression: `"${n(1, 16)}" AND "w17" AND "w18" *`, terms: 3 }],
    ['no word characters: nothing matches', '""', { kind: 'none' }],
    ['only punctuation: nothing matches', '* -- () "  "', { kind: 'none' }],
    ['a zero-width space is not blank: nothing matches', '\u200b', { kind: 'none' }],
  ];
  for (const [name, q, plan] of rows) test(`${name}: ${JSON.stringify(q)}`, () => assert.deepEqual(compileSearch(q), plan));

  const PHRASE = String.raw`"[a-z0-9]+(?: [a-z0-9]+)*"`;
  const EXPRESSION = new RegExp(String.raw`^${PHRASE}(?: AND ${PHRASE})*(?: \*)?$`);
  const HOSTILE = ['"', '"', '*', '(', ')', ':', '^', '-', '+', 'AND', 'OR', 'NOT', 'NEAR', 'NEAR(', ' ', ' ', '\t', '\\', "'", ';', '{', '}', 'q', 'Q', 'é', '猫', '😀', '\u0301', '\u3000', '\0'];
  const randomCodePoint = () => {
    const roll = r.int(4);
    if (roll === 0) return String.fromCharCode(0xd800 + r.int(0x800)); // a lone surrogate
    if (roll === 1) return String.fromCodePoint(r.int(0x80));
    if (roll === 2) return String.fromCodePoint(r.int(0x10000));
    const cp = r.int(0x110000);
    return cp >= 0xd800 && cp < 0xe000 ? '\ud83d' : String.fromCodePoint(cp);
  };
  const randomQ = () =>
    Array.from({ length: r.int(12) }, () => (r.chance(0.5) ? r.pick(HOSTILE) : r.chance(0.5) ? randomCodePoint() : r.pick(['cat', 'Dog', 'x1']))).join('');

  test(`any string compiles to quoted phrases of [a-z0-9 ], joined by AND, with at most a final " *" (seed ${SEED})`, () => {
    for (let n = 0; n < 5000; n++) {
      const q = randomQ();
      const plan = compileSearch(q);
      const label = `${JSON.stringify(q)} -> ${JSON.stringify(plan)}`;
      if (q.trim() === '') {
        assert.deepEqual(plan, { kind: 'all' }, label);
        continue;
      }
      if (plan.kind === 'none') {
        // Nothing in q is a word.
        assert.deepEqual(searchWords(q), [], label);
        continue;
      }
      assert.equal(plan.kind, 'match', label);
      if (plan.kind !== 'match') continue;
      assert.match(plan.expression, EXPRESSION, label);
      assert.equal(plan.expression.split(' AND ').length, plan.terms, label);
      // The phrases hold q's words, in order, none added; a phrase repeated in q is searched
      // once (each phrase appears once), so no distinct word is ever dropped.
      const parts = plan.expression.split(' AND ');
      assert.equal(new Set(parts).size, parts.length, label);
      const phrases = plan.expression.replace(/ \*$/, '').split(' AND ');
      const phraseWords = phrases.flatMap((p) => p.slice(1, -1).split(' '));
      const qWords = searchWords(q.replace(/"/g, ' '));
      assert.deepEqual(new Set(phraseWords), new Set(qWords), label);
      let at = 0;
      for (const word of phraseWords) {
        at = qWords.indexOf(word, at) + 1;
        assert.ok(at > 0, `${label}: the words keep q's order`);
      }
    }
  });
});

describe('compileSearch: a long last-word prefix spelled out from the word list', () => {
  const asked: string[] = [];
  const thirtyTwo = Array.from({ length: 32 }, (_, i) => `abcd${i + 10}`);
  const words: Record<string, string[] | null> = {
    sunset: ['sunset', 'sunsets'],
    barbaz: ['barbaz'],
    nothing: [],
    many: null,
    abcd: thirtyTwo,
    abcd1: thirtyTwo.slice(0, 8),
    abcd2: thirtyTwo.slice(0, 9),
  };
  const run = (count: number) => Array.from({ length: count }, (_, i) => `w${i + 1}`);
  const complete: Completions = (prefix) => {
    asked.push(prefix);
    return prefix in words ? words[prefix]! : [];
  };
  const rows: [string, SearchPlan, string[]][] = [
    ['city sunset', { kind: 'match', expression: '"city" AND ("sunset" OR "sunsets")', terms: 2 }, ['sunset']],
    ['SUNSET', { kind: 'match', expression: '("sunset" OR "sunsets")', terms: 1 }, ['sunset']],
    ['foo-barbaz', { kind: 'match', expression: '"foo barbaz"', terms: 1 }, ['barbaz']],
    ['city many', { kind: 'match', expression: '"city" AND "many" *', terms: 2 }, ['many']],
    ['city nothing', { kind: 'none' }, ['nothing']],
    ['city sun', { kind: 'match', expression: '"city" AND "sun" *', terms: 2 }, []],
    ['"city sunset"', { kind: 'match', expression: '"city sunset"', terms: 1 }, []],
    ['sunset "city"', { kind: 'match', expression: '"sunset" AND "city"', terms: 2 }, []],
    ["don't", { kind: 'match', expression: '"don t" *', terms: 1 }, []],
    // Each spelled completion of a phrase's last word is a phrase FTS5 checks by position: the
    // alternatives may not check more than PHRASE_WORD_BUDGET words (32 phrases of 16 words
    // took 3 s at 100,000 items); past it, the phrase prefix is FTS5's own `*`, checked once.
    ['w1-abcd1', { kind: 'match', expression: `(${thirtyTwo.slice(0, 8).map((x) => `"w1 ${x}"`).join(' OR ')})`, terms: 1 }, ['abcd1']],
    ['w1-abcd2', { kind: 'match', expression: '"w1 abcd2" *', terms: 1 }, ['abcd2']],
    [[...run(15), 'abcd'].join('-'), { kind: 'match', expression: `"${run(15).join(' ')} abcd" *`, terms: 1 }, ['abcd']],
    [`"w1 w2 w3 w4 w5 w6 w7 w8" w9-abcd1`, { kind: 'match', expression: '"w1 w2 w3 w4 w5 w6 w7 w8" AND "w9 abcd1" *', terms: 2 }, ['abcd1']],
    ['w1 w2 w3 abcd', { kind: 'match', expression: `"w1" AND "w2" AND "w3" AND (${thirtyTwo.map((x) => `"${x}"`).join(' OR ')})`, terms: 4 }, ['abcd']],
  ];
  for (const [q, expected, lookups] of rows) {
    test(`${JSON.stringify(q)} -> ${expected.kind === 'match' ? expected.expression : expected.kind}`, () => {
      asked.length = 0;
      assert.deepEqual(compileSearch(q, complete), expected);
      assert.deepEqual(asked, lookups, `only prefixes longer than ${PREFIX_INDEXED} are looked up`);
    });
  }
  test('completableWords: the distinct words longer than the prefix indexes', () => {
    assert.deepEqual(completableWords(['a', 'abc', 'abcd', 'sunset', 'abcd', 'q00spb']), ['abcd', 'sunset', 'q00spb']);
  });
});
