import { gunzipSync } from 'node:zlib';

/**
 * SVG with every external reference taken out, before any decoder sees it
 * (docs/security.md, Inputs: thumbnails). An SVG names other files by `href`/`src`,
 * CSS `url(...)` and `@import`, `xml:base`, `<?xml-stylesheet?>`, and
 * external entities and DTDs; librsvg resolves such names beside the file, so
 * an SVG in the blob store could draw another studio's image into its own
 * thumbnail. Decoders are handed bytes without a path (thumbs.ts), and these
 * bytes are rebuilt here first, as a second wall:
 *
 * - The document is re-written from its tokens, never patched: comments,
 *   processing instructions (the XML declaration included) and the DOCTYPE
 *   are dropped, and entities are expanded here (internal ones; an external
 *   or malformed one expands to nothing), so what comes out has no DTD,
 *   entity or default attribute for libxml2 to resolve.
 * - `href`, `src` (any prefix: `xlink:href`, XInclude) that is not a
 *   `#fragment` or a `data:` URI is removed, as is `xml:base`: the element
 *   renders as if the file named were missing. An SVG inside a `data:` URI is
 *   rebuilt the same way.
 * - CSS, in `<style>` and in every attribute value (`style`, `fill`, ...):
 *   escapes and comments are decoded first, then `@import` is removed and a
 *   `url(...)`/`src(...)` to anything else than `#fragment` or `data:`
 *   becomes `url(#missing)`; `image()`, `image-set()` and `cross-fade()` are
 *   made unknown functions.
 * - Anything it cannot read (a tag it cannot parse, an unterminated comment,
 *   a document or expansion past MAX_CHARS) is null: no thumbnail, rather
 *   than a guess.
 */

/** Text larger than this (after expansion too) is refused: the rebuild runs on the main thread (a few hundred ms at this size). */
export const MAX_CHARS = 8 * 1024 * 1024;
/** Entities inside entities, and SVG in data: URIs inside SVG, at most this deep. */
const MAX_DEPTH = 8;
/** Entity expansions in one document, at most (a billion laughs stops here). */
const MAX_EXPANSIONS = 10_000;
/** `<svg` is searched for in this many leading bytes of what does not start as text. */
const SNIFF_BYTES = 64 * 1024;

/** The same, sticky: read at `lastIndex` without copying the text. */
const NAME_AT = /[A-Za-z_][A-Za-z0-9._:-]*/y;
const SPACE_AT = /\s*/y;
const EQUALS_AT = /\s*=\s*(["'])/y;
const END_AT = /\s*>/y;
const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', apos: "'", quot: '"' };
const MISSING = 'url(#missing)';

class Unreadable extends Error {}

/**
 * What a decoder may be handed for these bytes: SVG (plain or gzip-compressed,
 * as libvips takes it) rebuilt by `sanitiseSvg`, anything else unchanged.
 * Null when the bytes look like SVG but cannot be read safely.
 */
export function decoderInput(bytes: Buffer): Buffer | null {
  let plain = bytes;
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      plain = gunzipSync(bytes, { maxOutputLength: MAX_CHARS });
    } catch {
      return null;
    }
  }
  if (!looksLikeSvg(plain)) return bytes;
  const text = sanitiseSvg(plain.toString('utf8'));
  return text === null ? null : Buffer.from(text, 'utf8');
}

/**
 * Whether a decoder could take these bytes for SVG. libvips does for text that
 * has `<svg` anywhere, however far on (a long comment first is enough), so:
 * anything that starts as text (after a UTF-8 byte-order mark), and anything
 * with `<svg` near the start, unless it starts with a raster format's magic
 * (PNG, JPEG, GIF, WebP, TIFF, HEIF/AVIF), which no decoder reads as SVG.
 */
export function looksLikeSvg(bytes: Buffer): boolean {
  const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  const head = bytes.subarray(start, start + 24);
  if (RASTER_MAGIC.some((magic) => magic(bytes))) return false;
  if (head.length > 0 && head.every((b) => b === 0x09 || b === 0x0a || b === 0x0d || (b >= 0x20 && b <= 0x7e))) return true;
  return bytes.subarray(0, SNIFF_BYTES).toString('latin1').toLowerCase().includes('<svg');
}

const RASTER_MAGIC: ((b: Buffer) => boolean)[] = [
  (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
  (b) => b.subarray(0, 4).toString('latin1') === 'GIF8',
  (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP',
  (b) => ['II*\0', 'MM\0*'].includes(b.subarray(0, 4).toString('latin1')),
  (b) => b.subarray(4, 8).toString('latin1') === 'ftyp',
];

/** The SVG text rebuilt without external references (see the file comment), or null. */
export function sanitiseSvg(text: string, depth = 0): string | null {
  if (text.length > MAX_CHARS || depth > MAX_DEPTH) return null;
  try {
    const w = new Writer();
    const entities = new Map<string, string | null>();
    let src = text.startsWith('\uFEFF') ? text.slice(1) : text;
    src = src.replace(/\r\n?/g, '\n');
    readContent(src, { entities, depth, out: w, style: null, expansions: 0 }, 0);
    return w.text();
  } catch (err) {
    if (err instanceof Unreadable) return null;
    throw err;
  }
}

/** CSS text without `@import` and with every `url()`/`src()` to anything but `#...` or `data:` replaced. */
export function sanitiseCss(css: string, depth = 0): string {
  if (!/[\\/@(]/.test(css)) return css; // nothing to decode, no comment, rule or function
  const plain = decodeCssEscapes(css).replace(/\/\*[\s\S]*?(\*\/|$)/g, ' ');
  const noImport = plain.replace(/@import\b[^;]*(;|$)/gi, '');
  const inert = noImport.replace(/(-webkit-)?(image-set|image|cross-fade)\s*\(/gi, 'x-removed(');
  let out = '';
  let at = 0;
  const fn = /\b(url|src)\s*\(/gi;
  for (let m = fn.exec(inert); m !== null; m = fn.exec(inert)) {
    out += inert.slice(at, m.index);
    const { value, end } = cssArgument(inert, m.index + m[0].length);
    const kept = value === null ? null : keepReference(value, depth);
    out += kept === null ? MISSING : `url("${kept.replace(/"/g, '%22')}")`;
    at = end;
    fn.lastIndex = end;
  }
  return out + inert.slice(at);
}

/**
 * A reference that may stay: a `#fragment`, or a `data:` URI (an SVG inside
 * one rebuilt by `sanitiseSvg`); null for anything else.
 */
export function keepReference(raw: string, depth = 0): string | null {
  const value = raw.trim();
  if (value.startsWith('#')) return value;
  if (!/^data:/i.test(value)) return null;
  const comma = value.indexOf(',');
  if (comma < 0) return null;
  const meta = value.slice(5, comma).toLowerCase();
  const base64 = /;base64$/.test(meta);
  let payload: Buffer;
  try {
    payload = base64 ? Buffer.from(value.slice(comma + 1), 'base64') : Buffer.from(decodeURIComponent(value.slice(comma + 1)), 'utf8');
  } catch {
    return null;
  }
  if (!meta.includes('svg') && !meta.includes('xml') && !looksLikeSvg(payload)) return value;
  const inner = sanitiseSvg(payload.toString('utf8'), depth + 1);
  return inner === null ? null : `data:image/svg+xml;base64,${Buffer.from(inner, 'utf8').toString('base64')}`;
}

// ---- XML -------------------------------------------------------------------------

interface Scope {
  entities: Map<string, string | null>;
  depth: number;
  out: Writer;
  /**
   * The `<style>` element being read: its text is CSS, sanitised as a whole at
   * its end tag. One scope for the whole document, entities' text included, so
   * a `<style>` opened by an entity's text still has the text after it read as CSS.
   */
  style: { text: string } | null;
  expansions: number;
}

/** The output, one growing string (V8 joins them cheaply, and millions of small parts in an array cost their collection). */
class Writer {
  private out = '';
  push(s: string): void {
    if (this.out.length + s.length > MAX_CHARS) throw new Unreadable('too large');
    this.out += s;
  }
  text(): string {
    return this.out;
  }
}

/** Content, as the document's top level (`expanding` 0) or an entity's text expanded inside it. */
function readContent(src: string, scope: Scope, expanding: number): void {
  let i = 0;
  // Where the next `<` and `&` are, found again only once passed: one scan of the text, not one per reference.
  let lt = -1;
  let amp = -1;
  while (i < src.length) {
    if (lt < i) lt = indexOrEnd(src, '<', i);
    if (amp < i) amp = indexOrEnd(src, '&', i);
    const next = Math.min(lt, amp);
    if (next > i) charData(src.slice(i, next), scope);
    i = next;
    if (i >= src.length) break;
    if (src[i] === '&') {
      i = reference(src, i, scope, expanding);
    } else if (src.startsWith('<!--', i)) {
      i = after(src, '-->', i + 4);
    } else if (src.startsWith('<![CDATA[', i)) {
      const end = src.indexOf(']]>', i + 9);
      if (end < 0) throw new Unreadable('CDATA');
      charData(src.slice(i + 9, end), scope);
      i = end + 3;
    } else if (/^<!doctype/i.test(src.slice(i, i + 9))) {
      if (expanding > 0) throw new Unreadable('DOCTYPE inside an entity');
      i = doctype(src, i + 9, scope.entities);
    } else if (src.startsWith('<?', i)) {
      i = after(src, '?>', i + 2);
    } else if (src.startsWith('</', i)) {
      const name = matchAt(NAME_AT, src, i + 2)?.[0];
      if (!name) throw new Unreadable('end tag');
      const close = matchAt(END_AT, src, i + 2 + name.length);
      if (!close) throw new Unreadable('end tag');
      if (scope.style && localName(name) === 'style') {
        scope.out.push(escapeText(sanitiseCss(scope.style.text, scope.depth)));
        scope.style = null;
      }
      scope.out.push(`</${name}>`);
      i += 2 + name.length + close[0].length;
    } else {
      i = startTag(src, i + 1, scope);
    }
  }
}

function indexOrEnd(src: string, char: string, from: number): number {
  const at = src.indexOf(char, from);
  return at < 0 ? src.length : at;
}

function charData(text: string, scope: Scope): void {
  if (scope.style) scope.style.text += text;
  else scope.out.push(escapeText(text));
}

/** `&...;` in content: a character, a predefined entity, or a declared one expanded (its text read as content). */
function reference(src: string, at: number, scope: Scope, expanding: number): number {
  const end = src.indexOf(';', at);
  if (end < 0 || end - at > 64) throw new Unreadable('reference');
  const body = src.slice(at + 1, end);
  const char = characterOf(body);
  if (char !== null) {
    charData(char, scope);
    return end + 1;
  }
  if (!/^[A-Za-z_][A-Za-z0-9._-]*$/.test(body)) throw new Unreadable('reference');
  const replacement = scope.entities.get(body);
  if (replacement) {
    if (expanding >= MAX_DEPTH || ++scope.expansions > MAX_EXPANSIONS) throw new Unreadable('too many entities');
    readContent(replacement, scope, expanding + 1);
  }
  return end + 1;
}

/** A character reference or predefined entity (`#60`, `#x3c`, `lt`); null for a name. */
function characterOf(body: string): string | null {
  if (body in PREDEFINED) return PREDEFINED[body]!;
  const m = /^#(?:x([0-9A-Fa-f]{1,6})|([0-9]{1,7}))$/.exec(body);
  if (!m) return body.startsWith('#') ? invalid() : null;
  const code = m[1] !== undefined ? parseInt(m[1], 16) : Number(m[2]);
  if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return invalid();
  return String.fromCodePoint(code);
}

function invalid(): never {
  throw new Unreadable('character reference');
}

function startTag(src: string, at: number, scope: Scope): number {
  const name = matchAt(NAME_AT, src, at)?.[0];
  if (!name) throw new Unreadable('tag');
  let i = at + name.length;
  const attrs: string[] = [];
  for (;;) {
    const ws = matchAt(SPACE_AT, src, i)![0];
    i += ws.length;
    if (src.startsWith('/>', i) || src[i] === '>') break;
    if (ws === '') throw new Unreadable('attribute');
    const attr = matchAt(NAME_AT, src, i)?.[0];
    if (!attr) throw new Unreadable('attribute');
    i += attr.length;
    const eq = matchAt(EQUALS_AT, src, i);
    if (!eq) throw new Unreadable('attribute');
    i += eq[0].length;
    const close = src.indexOf(eq[1]!, i);
    if (close < 0) throw new Unreadable('attribute');
    const raw = src.slice(i, close);
    i = close + 1;
    const value = attributeValue(raw, scope, 0);
    const kept = keepAttribute(attr, value, scope.depth);
    if (kept !== null) attrs.push(` ${attr}="${escapeAttribute(kept)}"`);
  }
  const selfClosing = src[i] === '/';
  i += selfClosing ? 2 : 1;
  scope.out.push(`<${name}${attrs.join('')}${selfClosing ? '/>' : '>'}`);
  if (!selfClosing && localName(name) === 'style') {
    if (scope.style) throw new Unreadable('style in style');
    scope.style = { text: '' };
  }
  return i;
}

function matchAt(re: RegExp, src: string, at: number): RegExpExecArray | null {
  re.lastIndex = at;
  return re.exec(src);
}

/** An attribute's value as the parser would see it: references replaced, whitespace characters as spaces. */
function attributeValue(raw: string, scope: Scope, expanding: number): string {
  if (!/[<&\t\n\r]/.test(raw)) return raw;
  if (raw.includes('<')) throw new Unreadable('< in attribute');
  if (expanding > MAX_DEPTH || scope.expansions > MAX_EXPANSIONS) throw new Unreadable('too many entities');
  let out = '';
  let i = 0;
  while (i < raw.length) {
    const amp = raw.indexOf('&', i);
    if (amp < 0) {
      out += raw.slice(i);
      break;
    }
    out += raw.slice(i, amp);
    const end = raw.indexOf(';', amp);
    if (end < 0 || end - amp > 64) throw new Unreadable('reference');
    const body = raw.slice(amp + 1, end);
    const char = characterOf(body);
    if (char !== null) out += char;
    else if (/^[A-Za-z_][A-Za-z0-9._-]*$/.test(body)) {
      scope.expansions++;
      out += attributeValue(scope.entities.get(body) ?? '', scope, expanding + 1);
    }
    else throw new Unreadable('reference');
    if (out.length > MAX_CHARS) throw new Unreadable('too large');
    i = end + 1;
  }
  return out.replace(/[\t\n\r]/g, ' ');
}

/** The value an attribute keeps, or null to drop it. */
function keepAttribute(name: string, value: string, depth: number): string | null {
  const local = localName(name).toLowerCase();
  if (name.toLowerCase() === 'xml:base') return null;
  if (local === 'href' || local === 'src') return keepReference(value, depth);
  return sanitiseCss(value, depth);
}

/**
 * The DOCTYPE: read for its internal entities only, then dropped. An internal
 * general entity keeps its text (character references decoded, as XML does
 * when it is declared); an external one (SYSTEM, PUBLIC) or a parameter
 * entity expands to nothing; other declarations are skipped.
 */
function doctype(src: string, at: number, entities: Map<string, string | null>): number {
  let i = at;
  for (;;) {
    if (i >= src.length) throw new Unreadable('DOCTYPE');
    const c = src[i]!;
    if (c === '>') return i + 1;
    if (c === '"' || c === "'") {
      i = after(src, c, i + 1);
    } else if (c === '[') {
      i = internalSubset(src, i + 1, entities);
    } else {
      i++;
    }
  }
}

function internalSubset(src: string, at: number, entities: Map<string, string | null>): number {
  let i = at;
  for (;;) {
    if (i >= src.length) throw new Unreadable('DOCTYPE');
    if (src[i] === ']') return i + 1;
    if (src.startsWith('<!--', i)) {
      i = after(src, '-->', i + 4);
    } else if (src.startsWith('<?', i)) {
      i = after(src, '?>', i + 2);
    } else if (src.startsWith('<!ENTITY', i)) {
      i = entity(src, i + 8, entities);
    } else if (src.startsWith('<!', i)) {
      i = declarationEnd(src, i + 2);
    } else {
      i++; // whitespace, a parameter-entity reference: nothing to keep
    }
  }
}

function entity(src: string, at: number, entities: Map<string, string | null>): number {
  const m = /^\s+(%\s+)?([A-Za-z_][A-Za-z0-9._-]*)\s+/.exec(src.slice(at, at + 512));
  if (!m) throw new Unreadable('ENTITY');
  const end = declarationEnd(src, at);
  const name = m[2]!;
  const rest = src.slice(at + m[0].length, end - 1);
  const literal = /^(["'])([\s\S]*?)\1\s*$/.exec(rest);
  if (m[1] || entities.has(name)) return end; // parameter entities and later declarations are not used
  if (!literal || literal[2]!.includes('%')) {
    entities.set(name, null); // external or unreadable: expands to nothing
    return end;
  }
  entities.set(name, literal[2]!.replace(/&(#[^;]{1,10});/g, (_, body: string) => characterOf(body) ?? ''));
  return end;
}

/** The index after the `>` that ends a markup declaration, quoted strings skipped. */
function declarationEnd(src: string, at: number): number {
  let i = at;
  for (;;) {
    if (i >= src.length) throw new Unreadable('declaration');
    const c = src[i]!;
    if (c === '>') return i + 1;
    i = c === '"' || c === "'" ? after(src, c, i + 1) : i + 1;
  }
}

function after(src: string, token: string, from: number): number {
  const end = src.indexOf(token, from);
  if (end < 0) throw new Unreadable(`unterminated ${token}`);
  return end + token.length;
}

function localName(name: string): string {
  return name.slice(name.lastIndexOf(':') + 1);
}

function escapeText(text: string): string {
  if (!/[&<>]/.test(text)) return text;
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeAttribute(text: string): string {
  return text.includes('"') ? escapeText(text).replace(/"/g, '&quot;') : escapeText(text);
}

// ---- CSS -------------------------------------------------------------------------

/**
 * CSS escapes decoded once, so `u\72l(` is seen as `url(`. An escape that
 * decodes to a backslash is dropped: no backslash is left to be decoded again
 * by the renderer.
 */
function decodeCssEscapes(css: string): string {
  return css.replace(/\\(?:([0-9A-Fa-f]{1,6})[ \t\n\f]?|(\n)|([\s\S])|$)/g, (_, hex: string | undefined, newline: string | undefined, char: string | undefined) => {
    if (hex !== undefined) {
      const code = parseInt(hex, 16);
      const decoded = code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff) ? '\uFFFD' : String.fromCodePoint(code);
      return decoded === '\\' ? '' : decoded;
    }
    if (newline !== undefined) return '';
    return char === undefined || char === '\\' ? '' : char;
  });
}

/** The argument of `url(` from `at`: quoted or bare, up to its `)`. */
function cssArgument(css: string, at: number): { value: string | null; end: number } {
  let i = at;
  while (/\s/.test(css[i] ?? '')) i++;
  const quote = css[i];
  if (quote === '"' || quote === "'") {
    const close = css.indexOf(quote, i + 1);
    if (close < 0) return { value: null, end: css.length };
    const paren = css.indexOf(')', close);
    return { value: css.slice(i + 1, close), end: paren < 0 ? css.length : paren + 1 };
  }
  const paren = css.indexOf(')', i);
  if (paren < 0) return { value: null, end: css.length };
  return { value: css.slice(i, paren), end: paren + 1 };
}
