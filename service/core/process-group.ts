import { readdirSync, readFileSync } from 'node:fs';

/**
 * Ending a process group: SIGTERM to the group, SIGKILL to whatever is left
 * after the grace, then a bounded wait until no member is alive. One protocol
 * for every child the service starts: the job runner's steps
 * (service/jobs/runner.ts) and the media tools (service/media/run.ts).
 */

const HARD_WAIT_MS = 3000;
const POLL_MS = 25;

export async function endGroup(pgid: number, graceMs: number): Promise<void> {
  if (!signalGroup(pgid, 'SIGTERM')) return;
  const deadline = Date.now() + graceMs;
  while (groupAlive(pgid) && Date.now() < deadline) await sleep(POLL_MS);
  if (!groupAlive(pgid)) return;
  signalGroup(pgid, 'SIGKILL');
  const hard = Date.now() + HARD_WAIT_MS;
  while (groupAlive(pgid) && Date.now() < hard) await sleep(POLL_MS);
}

export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether any process of the group is alive. On Linux /proc is read so that
 * zombies (exited, waiting for a parent that may never reap them) do not
 * count; elsewhere signal 0 answers.
 */
export function groupAlive(pgid: number): boolean {
  if (process.platform !== 'linux') {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  }
  return groupMembers(pgid).length > 0;
}

/** Live (non-zombie) pids of a process group, from /proc (Linux only; [] elsewhere). */
export function groupMembers(pgid: number): number[] {
  if (process.platform !== 'linux') return [];
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') members.push(Number(entry));
  }
  return members;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
