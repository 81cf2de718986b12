import { readdirSync, readFileSync } from 'node:fs';

/**
 * The process side of the crash test: which processes a service
 * had started when it was killed, read from Linux's /proc.
 */

export interface Proc {
  pid: number;
  ppid: number;
  pgid: number;
  /** Start time in clock ticks since boot: with the pid, names one process for good. */
  start: string;
  comm: string;
}

export function readProc(pid: number): Proc | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const f = stat.slice(close + 2).split(' ');
    if (f[0] === 'Z' || f[0] === 'X') return null;
    return { pid, ppid: Number(f[1]), pgid: Number(f[2]), start: f[19]!, comm };
  } catch {
    return null;
  }
}

export function allProcs(): Proc[] {
  const out: Proc[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const p = readProc(Number(name));
    if (p) out.push(p);
  }
  return out;
}

/** Every live descendant of `root` (children, their children, ...), and members of their process groups. */
export function descendants(root: number): Proc[] {
  const procs = allProcs();
  const byParent = new Map<number, Proc[]>();
  for (const p of procs) byParent.set(p.ppid, [...(byParent.get(p.ppid) ?? []), p]);
  const found = new Map<number, Proc>();
  const queue = [root];
  while (queue.length > 0) {
    for (const child of byParent.get(queue.shift()!) ?? []) {
      if (found.has(child.pid)) continue;
      found.set(child.pid, child);
      queue.push(child.pid);
    }
  }
  const groups = new Set([...found.values()].map((p) => p.pgid));
  groups.delete(readProc(root)?.pgid ?? -1);
  for (const p of procs) if (groups.has(p.pgid) && !found.has(p.pid)) found.set(p.pid, p);
  return [...found.values()];
}

/** Whether the very process `p` names (same pid and start time) still lives (a zombie does not). */
export function stillAlive(p: Proc): boolean {
  const now = readProc(p.pid);
  return now !== null && now.start === p.start;
}
