import { spawn } from 'node:child_process';
import { endGroup } from '../core/process-group';
import { createInterface } from 'node:readline';
import { cutLine } from './logs';

/**
 * The job runner's process side: each step is one child process, started
 * from an argument vector (never a shell string), as the leader of its own
 * process group, so cancel reaches every process it started.
 *
 * Cancel: SIGTERM to the group, SIGKILL to whatever is left after the grace
 * period, then wait until no process of the group is alive. When a step's
 * leader exits by itself, processes it left behind in its group are ended the
 * same way, so no step outlives its job.
 */

export interface RunStep {
  name: string;
  /** argv: command[0] is the program, the rest its arguments, passed as they are. */
  command: string[];
  cwd?: string;
  /** Added to the service's environment (or, with `cleanEnv`, the whole environment). */
  env?: Record<string, string>;
  /** The step gets `env` alone, nothing of the service's environment (studio steps). */
  cleanEnv?: boolean;
}

export interface StepSink {
  /** A step begins (before its process starts). */
  step(name: string, index: number): void;
  /** Output lines of the current step (stdout and stderr). */
  lines(texts: string[], step: string): void;
}

/** SIGTERM-to-SIGKILL grace for processes a step's leader left behind when it exited by itself. */
const LEFTOVER_GRACE_MS = 1000;

/** Told when a step's process group starts and once none of it is alive (the service's process ledger). */
export interface GroupWatch {
  started(pgid: number): void;
  ended(pgid: number): void;
}

export type StepsOutcome = { outcome: 'succeeded' } | { outcome: 'failed'; error: string } | { outcome: 'cancelled' };

/** Cancels the steps in progress; shared between the runner and whoever cancels. */
export class StepControl {
  cancelled = false;
  private pgid: number | null = null;
  /** The cancel's end of the group; kept when the step detaches, so the runner can wait for it. */
  private ending: Promise<void> = Promise.resolve();

  constructor(private readonly graceMs: number) {}

  attach(pgid: number | null): void {
    this.pgid = pgid;
  }

  /** Ends the running step's whole process group; resolves when none of it is alive. */
  cancel(graceMs = this.graceMs): Promise<void> {
    if (this.cancelled) return this.ending;
    this.cancelled = true;
    if (this.pgid !== null) this.ending = endGroup(this.pgid, graceMs);
    return this.ending;
  }

  /** Resolves when no process of the group a cancel ended is alive (at once when nothing was cancelled). */
  get stopped(): Promise<void> {
    return this.ending;
  }
}

export async function runSteps(
  steps: readonly RunStep[],
  sink: StepSink,
  control: StepControl,
  groups?: GroupWatch,
  firstIndex = 0,
): Promise<StepsOutcome> {
  for (const [i, step] of steps.entries()) {
    if (control.cancelled) break;
    sink.step(step.name, firstIndex + i);
    const result = await runOne(step, sink, control, groups);
    if (control.cancelled) break;
    if (result !== null) return { outcome: 'failed', error: result };
  }
  if (!control.cancelled) return { outcome: 'succeeded' };
  // The leader may be gone while processes of its group still run (and write).
  await control.stopped;
  return { outcome: 'cancelled' };
}

/** Runs one step; resolves with null on exit 0, else the error text naming the step. */
function runOne(step: RunStep, sink: StepSink, control: StepControl, groups?: GroupWatch): Promise<string | null> {
  const [program, ...args] = step.command;
  if (!program) return Promise.resolve(`Step "${step.name}" has no command.`);
  return new Promise((resolve) => {
    const child = spawn(program, args, {
      cwd: step.cwd,
      env: step.cleanEnv ? step.env : step.env ? { ...process.env, ...step.env } : process.env,
      detached: true,
      shell: false,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const pid = child.pid ?? null;
    control.attach(pid);
    if (pid !== null) groups?.started(pid);
    let settled = false;
    const settle = (value: string | null) => {
      if (settled) return;
      settled = true;
      control.attach(null);
      resolve(value);
    };
    let sinkFailed = false;
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
        // A failing log write (disk full) or line parser must not take the service down.
        try {
          sink.lines(cutLine(line), step.name);
        } catch (err) {
          if (!sinkFailed) console.error(`step "${step.name}": output not kept:`, err);
          sinkFailed = true;
        }
      });
    }
    child.once('error', (err) => {
      if (pid === null) settle(`Step "${step.name}" could not start ${JSON.stringify(program)}: ${err.message}`);
    });
    // Whatever the leader left running in its group ends with it; the step
    // is over only once none of the group is alive ('exit' comes before 'close').
    let leftovers: Promise<void> = Promise.resolve();
    child.once('exit', () => {
      if (pid !== null && !control.cancelled) leftovers = endGroup(pid, LEFTOVER_GRACE_MS);
    });
    child.once('close', (code, signal) => {
      let outcome: string | null = null;
      if (signal) outcome = `Step "${step.name}" was ended by ${signal}.`;
      else if (code !== 0) outcome = `Step "${step.name}" exited with code ${code}.`;
      void leftovers
        .then(() => control.stopped)
        .then(() => {
          if (pid !== null) groups?.ended(pid);
          settle(outcome);
        });
    });
  });
}
