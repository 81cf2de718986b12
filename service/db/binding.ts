import { join, sep } from 'node:path';

/**
 * Which compiled better-sqlite3 a process loads (`new Database(file, { nativeBinding })`).
 * The addon is built against one runtime's ABI (NODE_MODULE_VERSION): the one in
 * node_modules is Node's (bin/backlot, the tests, `npm run bench`); Electron's main
 * process needs its own, built apart by `npm run rebuild:electron` into
 * build/electron/better_sqlite3.node, so neither build ever replaces the other
 * (docs/design.md, "Two builds of better-sqlite3").
 */

/** Where `npm run rebuild:electron` writes the Electron build, relative to the app's root. */
export const ELECTRON_BINDING = join('build', 'electron', 'better_sqlite3.node');

/**
 * Set by the main thread under Electron to its ABI (process.versions.modules), so a
 * read worker thread knows it runs in Electron too, whatever its process.versions
 * shows. A plain Node process that inherits it has another ABI and ignores it.
 */
export const ELECTRON_ABI_ENV = 'BACKLOT_ELECTRON_ABI';

/** Whether this thread runs in Electron: its own version, or the main thread's mark with this runtime's ABI. */
export function runsInElectron(versions: { electron?: string; modules: string }, env: NodeJS.ProcessEnv): boolean {
  return Boolean(versions.electron) || (env[ELECTRON_ABI_ENV] !== undefined && env[ELECTRON_ABI_ENV] === versions.modules);
}

export interface BindingQuery {
  /** Whether this thread runs in Electron (runsInElectron). */
  electron: boolean;
  /** BACKLOT_SQLITE_BINDING: an explicit .node file, for Electron only. */
  override: string | undefined;
  /** The app's root: the project folder, or `.../resources/app.asar` when packaged. */
  appRoot: string;
}

/**
 * The .node file to load, or undefined for better-sqlite3's own lookup (Node's
 * build in node_modules). A native file cannot be loaded from inside app.asar,
 * so a path through the archive is read from `app.asar.unpacked` beside it.
 */
export function sqliteBinding(query: BindingQuery): string | undefined {
  if (!query.electron) return undefined;
  const chosen = query.override ? query.override : join(query.appRoot, ELECTRON_BINDING);
  return unpacked(chosen);
}

function unpacked(path: string): string {
  const marker = `${sep}app.asar${sep}`;
  const at = path.indexOf(marker);
  return at < 0 ? path : `${path.slice(0, at)}${sep}app.asar.unpacked${sep}${path.slice(at + marker.length)}`;
}
