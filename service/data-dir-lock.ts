import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import Database from 'better-sqlite3';
import { nativeOptions } from './db/native';
import { ensureDir } from './core/files';
import { readServerInfo } from './core/server-file';

/**
 * One server per data dir (docs/design.md "One server per data dir"; docs/api.md): `serve`
 * and the desktop shell hold an exclusive lock on DIR/lock.db for as long as
 * they run, taken before the service changes anything in the dir.
 *
 * The lock is SQLite's own file lock (fcntl on POSIX, LockFileEx on Windows):
 * a connection in `locking_mode=EXCLUSIVE` that has written once keeps its
 * exclusive lock until it closes. The kernel drops it when the process dies,
 * however it dies, so a crashed server never blocks the next start, and no
 * pid is guessed alive or dead. The write is the holder's pid, into the
 * file's header (`user_version`, bytes 60..63), so a refused start can name
 * the holder even before it has written its server file.
 *
 * A refused start touches nothing: it opens the existing file, fails to get
 * its lock at once (no busy wait), and reads the header and server.json.
 * CLI admin commands never take this lock; they share the database with the
 * running server as before.
 */

export const LOCK_FILE = 'lock.db';

/** Byte offset of SQLite's header field `user_version` (a big-endian 32-bit integer). */
const USER_VERSION_OFFSET = 60;

/** What is known of the process that holds a data dir. */
export interface LockHolder {
  /** Its pid, from the lock file (null when it could not be read). */
  pid: number | null;
  /** Its address, from its server file; null while it starts (it writes the file once it listens). */
  url: string | null;
}

/** A second server on a locked data dir (`serve` exits 1 with this message; the shell shows it). */
export class DataDirLockedError extends Error {
  readonly code = 'data_dir_locked';
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder,
  ) {
    super(lockedMessage(dataDir, holder));
    this.name = 'DataDirLockedError';
  }
}

export interface DataDirLock {
  readonly dataDir: string;
  /** Ends the lock (the service's last step in close()). Idempotent. */
  release(): void;
}

/** Locks held by this process, by lock file: a second service in the same process is refused without a file read. */
const heldHere = new Map<string, { dev: number; ino: number }>();

/**
 * Takes the data dir's lock, creating the dir and the lock file when missing,
 * or throws DataDirLockedError naming the holder.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const file = resolve(dataDir, LOCK_FILE);
  if (heldHere.has(file) || sameFileHeldHere(file)) throw new DataDirLockedError(dataDir, holderInfo(dataDir, process.pid));
  ensureDir(dataDir);
  // timeout 0: a held lock is an answer at once, never a wait (SQLite's busy handler would retry for seconds).
  const db = new Database(file, { timeout: 0, ...nativeOptions() });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    // No journal file beside it: the one write is a header field, and nothing is lost with it.
    db.pragma('journal_mode = MEMORY');
    db.transaction(() => db.pragma(`user_version = ${process.pid}`)).immediate();
  } catch (err) {
    db.close();
    const code = (err as { code?: string }).code;
    if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
      // Never removed here: a file another process holds must stay the one it holds.
      throw new Error(`The data dir's lock file ${file} is damaged (${(err as Error).message}). If no Backlot server runs on ${dataDir}, remove that file and start again.`);
    }
    if (code !== 'SQLITE_BUSY') throw err;
    throw new DataDirLockedError(dataDir, holderInfo(dataDir, headerPid(file)));
  }
  const { dev, ino } = statSync(file);
  heldHere.set(file, { dev, ino });
  let held = true;
  return {
    dataDir,
    release() {
      if (!held) return;
      held = false;
      heldHere.delete(file);
      db.close();
    },
  };
}

/** The same file under another name (a symlinked dir), locked by this process. */
function sameFileHeldHere(file: string): boolean {
  let stat;
  try {
    stat = statSync(file);
  } catch {
    return false;
  }
  for (const held of heldHere.values()) if (held.dev === stat.dev && held.ino === stat.ino) return true;
  return false;
}

/**
 * The holder's pid as it wrote it into the header. Only ever called when
 * another process holds the lock: in the holder's own process, opening and
 * closing the file would drop its POSIX lock (fcntl locks are per process).
 * Reading bytes 0..99 is allowed while locked: SQLite locks bytes past 1 GiB.
 */
function headerPid(file: string): number | null {
  const header = Buffer.alloc(100);
  let fd: number | null = null;
  try {
    fd = openSync(file, 'r');
    if (readSync(fd, header, 0, header.length, 0) < header.length) return null;
  } catch {
    return null;
  } finally {
    if (fd !== null) closeSync(fd);
  }
  const pid = header.readInt32BE(USER_VERSION_OFFSET);
  return pid > 0 ? pid : null;
}

/** The holder's address: its server file, when that file is the holder's (a crashed run's file names another pid). */
function holderInfo(dataDir: string, pid: number | null): LockHolder {
  const server = readServerInfo(dataDir);
  if (server && (pid === null || server.pid === pid)) return { pid: server.pid, url: server.url };
  return { pid, url: null };
}

function lockedMessage(dataDir: string, holder: LockHolder): string {
  const who = holder.pid === null ? 'another process' : `process ${holder.pid}`;
  if (holder.url !== null) {
    return (
      `Another Backlot server is already running on the data dir ${dataDir}: ${holder.url} (pid ${holder.pid}). ` +
      `Use that one ('backlot login-url' signs a browser in to it), stop it first, or pass another --data-dir.`
    );
  }
  return (
    `Another Backlot server holds the data dir ${dataDir} (${who}); it is still starting and has not written its address yet. ` +
    `Use that one once it is ready, stop it first, or pass another --data-dir.`
  );
}
