/**
 * Full-text search of the gallery (docs/api.md "Full-text `q`"): words, case-insensitive,
 * every word must match, the last one as a prefix, "quoted phrases" allowed,
 * and any string at all is a valid query.
 *
 * The words are found here, in one pure function used both for what is
 * indexed and for what is asked, so the two can never disagree. SQLite's FTS5
 * then only sees words of [a-z0-9] (its `ascii` tokenizer splits on the
 * spaces between them) and a query built from quoted phrases of such words:
 * no user text ever reaches the FTS5 query parser, so `AND`, `NEAR(`, `*`,
 * quotes and brackets are plain text.
 *
 * - Folding: NFKC (full-width letters, ligatures), lower case (final sigma
 *   as sigma: lower-casing "ΑΣ" gives "ας", which must stay a prefix of
 *   "αστυ"), and accents dropped from Latin, Greek and Cyrillic letters
 *   ("Café" finds "cafe").
 * - Scripts written without spaces (Chinese, Japanese, Thai, Lao, Khmer,
 *   Myanmar) and Korean syllables, and emoji, are one word per character, so
 *   a word typed inside a longer run ("猫" in "一只猫在睡觉", "睡觉") is a
 *   phrase of consecutive characters and is found. No term is too short.
 * - Encoding: a word's characters a-z and 0-9 (but `q`) stand for
 *   themselves; any other character is `q` and five base-32 digits of its code
 *   point. Each character maps to a fixed string and no mapping is a prefix of
 *   another, so a prefix of a word encodes to a prefix of its encoding.
 */

export type SearchPlan =
  | { kind: 'all' } // blank q: no search filter
  | { kind: 'none' } // q holds no letter, digit or symbol: nothing can match
  | { kind: 'match'; expression: string; terms: number };

/** Scripts and symbols whose every character is a word of its own. */
const SOLO = String.raw`\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\p{Extended_Pictographic}`;
const WORD = String.raw`\p{L}\p{N}\p{M}\p{Co}\p{So}`;
const TOKEN = new RegExp(String.raw`[${SOLO}]\p{M}*|(?:(?![${SOLO}])[${WORD}])+`, 'gu');
/** A base letter of a script whose accents are dropped, followed by its marks (after NFKD). */
const ACCENTED = /([\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}])\p{M}+/gu;

/** The words of a text, folded and encoded, in order. */
export function searchWords(text: string): string[] {
  const folded = text.normalize('NFKC').toLowerCase().replace(/ς/g, 'σ').normalize('NFKD').replace(ACCENTED, '$1').normalize('NFC');
  return Array.from(folded.matchAll(TOKEN), (m) => encodeWord(m[0]));
}

/** The one word of the index's `studio` column for a studio (ids are `[a-z][a-z0-9-]*`). */
export function studioWord(studioId: string): string {
  return `st${Buffer.from(studioId, 'utf8').toString('hex')}`;
}

/** What the search index holds for a text: its words separated by spaces. */
export function searchText(text: string | null): string {
  return text === null ? '' : searchWords(text).join(' ');
}

function encodeWord(word: string): string {
  let out = '';
  for (const ch of word) {
    if ((ch >= 'a' && ch <= 'z' && ch !== 'q') || (ch >= '0' && ch <= '9')) out += ch;
    else out += `q${ch.codePointAt(0)!.toString(32).padStart(5, '0')}`;
  }
  return out;
}

/** Prefixes up to this length have their own FTS5 prefix index (migration 0007). */
export const PREFIX_INDEXED = 3;
/** A longer prefix is spelled out as an OR of at most this many complete words. */
export const MAX_COMPLETIONS = 32;
/**
 * How many words of a q's phrases (all phrases together, in order) must stand
 * next to each other as written; later phrase words need only be present. FTS5
 * checks a phrase's positions word by word on every row holding all its words,
 * so phrases of thousands of common words would hold the service for minutes
 * at a million items; with this budget the worst q measured costs about 0.3-0.6 s there.
 */
export const PHRASE_WORD_BUDGET = 16;

/**
 * The complete words an index holds that start with `prefix` (longer than
 * PREFIX_INDEXED), at most MAX_COMPLETIONS of them, or null when there are more.
 */
export type Completions = (prefix: string) => readonly string[] | null;

/** The words of an indexed text that a prefix lookup may need to complete (longer than PREFIX_INDEXED). */
export function completableWords(words: readonly string[]): string[] {
  return [...new Set(words.filter((w) => w.length > PREFIX_INDEXED))];
}

interface Term {
  words: string[];
  /** Quoted: matched as written, never as a prefix. */
  quoted: boolean;
}

/**
 * A `q` as an FTS5 expression: one quoted phrase per term (a word, or the
 * words of a "quoted phrase"), joined by AND; the last term, when it is an
 * unquoted word, matches as a prefix. An unclosed quote runs to the end.
 * Terms with no words in them (`*`, `--`) are left out; when that leaves
 * none, nothing matches. Past PHRASE_WORD_BUDGET phrase words, the further
 * words of phrases need only be present.
 *
 * The prefix: FTS5 answers `"word" *` by merging the whole posting list of
 * every word that starts with it before it can return the first row (5-16 ms
 * for a common word at a million items), unless the prefix is short enough
 * to have its own prefix index. So a longer prefix, given `complete`, is
 * spelled out as `("sunset" OR "sunsets")`, whose postings FTS5 reads lazily
 * in row order like any word's; no completion means nothing can match.
 * When the last term is a phrase, each completion is a phrase of its own that
 * FTS5 checks by position; if those would pass PHRASE_WORD_BUDGET (with the
 * other phrases of q), the phrase keeps `*` instead (same matches).
 */
export function compileSearch(q: string, complete?: Completions): SearchPlan {
  let terms: Term[] = [];
  for (const m of q.matchAll(/"([^"]*)"?|[^\s"]+/g)) {
    const quoted = m[1] !== undefined;
    const words = searchWords(quoted ? m[1]! : m[0]);
    if (words.length > 0) terms.push({ words, quoted });
  }
  if (terms.length === 0) return q.trim() === '' ? { kind: 'all' } : { kind: 'none' };
  terms = withinPhraseBudget(terms);
  const phrase = (words: readonly string[]) => `"${words.join(' ')}"`;
  const last = terms[terms.length - 1]!;
  let tail = phrase(last.words);
  if (!last.quoted) {
    const prefix = last.words[last.words.length - 1]!;
    const completions = complete && prefix.length > PREFIX_INDEXED ? complete(prefix) : null;
    if (completions === null) {
      tail += ' *';
    } else if (completions.length === 0) {
      return { kind: 'none' };
    } else if (positionalWords(terms.slice(0, -1)) + (last.words.length > 1 ? completions.length * last.words.length : 0) > PHRASE_WORD_BUDGET) {
      // Each spelled completion of a phrase is one more phrase whose positions FTS5 checks:
      // past the budget the phrase keeps FTS5's own prefix, checked once per row.
      tail += ' *';
    } else {
      const lead = last.words.slice(0, -1);
      const spelled = completions.map((word) => phrase([...lead, word]));
      tail = spelled.length === 1 ? spelled[0]! : `(${spelled.join(' OR ')})`;
    }
  }
  // Each term once: a repeat changes nothing in an AND, but FTS5 would walk its postings
  // again for every candidate row (a q of 3,000 repeated words: seconds at 100,000 items).
  const parts = [...new Set([...terms.slice(0, -1).map((t) => phrase(t.words)), tail])];
  return { kind: 'match', expression: parts.join(' AND '), terms: parts.length };
}

/** The words FTS5 checks by position for these terms: those of each distinct phrase (a term of two or more words). */
function positionalWords(terms: readonly Term[]): number {
  const phrases = new Map(terms.filter((t) => t.words.length > 1).map((t) => [t.words.join(' '), t.words.length]));
  return [...phrases.values()].reduce((sum, n) => sum + n, 0);
}

/**
 * Terms whose phrases hold PHRASE_WORD_BUDGET words at most, all together: the
 * rest of a phrase past the budget becomes one term per word (still required).
 * A term that is split keeps its quoted flag on its last piece, so an unquoted
 * last word stays a prefix. A repeated phrase spends nothing and is split as
 * its first occurrence was (compileSearch then searches its pieces once).
 */
function withinPhraseBudget(terms: Term[]): Term[] {
  let budget = PHRASE_WORD_BUDGET;
  const splits = new Map<string, string[][]>();
  const out: Term[] = [];
  for (const t of terms) {
    if (t.words.length === 1) {
      out.push(t);
      continue;
    }
    const key = t.words.join(' ');
    let pieces = splits.get(key);
    if (pieces === undefined) {
      const kept = Math.min(t.words.length, Math.max(budget, 0));
      budget -= kept;
      pieces = kept >= 2 ? [t.words.slice(0, kept)] : [];
      for (const word of kept >= 2 ? t.words.slice(kept) : t.words) pieces.push([word]);
      splits.set(key, pieces);
    }
    pieces.forEach((words, i) => out.push({ words, quoted: i === pieces.length - 1 ? t.quoted : true }));
  }
  return out;
}
