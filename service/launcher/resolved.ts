import { realpath } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { resolveInside } from '../core/contained';
import { blocked, commandArgv, commandsOf, type Manifest } from './manifest';

/**
 * The containment checks of `checkContained` (manifest.ts) again, on the real
 * folder: every command word (or an option's value) and every download `to`
 * is walked through the folder's symbolic links (core/contained.ts) and must
 * never step out of it (422 `blocked`, the same answer and member as the
 * lexical check). The lexical check sees `a/a/../../x` as `x`; with `a -> .`
 * in the folder it is two levels above. Run on the folder the studio comes
 * from before anything runs: the install copy keeps only links whose walk
 * stays inside, so the copy resolves the same way.
 */
export async function checkResolvedInside(m: Manifest, folder: string): Promise<void> {
  const root = await realpath(folder);
  for (const { member, run } of commandsOf(m)) {
    for (const word of commandArgv(run, 1024)) {
      const value = /^--?[A-Za-z0-9][\w-]*=(.*)$/s.exec(word)?.[1] ?? word;
      // Absolute and home-relative words were judged by the lexical check already.
      if (value === '' || value.startsWith('~') || isAbsolute(value)) continue;
      if ((await resolveInside(root, root, value)) === null) {
        throw blocked(`${member}: "${word}" resolves outside the studio's folder through a symbolic link; commands may only name files inside it.`, member);
      }
    }
  }
  for (const [i, d] of (m.download ?? []).entries()) {
    if ((await resolveInside(root, root, d.to)) === null) {
      const member = `manifest.download.${i}.to`;
      throw blocked(`${member}: "${d.to}" resolves outside the studio's folder through a symbolic link; it must be a path inside it.`, member);
    }
  }
}
