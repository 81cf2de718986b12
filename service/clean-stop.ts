import { existsSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { replaceFileSync, syncDir } from './core/files';
import { SERVER_FILE } from './core/server-file';

/**
 * The clean-stop marker, DIR/clean-stop (docs/reliability.md): written last by
 * a close() that finished everything, taken (removed) first by the next
 * start. Present at start means the previous run left nothing for start-up
 * recovery to do, so the blob store's recovery past its first part is
 * skipped (service/assets/recover.ts). Absent means a crash, a kill, a stop
 * that ran out of time, or a data dir of an older version: recovery runs.
 *
 * Every mistake must be the safe one (a recovery that was not needed):
 * - it is removed, durably, before this run changes anything, so a crash of
 *   this run can never be taken for a clean stop;
 * - a server file (server.json) still there means a run ended without its
 *   close (an older version, which writes no marker, crashed after the last
 *   clean stop of this one): not clean;
 * - it is written only after the database is closed and the folders whose
 *   entries recovery checks are synced, then fsynced and renamed into place,
 *   so after a power loss either it is missing or what it vouches for is on
 *   disk.
 */

export const CLEAN_STOP_FILE = 'clean-stop';

/** True when the previous run stopped cleanly. The marker is gone afterwards either way. */
export function takeCleanStop(dataDir: string): boolean {
  const file = join(dataDir, CLEAN_STOP_FILE);
  try {
    unlinkSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return false;
    throw err;
  }
  syncDir(dataDir);
  return !existsSync(join(dataDir, SERVER_FILE));
}

/** Records a clean stop: `synced` folders first (missing ones skipped), then the marker. */
export function recordCleanStop(dataDir: string, synced: readonly string[]): void {
  for (const dir of synced) {
    try {
      syncDir(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  replaceFileSync(join(dataDir, CLEAN_STOP_FILE), `${JSON.stringify({ pid: process.pid, stopped_at: new Date().toISOString() })}\n`);
  syncDir(dataDir);
}
