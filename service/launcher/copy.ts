import { copyFile, lstat, mkdir, readdir, readlink, realpath, rm, symlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { resolveInside } from '../core/contained';
import { blocked } from './manifest';

/**
 * Copies a studio's source folder (install, update). Asynchronous file by
 * file, so a large folder never holds the serving thread, and it stops at an
 * abort. Symbolic links are kept, with their text, only when they really
 * lead inside the source: relative, and followed link by link from where they
 * sit (core/contained.ts) without a step out of the folder (node_modules/.bin).
 * One that leads out, by its text or through other links (`a -> .`, then
 * `p -> a/a/../../etc/passwd`), fails the copy (and so the install or update
 * job) with a `blocked` error naming it, since the copy would otherwise reach
 * files outside the studio. Sockets and FIFOs are left out. The caller copies
 * into a temporary folder and renames it into place.
 */
export async function copyTree(source: string, dest: string, signal: AbortSignal): Promise<number> {
  const root = await realpath(resolve(source));
  let files = 0;
  const walk = async (from: string, to: string): Promise<void> => {
    await mkdir(to, { recursive: true, mode: 0o755 });
    for (const entry of await readdir(from, { withFileTypes: true })) {
      signal.throwIfAborted();
      const src = join(from, entry.name);
      const dst = join(to, entry.name);
      if (entry.isDirectory()) {
        await walk(src, dst);
      } else if (entry.isFile()) {
        await copyFile(src, dst);
        files++;
      } else if (entry.isSymbolicLink()) {
        const target = await readlink(src);
        if ((await resolveInside(root, from, target)) === null) {
          throw blocked(`The source holds a link that points outside it: ${src.slice(root.length + 1)} -> ${target}.`, 'source');
        }
        await symlink(target, dst);
      }
    }
  };
  await walk(root, dest);
  return files;
}

/** Removes a folder tree, quietly when it is already gone. Never follows links out (rm does not). */
export async function removeTree(path: string): Promise<void> {
  await rm(path, { recursive: true, force: true, maxRetries: 2 });
}

/** Whether a path exists (not following a final link). */
export async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}
