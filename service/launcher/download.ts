import { createHash, type Hash } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, realpath, rename, unlink, type FileHandle } from 'node:fs/promises';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describeUrl, DownloadUrlError, isStrictlyInside, parseContentRange, parseDownloadUrl, resolveDownloadTarget } from './download-url';

export { DownloadUrlError, parseDownloadUrl, resolveDownloadTarget } from './download-url';
export type { BlockedReason, DownloadMember, DownloadSource } from './download-url';

/**
 * The download step of a studio install (manifest member
 * `download: [{url, sha256, to}]`, docs/studios.md "Downloads"): one file into the app folder.
 *
 * Bytes go to `<target>.part`, opened without following a symlink, after
 * every component from the app folder down has been lstat'ed (no symlink,
 * resolves inside it); the target appears only by rename once the whole
 * file's sha256 matches, so a target on disk is always a verified one.
 * A partial outlives a failure (stall, broken connection, crash) so the next
 * attempt resumes with `Range`; a sha256 mismatch deletes it; a cancel leaves
 * it to the caller (removePartial). A failure never keeps an empty partial.
 *
 * Races: the checks are made before the writes; a component swapped for a
 * symlink in between is not caught (Node has no openat). The app folder
 * belongs to the studio being installed, which is not running meanwhile.
 */

export interface DownloadSpec {
  url: string;
  /** 64 lowercase hex digits. */
  sha256: string;
  /** Relative path inside appDir. */
  to: string;
}

export interface DownloadContext {
  /** Absolute: the studio's app folder, the only place written to. */
  appDir: string;
  /** Absolute: the folder the studio was installed from (relative file: URLs resolve here). */
  sourceDir: string;
  /** Aborted on cancel or service stop. */
  signal: AbortSignal;
  /** Bytes so far (resumed ones included) and the total, 0 when unknown; at most ~10 calls a second. */
  progress(bytes: number, total: number): void;
  log(lines: string[]): void;
  /** No byte for this long fails the download (default 30 s). */
  stallMs?: number;
}

export interface Downloaded {
  path: string;
  size: number;
  mtimeMs: number;
  resumed: boolean;
}

export const MAX_DOWNLOAD_BYTES = 64 * 2 ** 30;
const MAX_REDIRECTS = 5;
const CHUNK = 1 << 20;
const PROGRESS_EVERY_MS = 100;
const SHA256 = /^[0-9a-f]{64}$/;

/** A failure whose message is already complete (names the download and what to do). */
class DownloadError extends Error {
  override readonly name = 'DownloadError';
}

export function partialPath(target: string): string {
  return `${target}.part`;
}

export async function removePartial(target: string): Promise<void> {
  await unlinkIfThere(partialPath(target));
}

/** Streams the file through sha256; false when it is missing, a symlink or not a regular file. */
export async function verifyFile(path: string, sha256: string): Promise<boolean> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if (['ENOENT', 'ENOTDIR', 'ELOOP'].includes(errno(err))) return false;
    throw err;
  }
  try {
    if (!(await handle.stat()).isFile()) return false;
    const hash = createHash('sha256');
    await readInto(handle, hash);
    return hash.digest('hex') === sha256.toLowerCase();
  } finally {
    await handle.close();
  }
}

export async function fetchDownload(spec: DownloadSpec, ctx: DownloadContext): Promise<Downloaded> {
  const to = spec.to;
  const expected = spec.sha256.toLowerCase();
  if (!SHA256.test(expected)) throw new DownloadError(`download sha256 for ${to} must be 64 hex digits`);
  const source = parseDownloadUrl(spec.url, ctx.sourceDir);
  const target = resolveDownloadTarget(ctx.appDir, to);
  if (ctx.signal.aborted) throw abortError();
  await prepareFolders(ctx.appDir, target, to);
  if (source.kind === 'file') await checkLocalSource(source.path, ctx.sourceDir, spec.url);
  const part = partialPath(target);
  const partial = new Partial(await openPartial(part, to), ctx);
  const stallMs = ctx.stallMs ?? 30_000;
  const guard = new Guard(ctx.signal, stallMs, () => new Error(`stalled: no data for ${stallMs / 1000} s`));
  let failed = true;
  let drop = false;
  let resumed = false;
  try {
    if (source.kind === 'http') {
      ctx.log([`downloading ${describeUrl(source.url)} to ${to}`]);
      resumed = await downloadHttp(source.url, partial, guard, ctx, to, expected);
    } else {
      ctx.log([`copying ${source.path} to ${to}`]);
      await copyLocal(source.path, partial, guard, to);
    }
    const got = partial.digest();
    if (got !== expected) {
      drop = true;
      throw new DownloadError(`sha256 mismatch for ${to}: expected ${expected}, got ${got}`);
    }
    await partial.handle.sync();
    failed = false;
  } catch (err) {
    throw explain(guard.reason ?? err, to, partial.bytes);
  } finally {
    guard.dispose();
    await partial.handle.close();
    if (failed && (drop || partial.bytes === 0)) await unlinkIfThere(part);
  }
  await rename(part, target);
  await syncFolder(dirname(target));
  const stat = await lstat(target);
  ctx.progress(stat.size, partial.total || stat.size);
  ctx.log([`${to}: ${stat.size} bytes, sha256 ok${resumed ? ' (resumed)' : ''}`]);
  return { path: target, size: stat.size, mtimeMs: stat.mtimeMs, resumed };
}

/** Resumes from the partial when the server allows it; true when bytes of an earlier attempt were kept. */
async function downloadHttp(url: URL, partial: Partial, guard: Guard, ctx: DownloadContext, to: string, expected: string): Promise<boolean> {
  await partial.readExisting(guard);
  if (partial.bytes > 0) ctx.log([`found ${partial.bytes} bytes from an earlier attempt; asking for the rest`]);
  for (let attempt = 0; attempt < 2; attempt++) {
    const offset = partial.bytes;
    let resumed = false;
    const res = await openFollowing(url, offset, guard, ctx, to);
    const status = res.statusCode ?? 0;
    if (status === 416 && offset > 0) {
      res.destroy();
      ctx.log([`the server has nothing past ${offset} bytes (HTTP 416): checking the partial`]);
      if (partial.digest() === expected) {
        partial.total = offset;
        return true;
      }
      ctx.log(['the partial does not match: restarting from 0']);
      await partial.restart();
      continue;
    }
    if (status < 200 || status > 299) {
      res.destroy();
      throw new DownloadError(`download of ${to} failed: HTTP ${status} ${res.statusMessage ?? ''}`.trimEnd());
    }
    if (status === 206) {
      const range = parseContentRange(res.headers['content-range']);
      if (range === null || range.start !== offset) {
        res.destroy();
        ctx.log([`the server answered a range other than the one asked for (${res.headers['content-range'] ?? 'none'}): restarting from 0`]);
        await partial.restart();
        continue;
      }
      partial.total = range.total;
      if (offset > 0) ctx.log([`resuming at ${offset} bytes`]);
      resumed = offset > 0;
    } else {
      if (offset > 0) {
        ctx.log([`the server sent the whole file (HTTP ${status}), not the rest: restarting from 0`]);
        await partial.restart();
      }
      partial.total = contentLength(res) ?? 0;
    }
    if (partial.total > MAX_DOWNLOAD_BYTES) {
      res.destroy();
      throw new DownloadError(`download of ${to} refused: ${partial.total} bytes is more than the 64 GiB limit`);
    }
    await partial.pump(res, guard, to);
    guard.quiet();
    if (partial.bytes < partial.total) {
      throw new DownloadError(`download of ${to} failed: the connection closed after ${partial.bytes} of ${partial.total} bytes; they are kept and the next attempt resumes`);
    }
    return resumed;
  }
  throw new DownloadError(`download of ${to} failed: the server's byte ranges did not line up`);
}

/** GET with `Range: bytes=<offset>-` when offset > 0, following up to five redirects to http(s) only. */
async function openFollowing(start: URL, offset: number, guard: Guard, ctx: DownloadContext, to: string): Promise<IncomingMessage> {
  let url = start;
  for (let hop = 0; ; hop++) {
    const res = await request(url, offset, guard);
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if (![301, 302, 303, 307, 308].includes(status) || location === undefined) return res;
    res.destroy();
    if (hop === MAX_REDIRECTS) throw new DownloadError(`download of ${to} failed: more than ${MAX_REDIRECTS} redirects`);
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw new DownloadError(`download of ${to} failed: HTTP ${status} redirects to an invalid URL`);
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:') {
      throw new DownloadUrlError('url', 'scheme', `download of ${to} redirects to a ${next.protocol} URL; only http: and https: are allowed`);
    }
    ctx.log([`redirected (HTTP ${status}) to ${describeUrl(next)}`]);
    url = next;
  }
}

function request(url: URL, offset: number, guard: Guard): Promise<IncomingMessage> {
  return new Promise((resolveResponse, reject) => {
    const headers: Record<string, string> = { 'User-Agent': 'Backlot', 'Accept-Encoding': 'identity' };
    if (offset > 0) headers.Range = `bytes=${offset}-`;
    // agent: false: no pooled socket outlives the download (nothing stays open after a cancel).
    const req = (url.protocol === 'https:' ? https : http).request(url, { headers, agent: false }, (res) => {
      res.on('error', () => {}); // reported by whoever reads it
      guard.watch(res);
      resolveResponse(res);
    });
    req.on('error', (err) => reject(guard.reason ?? err));
    guard.watch(req);
    guard.kick();
    req.end();
  });
}

async function copyLocal(path: string, partial: Partial, guard: Guard, to: string): Promise<void> {
  const source = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stat = await source.stat();
    if (!stat.isFile()) throw new DownloadError(`download of ${to} failed: ${path} is not a regular file`);
    if (stat.size > MAX_DOWNLOAD_BYTES) throw new DownloadError(`download of ${to} refused: ${stat.size} bytes is more than the 64 GiB limit`);
    partial.total = stat.size;
    await partial.pump(readChunks(source, guard), guard, to);
    guard.quiet();
  } finally {
    await source.close();
  }
}

async function* readChunks(handle: FileHandle, guard: Guard): AsyncGenerator<Buffer> {
  const buffer = Buffer.allocUnsafe(CHUNK);
  for (let position = 0; ; ) {
    guard.check();
    const { bytesRead } = await handle.read(buffer, 0, CHUNK, position);
    if (bytesRead === 0) return;
    position += bytesRead;
    yield buffer.subarray(0, bytesRead);
  }
}

/** The `.part` file: its bytes, their running hash, and progress reporting. */
class Partial {
  bytes = 0;
  total = 0;
  private hash: Hash = createHash('sha256');
  private lastReport = 0;

  constructor(readonly handle: FileHandle, private readonly ctx: DownloadContext) {}

  async readExisting(guard: Guard): Promise<void> {
    this.bytes = await readInto(this.handle, this.hash, guard);
  }

  async restart(): Promise<void> {
    await this.handle.truncate(0);
    this.hash = createHash('sha256');
    this.bytes = 0;
  }

  digest(): string {
    return this.hash.copy().digest('hex');
  }

  async pump(source: AsyncIterable<Buffer>, guard: Guard, to: string): Promise<void> {
    // Whatever was there goes: a 200 after a restart, or a local copy over an old partial.
    await this.handle.truncate(this.bytes);
    guard.kick();
    for await (const chunk of source) {
      guard.kick();
      if (this.bytes + chunk.length > MAX_DOWNLOAD_BYTES) {
        throw new DownloadError(`download of ${to} refused: more than the 64 GiB limit`);
      }
      for (let done = 0; done < chunk.length; ) {
        const { bytesWritten } = await this.handle.write(chunk, done, chunk.length - done, this.bytes + done);
        done += bytesWritten;
      }
      this.hash.update(chunk);
      this.bytes += chunk.length;
      const now = performance.now();
      if (now - this.lastReport >= PROGRESS_EVERY_MS) {
        this.lastReport = now;
        this.ctx.progress(this.bytes, this.total);
      }
    }
  }
}

/**
 * Ends what is in flight on abort or stall. The reason it records is the
 * error reported, whatever error the ending causes downstream.
 */
class Guard {
  reason: Error | null = null;
  private readonly live: { destroy(err?: Error): unknown }[] = [];
  private timer: NodeJS.Timeout | null = null;
  private readonly onAbort = () => this.fail(abortError());

  constructor(private readonly signal: AbortSignal, private readonly stallMs: number, private readonly stalled: () => Error) {
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  watch(stream: { destroy(err?: Error): unknown }): void {
    this.live.push(stream);
    if (this.reason) stream.destroy(this.reason);
  }

  /** Data moved (or a request began): the stall clock starts again. */
  kick(): void {
    this.quiet();
    this.timer = setTimeout(() => this.fail(this.stalled()), this.stallMs);
  }

  quiet(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  check(): void {
    if (this.signal.aborted) this.fail(abortError());
    if (this.reason) throw this.reason;
  }

  fail(err: Error): void {
    if (this.reason) return;
    this.reason = err;
    this.quiet();
    for (const stream of this.live) stream.destroy(err);
  }

  dispose(): void {
    this.quiet();
    this.signal.removeEventListener('abort', this.onAbort);
    for (const stream of this.live) stream.destroy();
  }
}

/** Lstats each component from appDir down, creating missing folders; none may be a symlink. */
async function prepareFolders(appDir: string, target: string, to: string): Promise<void> {
  const throughLink = (path: string) =>
    new DownloadUrlError('to', 'symlink', `download to ${JSON.stringify(to)} goes through the symlink ${path}; downloads land in real folders only`);
  const root = resolve(appDir);
  const rootStat = await lstat(root);
  if (rootStat.isSymbolicLink()) throw throughLink(root);
  if (!rootStat.isDirectory()) throw new DownloadError(`download of ${to} failed: the app folder ${root} is not a folder`);
  let dir = root;
  for (const part of relative(root, dirname(target)).split(sep).filter(Boolean)) {
    dir = join(dir, part);
    try {
      await mkdir(dir);
    } catch (err) {
      if (errno(err) !== 'EEXIST') throw err;
    }
    const stat = await lstat(dir);
    if (stat.isSymbolicLink()) throw throughLink(dir);
    if (!stat.isDirectory()) throw new DownloadError(`download of ${to} failed: ${dir} is a file, not a folder`);
  }
  const existing = await lstatOrNull(target);
  if (existing?.isSymbolicLink()) throw throughLink(target);
  if (existing?.isDirectory()) throw new DownloadError(`download of ${to} failed: ${target} is a folder`);
  const [realRoot, realDir] = await Promise.all([realpath(root), realpath(dirname(target))]);
  if (realDir !== realRoot && !isStrictlyInside(realRoot, realDir)) {
    throw new DownloadUrlError('to', 'escapes', `download to ${JSON.stringify(to)} resolves outside the app folder`);
  }
}

/** A file: URL inside sourceDir must really be there (no symlink out of it). */
async function checkLocalSource(path: string, sourceDir: string, url: string): Promise<void> {
  const root = resolve(sourceDir);
  if (!isStrictlyInside(root, path)) return;
  let real: string;
  try {
    real = await realpath(path);
  } catch {
    return; // missing: the copy reports it
  }
  if (!isStrictlyInside(await realpath(root), real)) {
    throw new DownloadUrlError('url', 'symlink', `download url ${JSON.stringify(url)} goes through a symlink out of the folder the studio was installed from`);
  }
}

/** Opens the partial for reading and writing without following a symlink; a hard-linked one is replaced, not written through. */
async function openPartial(part: string, to: string): Promise<FileHandle> {
  const flags = constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;
  const openIt = async (extra: number) => {
    try {
      return await open(part, flags | extra, 0o644);
    } catch (err) {
      if (errno(err) === 'ELOOP') throw new DownloadUrlError('to', 'symlink', `download to ${JSON.stringify(to)}: ${part} is a symlink`);
      throw err;
    }
  };
  const handle = await openIt(0);
  const stat = await handle.stat();
  if (stat.isFile() && stat.nlink === 1) return handle;
  await handle.close();
  if (!stat.isFile()) throw new DownloadError(`download of ${to} failed: ${part} is not a regular file`);
  await unlink(part);
  return openIt(constants.O_EXCL);
}

/** Hashes the handle's bytes from the start; returns how many there were. */
async function readInto(handle: FileHandle, hash: Hash, guard?: Guard): Promise<number> {
  const buffer = Buffer.allocUnsafe(CHUNK);
  let position = 0;
  for (;;) {
    guard?.check();
    const { bytesRead } = await handle.read(buffer, 0, CHUNK, position);
    if (bytesRead === 0) return position;
    hash.update(buffer.subarray(0, bytesRead));
    position += bytesRead;
  }
}

/** Makes the rename durable where the platform can fsync a folder. */
async function syncFolder(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
    await handle.sync();
  } catch (err) {
    if (!['EINVAL', 'ENOTSUP', 'EISDIR', 'EPERM', 'EBADF'].includes(errno(err))) throw err;
  } finally {
    await handle?.close();
  }
}

function explain(err: unknown, to: string, kept: number): unknown {
  if (!(err instanceof Error)) return err;
  if (err.name === 'AbortError' || err instanceof DownloadUrlError || err instanceof DownloadError) return err;
  const code = errno(err);
  const broke = (code === 'ECONNRESET' && err.message === 'aborted') || code === 'ERR_STREAM_PREMATURE_CLOSE';
  const what = broke ? 'the connection broke' : code && !err.message.includes(code) ? `${code}: ${err.message}` : err.message;
  const keptNote = kept > 0 ? `; the ${kept} bytes received are kept and the next attempt resumes` : '';
  return new DownloadError(`download of ${to} failed: ${what}${keptNote}`, { cause: err });
}

function contentLength(res: IncomingMessage): number | null {
  const raw = res.headers['content-length'];
  return raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : null;
}

function abortError(): Error {
  const err = new Error('download cancelled');
  err.name = 'AbortError';
  return err;
}

async function lstatOrNull(path: string): Promise<Stats | null> {
  try {
    return await lstat(path);
  } catch (err) {
    if (errno(err) === 'ENOENT') return null;
    throw err;
  }
}

async function unlinkIfThere(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (err) {
    if (errno(err) !== 'ENOENT') throw err;
  }
}

function errno(err: unknown): string {
  return (err as NodeJS.ErrnoException | null)?.code ?? '';
}
