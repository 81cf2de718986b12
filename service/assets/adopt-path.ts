import { constants, lstatSync, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { isAbsolute, sep } from 'node:path';
import { ApiError } from '../core/errors';

/**
 * Which file an adopt request may take (docs/api.md
 * "Adopt `POST /assets:adopt`"). The path must be absolute and lie strictly inside the
 * caller's stage or data folder, and no component from that folder down may
 * be a symlink, the folder itself included: each is checked with lstat in the
 * order written, `..` steps back over a component already checked (and out of
 * the folder is 422 `outside_roots`), so `dir-link/../x` is refused like any
 * other path through a symlink. The file is then opened with O_NOFOLLOW and
 * its dev/ino compared with what lstat saw, so a component swapped for a
 * symlink between the check and the open is caught; the caller compares again
 * after linking (see adopt.ts). Where the data dir itself lives (above the
 * studio's folders) is the user's choice and is not checked.
 */

export type RootKind = 'stage' | 'data';

export interface AdoptRoot {
  kind: RootKind;
  dir: string;
}

export interface CheckedPath {
  /** Normalised absolute path. */
  path: string;
  root: RootKind;
  /** lstat of the file at check time. */
  stat: Stats;
}

export function checkAdoptPath(raw: string, roots: readonly AdoptRoot[]): CheckedPath {
  if (raw.includes('\0')) throw ApiError.badRequest('The path contains a NUL character.');
  if (!isAbsolute(raw) || sep !== '/') throw ApiError.badRequest('The path must be absolute.');
  const segments = segmentsOf(raw);
  for (const root of roots) {
    const rootSegments = segmentsOf(root.dir);
    if (segments.length <= rootSegments.length || rootSegments.some((s, i) => segments[i] !== s)) continue;
    const below = walk(root.dir, segments.slice(rootSegments.length));
    if (raw.endsWith('/')) throw ApiError.notAFile('The path names a folder, not a regular file.');
    return { ...below, root: root.kind };
  }
  throw ApiError.outsideRoots('The path is not inside the studio\'s stage or data folder.');
}

/** Opens the checked file without following a symlink and makes sure it is the file lstat saw. */
export async function openChecked(checked: CheckedPath): Promise<{ handle: FileHandle; stat: Stats }> {
  let handle: FileHandle;
  try {
    handle = await open(checked.path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    throw fileError(err);
  }
  const stat = await handle.stat();
  if (!stat.isFile() || !sameFile(stat, checked.stat)) {
    await handle.close();
    throw ApiError.conflict('The file was replaced while it was being checked; nothing was adopted.');
  }
  return { handle, stat };
}

export function sameFile(a: Pick<Stats, 'dev' | 'ino'>, b: Pick<Stats, 'dev' | 'ino'>): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

function segmentsOf(path: string): string[] {
  return path.split('/').filter((part) => part !== '' && part !== '.');
}

/** lstat of the folder and each component below it, in order; `..` steps back over a checked one. */
function walk(root: string, parts: string[]): { path: string; stat: Stats } {
  const throughLink = () => ApiError.outsideRoots('The path goes through a symlink; adopt takes real paths only.');
  const rootStat = lstatOrThrow(root);
  if (rootStat.isSymbolicLink()) throw throughLink();
  const stack: { path: string; stat: Stats }[] = [];
  for (const part of parts) {
    const parent = stack[stack.length - 1];
    if (parent && !parent.stat.isDirectory()) throw ApiError.notFound('The file');
    if (part === '..') {
      if (stack.pop() === undefined) throw ApiError.outsideRoots('The path steps out of the studio\'s folder.');
      continue;
    }
    const path = `${parent?.path ?? root}/${part}`;
    const stat = lstatOrThrow(path);
    if (stat.isSymbolicLink()) throw throughLink();
    stack.push({ path, stat });
  }
  const last = stack[stack.length - 1];
  if (!last) throw ApiError.outsideRoots('The path names the studio\'s folder itself, not a file inside it.');
  if (!last.stat.isFile()) throw ApiError.notAFile('The path does not name a regular file.');
  return last;
}

function lstatOrThrow(path: string): Stats {
  try {
    return lstatSync(path);
  } catch (err) {
    throw fileError(err);
  }
}

function fileError(err: unknown): ApiError {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return ApiError.notFound('The file');
  if (code === 'ELOOP') return ApiError.outsideRoots('The path goes through a symlink; adopt takes real paths only.');
  if (code === 'EACCES' || code === 'EPERM') return ApiError.notFound('The file');
  throw err;
}
