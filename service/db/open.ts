import Database from 'better-sqlite3';
import { chmodSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDir } from '../core/files';
import { nativeOptions } from './native';
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
