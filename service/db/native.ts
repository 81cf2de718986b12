import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { ELECTRON_ABI_ENV, runsInElectron, sqliteBinding } from './binding';

/** dist/service/db -> the app's root (the project folder, or app.asar when packaged). */
const APP_ROOT = resolve(__dirname, '..', '..', '..');

/**
 * The one place every connection (the main one, each read worker's, and the
 * data dir's lock in data-dir-lock.ts) learns which better-sqlite3 build to
 * load (binding.ts). A missing Electron build is named with its remedy,
 * instead of better-sqlite3's NODE_MODULE_VERSION error.
 */
export function nativeOptions(): { nativeBinding?: string } {
  const electron = runsInElectron(process.versions, process.env);
  // The read workers start after the first connection: they inherit the mark.
  if (electron) process.env[ELECTRON_ABI_ENV] = process.versions.modules;
  const nativeBinding = sqliteBinding({ electron, override: process.env.BACKLOT_SQLITE_BINDING, appRoot: APP_ROOT });
  if (nativeBinding === undefined) return {};
  if (!existsSync(nativeBinding)) {
    throw new Error(
      `better-sqlite3 has no build for Electron ${process.versions.electron ?? `(ABI ${process.versions.modules})`} at ${nativeBinding}. ` +
        'Run `npm run rebuild:electron` (it downloads Electron\'s headers), or set BACKLOT_SQLITE_BINDING to a build.',
    );
  }
  return { nativeBinding };
}
