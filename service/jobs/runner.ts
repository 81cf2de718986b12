import { createInterface } from 'node:readline';
import { endGroup, leftoversPossible, startGroup, type GroupChild, type GroupWatch } from '../core/processes';
import { withOwnNode } from './argv';
import { cutLine } from './logs';

/**
 * The job runner's process side: each step is one child process, started
 * from an argument vector (never a shell string), as the root of its own
 * group (core/processes.ts), so cancel reaches every process it started. A
 * program word `node` is Backlot's own Node (argv.ts `withOwnNode`).
 *
 * Cancel: the group's end protocol (core/processes.ts `endGroup`: graceful,
 * forced after the grace, then wait until no process of it is alive). When a
 * step's leader exits by itself, processes it left behind in its group are
 * ended the same way, so no step outlives its job.
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

export type { GroupWatch };

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
  if (!step.command[0]) return Promise.resolve(`Step "${step.name}" has no command.`);
  const env = step.cleanEnv ? (step.env ?? {}) : step.env ? { ...process.env, ...step.env } : process.env;
  const run = withOwnNode(step.command, env);
  const [program, ...args] = run.argv as [string, ...string[]];
  return new Promise((resolve) => {
    let child: GroupChild;
    try {
      child = startGroup(program, args, { cwd: step.cwd, env: run.env });
    } catch (err) {
      resolve(`Step "${step.name}" could not start ${JSON.stringify(program)}: ${(err as Error).message}`);
      return;
    }
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
      if (pid !== null && !control.cancelled && leftoversPossible(pid)) leftovers = endGroup(pid, LEFTOVER_GRACE_MS);
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
