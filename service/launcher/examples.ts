import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { unpackedPath } from '../media';
import { MANIFEST_FILE, MAX_MANIFEST_BYTES, parseManifest } from './manifest';

/**
 * The example studios that ship with Backlot (`examples/studios/<id>/`), for
 * the launcher's Examples list and its one-click Install (docs/api.md
 * "GET /launcher/examples"). From dist/service/launcher the app's root is
 * three folders up: the project folder, or `resources/app.asar` in the
 * packaged app, where electron-builder.yml unpacks the examples next to the
 * archive (a studio's own programs cannot read inside it), so the folder
 * handed out is the unpacked one.
 */

export const SHIPPED_EXAMPLES = unpackedPath(resolve(__dirname, '..', '..', '..', 'examples', 'studios'));

export interface Example {
  id: string;
  name: string;
  version: string;
  description: string | null;
  needs: string[];
  heavy: boolean;
  capabilities: string[];
  source: string;
  installed: boolean;
}

/** Every folder of `dir` with a valid manifest, by name; a folder without one (or with a bad one) is left out. */
export async function listExamples(dir: string, isInstalled: (id: string) => boolean): Promise<Example[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const found: Example[] = [];
  for (const e of entries) {
    if (!e.isDirectory()) continue;
    const source = join(dir, e.name);
    const text = await readFile(join(source, MANIFEST_FILE), 'utf8').catch(() => null);
    if (text === null || text.length > MAX_MANIFEST_BYTES) continue;
    let m;
    try {
      m = parseManifest(text);
    } catch {
      continue;
    }
    found.push({
      id: m.id,
      name: m.name,
      version: m.version,
      description: m.description ?? null,
      needs: m.needs ?? [],
      heavy: m.heavy === true,
      capabilities: m.capabilities,
      source,
      installed: isInstalled(m.id),
    });
  }
  return found.sort((a, b) => a.name.localeCompare(b.name));
}
