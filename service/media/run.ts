import { StringDecoder } from 'node:string_decoder';
import { endGroup, leftoversPossible, startGroup, type GroupChild, type GroupWatch } from '../core/processes';
import { requireTool } from './tools';
import type { MediaTool } from './types';

/**
 * The one place the service starts ffmpeg or ffprobe (service/media/README.md).
 *
 * - The tool is resolved by toolPath's documented order (501 when missing) and
 *   started from an argument array: `shell: false`, nothing is ever joined
 *   into a command string.
 * - Each child is the root of its own group (core/processes.ts, the same
 *   start and end as the job runner's steps and the studios), so a timeout,
 *   an abort or the service's shutdown ends everything it started: the
 *   graceful end, the forced one after the grace, then a wait until no
 *   member is alive. Members a leader leaves behind when it exits by itself
 *   are ended too.
 * - Live children sit in a registry (liveChildren, killAllChildren); after
 *   the service's shutdown (its MediaScope closed) none of its runs starts.
 * - With `BACKLOT_MEDIA_LOG` set, the exact argument list is written to
 *   stderr as a JSON array, and the outcome when it ends.
 * - stdout and stderr are kept up to a byte cap each; lines of either can be
 *   handed to a callback as they come (`\n`, `\r\n` or a lone `\r` ends a line,
 *   so ffmpeg's `\r` status lines arrive one by one).
 */

export interface RunOptions {
  /** The child's environment and the one the tool is looked up in; default process.env. */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Ends the group after this many ms; the result then has `timedOut`. */
  timeoutMs?: number;
  /** Ends the group when aborted; the result then has `aborted`. */
  signal?: AbortSignal;
  /** SIGTERM-to-SIGKILL grace, default 2000 ms; a function is asked when the group is ended (a stop may shorten it). */
  graceMs?: number | (() => number);
  /** Bytes of stdout kept (default 8 MiB); past it `stdoutTruncated`. */
  maxStdoutBytes?: number;
  /** Bytes of stderr kept (default 256 KiB); past it `stderrTruncated`. */
  maxStderrBytes?: number;
  onStdoutLine?: (line: string) => void;
  onStderrLine?: (line: string) => void;
  /**
   * Told when the child's group starts and once none of it is alive: the
   * service's process ledger (db/process-ledger.ts), so that a group a crash
   * of the service leaves behind is ended at its next start. ffmpeg ignores
   * SIGPIPE: without this an export's encoder outlives a SIGKILLed service.
   */
  groups?: GroupWatch;
}

export interface RunResult {
  /** Exit code, null when ended by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Ended by the AbortSignal or by killAllChildren. */
  aborted: boolean;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
}

export interface LiveChild {
  pid: number;
  tool: MediaTool;
  /** The resolved binary, then the arguments, exactly as passed. */
  argv: readonly string[];
  startedAt: number;
}

const DEFAULT_GRACE_MS = 2000;
const DEFAULT_MAX_STDOUT = 8 * 1024 * 1024;
const DEFAULT_MAX_STDERR = 256 * 1024;
/** Grace for members a leader left behind when it exited by itself. */
const LEFTOVER_GRACE_MS = 1000;
/** A longer line reaches the callback cut to this many characters. */
const MAX_LINE_CHARS = 64 * 1024;

interface Entry extends LiveChild {
  stop(): void;
  settled: Promise<unknown>;
  /** The signal the run was started with (its service's MediaScope). */
  signal: AbortSignal | undefined;
}

const live = new Map<number, Entry>();

/** The children running now (a snapshot). */
export function liveChildren(): LiveChild[] {
  return [...live.values()].map(({ pid, tool, argv, startedAt }) => ({ pid, tool, argv, startedAt }));
}

/**
 * Ends every live child's group; resolves when each run has settled. For
 * tests: a service ends only its own children, through its MediaScope.
 */
export async function killAllChildren(): Promise<void> {
  const entries = [...live.values()];
  for (const entry of entries) entry.stop();
  await Promise.all(entries.map((entry) => entry.settled.catch(() => undefined)));
}

/** One service's share of the media module: what it starts, it ends at its stop. */
export interface MediaScope {
  /** Pass to every run and probe of the service. */
  signal: AbortSignal;
  /**
   * The service's stop (docs/api.md "Media tools"): ends the groups of every run started
   * with `signal`, and from then on a run or probe given it starts nothing
   * (a plan going on to its next file cannot leave a child behind the
   * exiting service). Other services in the process are not touched.
   */
  close(): Promise<void>;
}

export function createMediaScope(): MediaScope {
  const controller = new AbortController();
  return {
    signal: controller.signal,
    async close() {
      controller.abort();
      const entries = [...live.values()].filter((entry) => entry.signal === controller.signal);
      await Promise.all(entries.map((entry) => entry.settled.catch(() => undefined)));
    },
  };
}

/**
 * Runs `tool` with `args` and resolves when it and its group are gone,
 * whatever the exit (check `code`, `timedOut`, `aborted`). Rejects with the
 * 501 ApiError when the tool is unavailable and with an Error when it could
 * not be started.
 */
export function runTool(tool: MediaTool, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  let program: string;
  try {
    program = requireTool(tool, options.env ?? process.env);
  } catch (err) {
    return Promise.reject(err);
  }
  const argv = [program, ...args];
  if (options.signal?.aborted) return Promise.resolve(notStarted());
  log(`run ${JSON.stringify(argv)}`);
  const settled = start(tool, argv, options);
  return settled;
}

function start(tool: MediaTool, argv: string[], options: RunOptions): Promise<RunResult> {
  const [program, ...args] = argv as [string, ...string[]];
  const graceMs = () => {
    const given = options.graceMs ?? DEFAULT_GRACE_MS;
    return typeof given === 'function' ? given() : given;
  };
  let resolveRun!: (r: RunResult) => void;
  let rejectRun!: (e: Error) => void;
  const settled = new Promise<RunResult>((res, rej) => {
    resolveRun = res;
    rejectRun = rej;
  });
  let child: GroupChild;
  try {
    child = startGroup(program, args, { cwd: options.cwd, env: options.env ?? process.env });
  } catch (err) {
    // Arguments Node refuses outright (a NUL byte in one).
    return Promise.reject(new Error(`Could not start ${tool} (${program}): ${err instanceof Error ? err.message : String(err)}`));
  }
  const pid = child.pid;
  if (pid === undefined) {
    child.once('error', (err) => rejectRun(new Error(`Could not start ${tool} (${program}): ${err.message}`)));
    return settled;
  }
  const startedAt = Date.now();
  options.groups?.started(pid);
  const out = new Collector(options.maxStdoutBytes ?? DEFAULT_MAX_STDOUT, options.onStdoutLine);
  const err = new Collector(options.maxStderrBytes ?? DEFAULT_MAX_STDERR, options.onStderrLine);
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
  // A late 'error' (a failed kill) must not become an unhandled event.
  child.on('error', () => undefined);

  let timedOut = false;
  let aborted = false;
  let ending: Promise<void> = Promise.resolve();
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    ending = endGroup(pid, graceMs());
  };
  const timer =
    options.timeoutMs !== undefined
      ? setTimeout(() => {
          timedOut = true;
          stop();
        }, options.timeoutMs)
      : null;
  const onAbort = () => {
    aborted = true;
    stop();
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });

  let leftovers: Promise<void> = Promise.resolve();
  child.once('exit', () => {
    if (timer) clearTimeout(timer);
    // Whatever the leader left running in its group ends with it.
    if (!stopping && leftoversPossible(pid)) leftovers = endGroup(pid, LEFTOVER_GRACE_MS);
  });
  child.once('close', (code, signal) => {
    options.signal?.removeEventListener('abort', onAbort);
    void Promise.all([ending, leftovers]).then(() => {
      live.delete(pid);
      options.groups?.ended(pid);
      const result: RunResult = {
        code,
        signal,
        stdout: out.text(),
        stderr: err.text(),
        timedOut,
        aborted,
        stdoutTruncated: out.truncated,
        stderrTruncated: err.truncated,
      };
      log(`pid ${pid} ended: code ${code} signal ${signal}${timedOut ? ' (timed out)' : ''}${aborted ? ' (aborted)' : ''} after ${Date.now() - startedAt} ms`);
      resolveRun(result);
    });
  });
  live.set(pid, {
    pid,
    tool,
    argv,
    startedAt,
    stop: () => {
      aborted = true;
      stop();
    },
    settled,
    signal: options.signal,
  });
  return settled;
}

function notStarted(): RunResult {
  return { code: null, signal: null, stdout: '', stderr: '', timedOut: false, aborted: true, stdoutTruncated: false, stderrTruncated: false };
}

function log(message: string): void {
  const flag = process.env.BACKLOT_MEDIA_LOG;
  if (flag !== undefined && flag !== '' && flag !== '0') process.stderr.write(`media: ${message}\n`);
}

/** Keeps the first `max` bytes of a stream and hands its lines to a callback. */
class Collector {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  truncated = false;
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  private afterCr = false;
  private callbackFailed = false;

  constructor(
    private readonly max: number,
    private readonly onLine: ((line: string) => void) | undefined,
  ) {}

  push(chunk: Buffer): void {
    const room = this.max - this.kept;
    if (chunk.length <= room) {
      this.chunks.push(chunk);
      this.kept += chunk.length;
    } else {
      if (room > 0) this.chunks.push(chunk.subarray(0, room));
      this.kept = this.max;
      this.truncated = true;
    }
    if (this.onLine) this.split(this.decoder.write(chunk));
  }

  text(): string {
    if (this.onLine) this.split(this.decoder.end(), true);
    return Buffer.concat(this.chunks).toString('utf8');
  }

  private split(text: string, end = false): void {
    let start = 0;
    if (this.afterCr && text.startsWith('\n')) start = 1;
    if (text !== '') this.afterCr = text.endsWith('\r');
    const breaks = /\r\n|\r|\n/g;
    breaks.lastIndex = start;
    for (let m = breaks.exec(text); m !== null; m = breaks.exec(text)) {
      this.append(text.slice(start, m.index));
      this.emit();
      start = m.index + m[0].length;
    }
    this.append(text.slice(start));
    if (end && this.pending !== '') this.emit();
  }

  private append(piece: string): void {
    if (this.pending.length < MAX_LINE_CHARS) this.pending = (this.pending + piece).slice(0, MAX_LINE_CHARS);
  }

  private emit(): void {
    const line = this.pending;
    this.pending = '';
    try {
      this.onLine!(line);
    } catch (error) {
      if (!this.callbackFailed) process.stderr.write(`media: a line callback failed: ${String(error)}\n`);
      this.callbackFailed = true;
    }
  }
}
