import { readFileSync } from 'node:fs';
import { groupAlive, groupMembers, killGroupNow } from '../core/processes';
import { nowIso } from '../core/time';
import type { Db } from './open';

/**
 * The ledger of process groups the service started (table `process_groups`,
 * migration 0011): a running studio's server, a lifecycle step. A group is
 * recorded when it starts and forgotten once none of it is alive. Rows left
 * by a crash name groups nobody will end; `endOrphans()` ends them at the
 * next start, before the service serves anything (docs/api.md "Crash recovery").
 *
 * A pid may be reused after the group died, so a row is acted on only when
 * the group is provably the one recorded: same boot, and either the leader is
 * alive with the recorded start time, or the leader is gone while members of
 * its group live on (the kernel does not hand out a group id while the group
 * has members).
 */

export interface ProcessLedger {
  record(pgid: number, owner: string): void;
  forget(pgid: number): void;
  /** Ends every recorded group of an earlier run (SIGKILL: their owner is gone) and clears the ledger. Returns what it ended. */
  endOrphans(): { pgid: number; owner: string }[];
}

export function createProcessLedger(db: Db): ProcessLedger {
  const stmts = {
    insert: db.prepare(
      'INSERT OR REPLACE INTO process_groups (pgid, leader_start, boot_id, owner, started_at) VALUES (?, ?, ?, ?, ?)',
    ),
    remove: db.prepare('DELETE FROM process_groups WHERE pgid = ?'),
    all: db.prepare<[], { pgid: number; leader_start: string; boot_id: string; owner: string }>(
      'SELECT pgid, leader_start, boot_id, owner FROM process_groups',
    ),
    clear: db.prepare('DELETE FROM process_groups'),
  };
  return {
    record(pgid, owner) {
      stmts.insert.run(pgid, processStart(pgid) ?? '', bootId(), owner, nowIso());
    },
    forget(pgid) {
      stmts.remove.run(pgid);
    },
    endOrphans() {
      const ended: { pgid: number; owner: string }[] = [];
      const boot = bootId();
      for (const row of stmts.all.all()) {
        if (row.boot_id !== boot || !groupAlive(row.pgid)) continue;
        const leader = processStart(row.pgid);
        const ours = leader === null ? groupMembers(row.pgid).length > 0 : leader === row.leader_start;
        if (!ours) continue;
        killGroupNow(row.pgid);
        ended.push({ pgid: row.pgid, owner: row.owner });
      }
      stmts.clear.run();
      return ended;
    },
  };
}

/** The start time of a live (non-zombie) process in clock ticks since boot, from /proc; null when gone or not Linux. */
export function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return null;
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

let cachedBootId: string | null = null;
function bootId(): string {
  if (cachedBootId === null) {
    try {
      cachedBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      cachedBootId = 'unknown';
    }
  }
  return cachedBootId;
}
