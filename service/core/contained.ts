import { lstat, readlink } from 'node:fs/promises';
import { dirname, isAbsolute, join, sep } from 'node:path';

/** More links than this in one walk is a loop, as the kernel counts (ELOOP). */
const MAX_LINKS = 40;

/**
 * Where `relative`, taken from the folder `from`, really leads, walked the way
 * the kernel walks it: component by component, every symbolic link read and
 * its own text walked in turn (so `a -> .` then `a/a/../../x` climbs two real
 * levels, not zero). Null as soon as any step leaves `root`: a `..` above it,
 * a link whose text is absolute, a link that leads out, a loop. What does not
 * exist is walked as written.
 *
 * `root` must be a real path (fs.realpath) and `from` a real folder inside it.
 * A walk that never leaves `root` is the same walk in a faithful copy of
 * `root`, which is why the install copy keeps only such links: a link that
 * leaves the folder and comes back by name (`../<name>/x`) or by an absolute
 * path would lead elsewhere from the copy. docs/security.md, Studios (Paths).
 */
export async function resolveInside(root: string, from: string, relative: string): Promise<string | null> {
  if (isAbsolute(relative) || !within(root, from)) return null;
  const todo = partsOf(relative);
  let current = from;
  let links = 0;
  while (todo.length > 0) {
    const part = todo.shift()!;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (current === root) return null;
      current = dirname(current);
      continue;
    }
    const next = join(current, part);
    const stat = await lstat(next).catch(() => null);
    if (stat?.isSymbolicLink()) {
      if (++links > MAX_LINKS) return null;
      const text = await readlink(next);
      if (isAbsolute(text)) return null;
      todo.unshift(...partsOf(text));
      continue;
    }
    current = next;
  }
  return current;
}

/** Whether `path` is `root` or below it, as strings (both already real). */
export function within(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}

function partsOf(path: string): string[] {
  return path.split(sep === '\\' ? /[\\/]/ : '/');
}
