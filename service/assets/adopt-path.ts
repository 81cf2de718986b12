import { constants, lstatSync, realpathSync, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { isAbsolute, posix, sep } from 'node:path';
import { ApiError } from '../core/errors';

/**
 * Which file an adopt request may take (interface.md §Assets rule 6,
 * decisions §11). The path must be absolute and, once `.` and `..` are
 * resolved as text, lie strictly inside the caller's stage or data folder.
 * Every component below that folder is checked with lstat: a symlink anywhere
 * is 422 `outside_roots`. The file is then opened with O_NOFOLLOW and its
 * dev/ino compared with what lstat saw, so a component swapped for a symlink
 * between the check and the open is caught; the caller compares again after
 * linking (see adopt.ts).
 *
 * The folders themselves belong to the service (DIR/studios/ID/...) and may
 * sit behind a symlink the user made (a stage folder moved to another disk):
 * a path is accepted under either the folder as configured or its real path.
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
  const path = posix.normalize(raw).replace(/\/+$/, '') || '/';
  for (const root of roots) {
    for (const dir of rootForms(root.dir)) {
      if (!path.startsWith(dir + '/')) continue;
      const stat = walk(dir, path.slice(dir.length + 1).split('/'));
      return { path, root: root.kind, stat };
    }
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

function walk(root: string, parts: string[]): Stats {
  let current = root;
  let stat: Stats | undefined;
  for (let i = 0; i < parts.length; i++) {
    current = `${current}/${parts[i]}`;
    try {
      stat = lstatSync(current);
    } catch (err) {
      throw fileError(err);
    }
    if (stat.isSymbolicLink()) throw ApiError.outsideRoots('The path goes through a symlink; adopt takes real paths only.');
    const last = i === parts.length - 1;
    if (!last && !stat.isDirectory()) throw ApiError.notFound('The file');
    if (last && !stat.isFile()) throw ApiError.notAFile('The path does not name a regular file.');
  }
  return stat!;
}

function rootForms(dir: string): string[] {
  const forms = [posix.normalize(dir).replace(/\/+$/, '')];
  try {
    const real = realpathSync(dir);
    if (real !== forms[0]) forms.push(real);
  } catch {
    // A folder that does not exist yet: nothing inside it can be adopted anyway.
  }
  return forms;
}

function fileError(err: unknown): ApiError {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return ApiError.notFound('The file');
  if (code === 'ELOOP') return ApiError.outsideRoots('The path goes through a symlink; adopt takes real paths only.');
  if (code === 'EACCES' || code === 'EPERM') return ApiError.notFound('The file');
  throw err;
}
