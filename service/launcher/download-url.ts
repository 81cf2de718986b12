import { isAbsolute, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where a manifest download (`download: [{url, sha256, to}]`, docs/studios.md "Downloads")
 * may come from and go to, decided from the strings alone, before anything
 * runs. A refusal is a DownloadUrlError, which the launcher answers with 422
 * `blocked`.
 *
 * - url: `http:`, `https:` or `file:` only. `file:///abs/path` (and the
 *   single-slash `file:/abs/path`) is an absolute path, as in any URL; the
 *   relative form `file:rel/path` (no `/` after the colon) is resolved
 *   against the folder the studio was installed from and must stay strictly
 *   inside it. The relative form is percent-decoded, and may carry no query,
 *   fragment, backslash or encoded `/`.
 * - to: a relative, `/`-separated file path inside the app folder; `..` may
 *   step back only over a component it already named, and the result must
 *   name something below the folder, not the folder itself.
 *
 * Symlinks are the caller's business (download.ts lstats every component).
 * Also here, as pure helpers of download.ts: Content-Range parsing for resume
 * and the form of a URL that may be logged.
 */

export type DownloadMember = 'url' | 'to';
export type BlockedReason = 'scheme' | 'invalid' | 'absolute' | 'empty' | 'escapes' | 'symlink';

export class DownloadUrlError extends Error {
  override readonly name = 'DownloadUrlError';

  constructor(
    /** The download member at fault. */
    readonly member: DownloadMember,
    readonly reason: BlockedReason,
    message: string,
  ) {
    super(message);
  }
}

export type DownloadSource = { kind: 'http'; url: URL } | { kind: 'file'; path: string };

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;

export function parseDownloadUrl(url: string, sourceDir: string): DownloadSource {
  const blocked = (reason: BlockedReason, why: string) =>
    new DownloadUrlError('url', reason, `download url ${JSON.stringify(url)} ${why}`);
  if (url.includes('\0')) throw blocked('invalid', 'contains a NUL character');
  const scheme = SCHEME.exec(url)?.[1]?.toLowerCase();
  if (scheme === undefined) throw blocked('scheme', 'has no scheme; use http:, https: or file:');
  if (scheme === 'http' || scheme === 'https') {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw blocked('invalid', 'is not a valid URL');
    }
    if (parsed.hostname === '') throw blocked('invalid', 'has no host');
    return { kind: 'http', url: parsed };
  }
  if (scheme !== 'file') throw blocked('scheme', `has the scheme "${scheme}:"; only http:, https: and file: are allowed`);
  const rest = url.slice(scheme.length + 1);
  if (rest.startsWith('/')) {
    try {
      return { kind: 'file', path: fileURLToPath(new URL(url)) };
    } catch (err) {
      throw blocked('invalid', `is not a local file URL (${(err as Error).message})`);
    }
  }
  return { kind: 'file', path: relativeFile(rest, sourceDir, blocked) };
}

function relativeFile(rest: string, sourceDir: string, blocked: (reason: BlockedReason, why: string) => DownloadUrlError): string {
  if (!isAbsolute(sourceDir)) throw new TypeError(`sourceDir must be absolute: ${sourceDir}`);
  if (rest === '') throw blocked('invalid', 'names no file');
  if (/[?#\\]/.test(rest)) throw blocked('invalid', 'may not have a query, fragment or backslash in its relative form');
  if (/%2f/i.test(rest)) throw blocked('invalid', 'may not contain an encoded "/"');
  let decoded: string;
  try {
    decoded = decodeURIComponent(rest);
  } catch {
    throw blocked('invalid', 'has a malformed percent escape');
  }
  if (decoded.includes('\0')) throw blocked('invalid', 'contains a NUL character');
  const root = resolve(sourceDir);
  const path = resolve(root, decoded);
  if (!isStrictlyInside(root, path)) throw blocked('escapes', 'leaves the folder the studio was installed from');
  return path;
}

/** The absolute target of `to` inside appDir, decided lexically (see the file comment). */
export function resolveDownloadTarget(appDir: string, to: string): string {
  const blocked = (reason: BlockedReason, why: string) =>
    new DownloadUrlError('to', reason, `download to ${JSON.stringify(to)} ${why}`);
  if (!isAbsolute(appDir)) throw new TypeError(`appDir must be absolute: ${appDir}`);
  if (typeof to !== 'string' || to === '') throw blocked('empty', 'is empty');
  if (to.includes('\0')) throw blocked('invalid', 'contains a NUL character');
  if (to.includes('\\')) throw blocked('invalid', 'contains a backslash; use "/"');
  if (isAbsolute(to)) throw blocked('absolute', 'is absolute; it must be a path inside the app folder');
  if (to.endsWith('/')) throw blocked('invalid', 'names a folder, not a file');
  const kept: string[] = [];
  for (const part of to.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (kept.pop() === undefined) throw blocked('escapes', 'steps out of the app folder');
      continue;
    }
    kept.push(part);
  }
  if (kept.length === 0) throw blocked('empty', 'names the app folder itself, not a file inside it');
  const root = resolve(appDir);
  const target = join(root, ...kept);
  if (!isStrictlyInside(root, target)) throw blocked('escapes', 'resolves outside the app folder');
  return target;
}

export function isStrictlyInside(root: string, path: string): boolean {
  const prefix = root.endsWith(sep) ? root : root + sep;
  return path.startsWith(prefix) && path.length > prefix.length;
}

/** `Content-Range: bytes START-END/TOTAL` of a 206; total 0 when the server sends `*`. */
export function parseContentRange(header: string | undefined): { start: number; total: number } | null {
  const match = /^\s*bytes\s+(\d+)-(\d+)\/(\d+|\*)\s*$/i.exec(header ?? '');
  if (!match) return null;
  const start = Number(match[1]);
  const end = Number(match[2]);
  const total = match[3] === '*' ? 0 : Number(match[3]);
  if (end < start || (total > 0 && end >= total) || !Number.isSafeInteger(end) || !Number.isSafeInteger(total)) return null;
  return { start, total };
}

/** A URL for logs: no credentials, no query (it may carry a signed token). */
export function describeUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}${url.search ? '?…' : ''}`;
}
