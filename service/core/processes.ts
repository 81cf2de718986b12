import { execFile, spawn, spawnSync, type ChildProcessByStdio } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';

/**
 * The one way the service starts and ends a child process: a studio's server
 * (launcher/runtime.ts), a lifecycle step (jobs/runner.ts), ffmpeg and
 * ffprobe (media/run.ts). Each child is started from an argument vector
 * (never a shell) as the root of its own group, and ended as a group, so
 * whatever it started ends with it:
 *
 * - POSIX: `detached` makes the child the leader of a new process group.
 *   Ending: SIGTERM to the group, SIGKILL to whatever is left after the
 *   grace, then a bounded wait until no member is alive (on Linux /proc is
 *   read, so zombies waiting for a parent that may never reap them do not
 *   count).
 * - Windows: no process groups and no signals. `windowsHide` and no
 *   `detached` (which would open a console window per child); ending is
 *   `taskkill /T /PID <pid>` (asks the tree to close), then after the grace
 *   `taskkill /T /F /PID <pid>` (ends the tree). taskkill finds the tree by
 *   parent pid, so it reaches descendants only while the leader is alive: a
 *   grandchild whose parent already exited is out of reach (docs/design.md,
 *   "One way to run a child process").
 *
 * The commands are built by pure functions (`spawnOptions`, `endSteps`) so
 * both platforms' forms are unit-tested on any machine.
 */

const HARD_WAIT_MS = 3000;
const POLL_MS = 25;

export type Platform = NodeJS.Platform;

/** What `endGroup` does in each phase: a signal to a POSIX group, or a program to run. */
export type EndStep = { kind: 'signal'; pid: number; signal: NodeJS.Signals } | { kind: 'exec'; file: string; args: string[] };

/** The spawn options every child gets, by platform (pure). */
export function spawnOptions(platform: Platform = process.platform): { detached: boolean; windowsHide: true; shell: false } {
  return { detached: platform !== 'win32', windowsHide: true, shell: false };
}

/** taskkill by its full path: a child's PATH may be empty, and a bare name would be looked up in the working folder first. */
export function taskkillPath(env: NodeJS.ProcessEnv = process.env): string {
  const root = env.SystemRoot ?? env.SYSTEMROOT ?? env.windir ?? env.WINDIR ?? 'C:\\Windows';
  return path.win32.join(root, 'System32', 'taskkill.exe');
}

/**
 * The graceful and the forced step of ending the group led by `pid` (pure).
 * POSIX: signals to `-pid` (the group). Windows: taskkill over the tree.
 */
export function endSteps(pid: number, platform: Platform = process.platform, env: NodeJS.ProcessEnv = process.env): { graceful: EndStep; force: EndStep } {
  if (platform === 'win32') {
    const file = taskkillPath(env);
    return {
      graceful: { kind: 'exec', file, args: ['/T', '/PID', String(pid)] },
      force: { kind: 'exec', file, args: ['/T', '/F', '/PID', String(pid)] },
    };
  }
  return {
    graceful: { kind: 'signal', pid: -pid, signal: 'SIGTERM' },
    force: { kind: 'signal', pid: -pid, signal: 'SIGKILL' },
  };
}

/**
 * Told when a group starts and once none of it is alive: the service's
 * process ledger (db/process-ledger.ts), so a group that a crash of the
 * service leaves behind is ended at its next start.
 */
export interface GroupWatch {
  started(pid: number): void;
  ended(pid: number): void;
}

export type GroupChild = ChildProcessByStdio<null, Readable, Readable>;

/**
 * Starts `program` with `args` as the root of a new group: stdin closed,
 * stdout and stderr piped. Throws what `spawn` throws for arguments Node
 * refuses outright (a NUL byte); a program that cannot be started comes as
 * the child's 'error' event with no `pid`, as with `spawn`.
 */
export function startGroup(program: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): GroupChild {
  return spawn(program, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...spawnOptions(),
  });
}

/**
 * Ends the group led by `pid`: the graceful step, up to `graceMs` for it to
 * go, the forced step, then up to 3 s more. Resolves once none of it is
 * alive (or that wait ran out); never rejects.
 */
export async function endGroup(pid: number, graceMs: number): Promise<void> {
  const steps = endSteps(pid);
  if (!groupAlive(pid)) return;
  if (await runStep(steps.graceful)) {
    const deadline = Date.now() + graceMs;
    while (groupAlive(pid) && Date.now() < deadline) await sleep(POLL_MS);
    if (!groupAlive(pid)) return;
  } else if (steps.graceful.kind === 'signal') {
    return; // ESRCH: the group is gone
  }
  // (Windows: taskkill without /F fails at once for a process with no window; no grace to wait for then.)
  await runStep(steps.force);
  const hard = Date.now() + HARD_WAIT_MS;
  while (groupAlive(pid) && Date.now() < hard) await sleep(POLL_MS);
}

/** Ends the group at once, no grace (the ledger's orphans: their owner is gone). Whether the step ran. */
export function killGroupNow(pid: number): boolean {
  const step = endSteps(pid).force;
  if (step.kind === 'signal') return sendSignal(step);
  const result = spawnSync(step.file, step.args, { stdio: 'ignore', windowsHide: true, timeout: 10_000 });
  return result.error === undefined && result.status === 0;
}

/** Whether the group that `exit` left behind may still hold processes to end. */
export function leftoversPossible(pid: number): boolean {
  // Windows: with the leader gone taskkill cannot find its tree (see the header).
  return process.platform !== 'win32' && groupAlive(pid);
}

function runStep(step: EndStep): Promise<boolean> {
  if (step.kind === 'signal') return Promise.resolve(sendSignal(step));
  return new Promise((resolve) => {
    execFile(step.file, step.args, { windowsHide: true, timeout: 10_000 }, (err) => resolve(err === null));
  });
}

function sendSignal(step: { pid: number; signal: NodeJS.Signals }): boolean {
  try {
    process.kill(step.pid, step.signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether any process of the group led by `pid` is alive. Linux: its live
 * members from /proc (zombies do not count). Other POSIX: signal 0 to the
 * group. Windows: signal 0 to the leader (there is no group to ask).
 */
export function groupAlive(pid: number): boolean {
  if (process.platform === 'linux') return groupMembers(pid).length > 0;
  try {
    process.kill(process.platform === 'win32' ? pid : -pid, 0);
    return true;
  } catch {
    return false;
  }
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
