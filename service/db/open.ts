import Database from 'better-sqlite3';
import { chmodSync, existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ensureDir } from '../core/files';
import { ELECTRON_ABI_ENV, runsInElectron, sqliteBinding } from './binding';
import { migrate } from './migrate';
import { MIGRATIONS } from './migrations';

export type Db = Database.Database;

export const DB_FILE = 'backlot.db';

/**
 * Opens (creating when needed) the one database of a data dir: WAL so readers
 * never wait for the writer, foreign keys on, a busy timeout so the CLI and the
 * server can share the file, synchronous=NORMAL (durable across a crash of the
 * process; WAL keeps the file consistent across power loss), then migrations.
 */
export function openDatabase(dataDir: string): Db {
  try {
    ensureDir(dataDir);
    if (!statSync(dataDir).isDirectory()) throw new Error('it is not a folder');
  } catch (err) {
    throw new Error(`Cannot use the data dir ${dataDir}: ${(err as Error).message}`);
  }
  const file = join(dataDir, DB_FILE);
  const isNew = !existsSync(file);
  const db = new Database(file, nativeOptions());
  if (isNew) chmodSync(file, 0o600);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db, MIGRATIONS);
  return db;
}

/**
 * A read-only connection on a data dir's database, for the read workers
 * (read-pool.ts): the file must exist and be in WAL mode already (the main
 * connection made it so); the busy timeout covers a WAL recovery by another
 * connection. Nothing it runs can write.
 */
export function openReadOnly(file: string): Db {
  const db = new Database(file, { readonly: true, fileMustExist: true, ...nativeOptions() });
  db.pragma('busy_timeout = 5000');
  return db;
}

/** dist/service/db -> the app's root (the project folder, or app.asar when packaged). */
const APP_ROOT = resolve(__dirname, '..', '..', '..');

/**
 * The one place both connections (the main one and each read worker's) learn
 * which better-sqlite3 build to load (binding.ts). A missing Electron build is
 * named with its remedy, instead of better-sqlite3's NODE_MODULE_VERSION error.
 */
function nativeOptions(): { nativeBinding?: string } {
  const electron = runsInElectron(process.versions, process.env);
  // The read workers start after this (main) connection: they inherit the mark.
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
