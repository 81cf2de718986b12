import { readlinkSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { parentPort, Worker, workerData } from 'node:worker_threads';
import { ApiError, type Details, type ErrorCode, type ErrorStatus } from '../core/errors';
import type { Db } from './open';

/**
 * Reads whose cost grows with the data run off the main thread (docs/api.md "Where reads run"): a
 * pool of worker threads, each with its own read-only connection on the WAL
 * database, runs named read operations (`op` + plain arguments -> plain
 * result, structured-cloned both ways). The domains own the operations (their
 * `reads.ts`); this module knows none of them.
 *
 * - Fairness: a lane (a studio) holds at most half of the workers (at least
 *   one); its further reads wait in its own queue, and free workers go to the
 *   lanes round-robin, so one studio's scans never queue another's query.
 * - Snapshot: each operation runs in one read transaction, so every statement
 *   of it sees the database as of its first read (WAL), even while the main
 *   thread commits.
 * - Errors: an ApiError crosses as {status, code, message, details} and is
 *   thrown again on the main thread as it was; anything else, and a worker
 *   that dies mid-read, is a plain Error (500 `internal`, naming no data).
 *   A dead worker is replaced.
 * - A worker that cannot start (its entry is missing or throws while it
 *   loads, or the thread exits before it is ready) is a broken install, which
 *   no retry mends: the pool ends its workers and runs every read inline on
 *   the main connection from then on, reads queued meanwhile included, with
 *   one warning on stderr. Slower under load, never failed requests.
 *   BACKLOT_TEST_READ_WORKER_ENTRY (tests only) points the workers at another
 *   entry, to prove it.
 * - `size` 0 runs the operations inline on the main thread (the baseline the
 *   responsiveness bench compares with).
 * - Lifecycle: the workers start together with the service's first read that
 *   needs them, and stay until close(), which ends them all. Not at the
 *   service's start: each worker's isolate holds about 20 MB (its own copy of
 *   the modules and heap), which a service that only stores files or KV
 *   documents should not carry (test/assets-big.test.ts bounds a 4 GiB
 *   upload's peak RSS at 150 MB). The first such read waits for the threads
 *   to start (tens of ms).
 */

export type ReadOp = (...args: any[]) => unknown;
export type ReadOps = Record<string, ReadOp>;

/** Runs a named read operation for a lane (a studio); resolves with its plain result. */
export interface ReadRunner {
  run(lane: string, op: string, args: unknown[]): Promise<unknown>;
}

export interface ReadPool extends ReadRunner {
  /** Worker threads (0: inline). */
  readonly size: number;
  /** The kernel thread ids of the workers that are ready (Linux; for the lifecycle test). */
  threads(): number[];
  /** Ends every worker; queued reads fail. Resolves once all threads are gone. */
  close(): Promise<void>;
}

/** The default pool size: the machine's cores, at least 2. */
export function defaultReadWorkers(): number {
  return Math.max(2, availableParallelism());
}

/** A typed call of one domain's read operations through a runner. */
export function readClient<O extends ReadOps>(runner: ReadRunner) {
  return <K extends keyof O & string>(lane: string, op: K, ...args: Parameters<O[K]>) =>
    runner.run(lane, op, args) as Promise<Awaited<ReturnType<O[K]>>>;
}

/** Runs operations on the main thread, on the main connection (size 0; embedders' own reference sources). */
export function inlineReads(ops: ReadOps): ReadRunner {
  return {
    async run(_lane, op, args) {
      const fn = ops[op];
      if (!fn) throw new Error(`unknown read operation ${op}`);
      return fn(...args);
    },
  };
}

interface Task {
  lane: string;
  op: string;
  args: unknown[];
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

interface Slot {
  worker: Worker;
  task: Task | null;
  ready: boolean;
  tid: number | null;
  /** What the thread threw before it was ready (its entry failed to load). */
  failure: Error | null;
}

type Reply =
  | { ready: true; tid: number | null }
  | { result: unknown }
  | { apiError: { status: ErrorStatus; code: ErrorCode; message: string; details: Details } }
  | { failure: string };

export interface ReadPoolOptions {
  /** Worker threads; 0 runs `inline` on the main thread. */
  size: number;
  /** The compiled worker entry (it calls serveReads). */
  entry: string;
  /** The database file the workers open read-only. */
  file: string;
  /** The operations on the main connection, for size 0. */
  inline: () => ReadOps;
}

export function createReadPool(options: ReadPoolOptions): ReadPool {
  if (options.size === 0) {
    const inline = inlineReads(options.inline());
    return { size: 0, run: inline.run, threads: () => [], close: async () => {} };
  }
  const size = options.size;
  const perLane = Math.max(1, Math.floor(size / 2));
  const slots = new Set<Slot>();
  /** Lanes with waiting reads, in round-robin order; a served lane goes to the back. */
  const queues = new Map<string, Task[]>();
  const active = new Map<string, number>();
  let closing = false;
  /** Set once a worker could not start: every read runs here, on the main connection. */
  let fallback: ReadRunner | null = null;
  const exited: Promise<void>[] = [];
  const entry = process.env.BACKLOT_TEST_READ_WORKER_ENTRY || options.entry;

  function spawn(): void {
    let worker: Worker;
    try {
      worker = new Worker(entry, { workerData: { file: options.file } });
    } catch (err) {
      fallBack(err instanceof Error ? err.message : String(err));
      return;
    }
    const slot: Slot = { worker, task: null, ready: false, tid: null, failure: null };
    slots.add(slot);
    worker.unref();
    worker.on('message', (reply: Reply) => {
      if ('ready' in reply) {
        slot.ready = true;
        slot.tid = reply.tid;
        return;
      }
      const task = slot.task;
      if (!task) return;
      finish(slot);
      if ('result' in reply) task.resolve(reply.result);
      else if ('apiError' in reply) {
        const e = reply.apiError;
        task.reject(new ApiError(e.status, e.code, e.message, e.details));
      } else task.reject(new Error(`read ${task.op} failed in its worker: ${reply.failure}`));
      dispatch();
    });
    worker.on('error', (err) => {
      // Before it is ready, the reason goes into the one fallback warning.
      if (slot.ready) console.error('read worker failed:', err);
      else slot.failure = err;
    });
    exited.push(
      new Promise((resolve) =>
        worker.once('exit', (code) => {
          resolve();
          if (!closing && !fallback && !slot.ready) {
            // Its read (sent before it was ready) is answered inline with the rest.
            fallBack(slot.failure ? (slot.failure.message.split('\n')[0] ?? '') : `its thread exited with code ${code} before it was ready`);
            slots.delete(slot);
            return;
          }
          slots.delete(slot);
          const task = slot.task;
          if (task) {
            finish(slot);
            task.reject(new Error(`read ${task.op}: its worker exited (code ${code})`));
          }
          if (closing || fallback) return;
          console.error(`read worker exited (code ${code}); starting a new one`);
          spawn();
          dispatch();
        }),
      ),
    );
  }

  /** Reads run inline from now on: the workers end, the waiting reads run here, one warning says why. */
  function fallBack(reason: string): void {
    if (fallback) return;
    const inline = inlineReads(options.inline());
    fallback = inline;
    console.error(`read workers could not start (${reason}); reads run on the serving thread instead (slower under load, same answers)`);
    const waiting = [...queues.values()].flat();
    queues.clear();
    for (const slot of slots) {
      // A read in flight on a worker that is ended now is answered here instead.
      if (slot.task) {
        waiting.push(slot.task);
        finish(slot);
      }
      void slot.worker.terminate();
    }
    for (const task of waiting) inline.run(task.lane, task.op, task.args).then(task.resolve, task.reject);
  }

  function finish(slot: Slot): void {
    const task = slot.task!;
    slot.task = null;
    const n = (active.get(task.lane) ?? 1) - 1;
    if (n === 0) active.delete(task.lane);
    else active.set(task.lane, n);
  }

  /** Free workers take the next lane in turn that is under its share. */
  function dispatch(): void {
    for (const slot of slots) {
      if (slot.task) continue;
      const lane = [...queues.keys()].find((l) => (active.get(l) ?? 0) < perLane);
      if (lane === undefined) return;
      const queue = queues.get(lane)!;
      const task = queue.shift()!;
      queues.delete(lane);
      if (queue.length > 0) queues.set(lane, queue); // to the back of the round
      active.set(lane, (active.get(lane) ?? 0) + 1);
      slot.task = task;
      slot.worker.postMessage({ op: task.op, args: task.args });
    }
  }

  function failQueued(err: Error): void {
    for (const queue of queues.values()) for (const task of queue) task.reject(err);
    queues.clear();
  }

  // The workers start with the first read (see the module comment), all of them at once.
  let started = false;

  return {
    size,
    threads: () => [...slots].flatMap((s) => (s.tid === null ? [] : [s.tid])),
    run(lane, op, args) {
      if (closing) return Promise.reject(new Error('the service is closing'));
      if (!started) {
        started = true;
        for (let i = 0; i < size && !fallback; i++) spawn();
      }
      if (fallback) return fallback.run(lane, op, args);
      if (slots.size === 0) return Promise.reject(new Error('no read worker is running'));
      return new Promise((resolve, reject) => {
        const queue = queues.get(lane);
        const task = { lane, op, args, resolve, reject };
        if (queue) queue.push(task);
        else queues.set(lane, [task]);
        dispatch();
      });
    },
    async close() {
      closing = true;
      failQueued(new Error('the service is closing'));
      await Promise.all([...slots].map((s) => s.worker.terminate()));
      await Promise.all(exited);
    },
  };
}

/**
 * The worker side: opens the database read-only, builds the operations on it
 * and answers {op, args} messages, each in one read transaction.
 *
 * Test-only hooks (never set them outside tests): a read whose arguments,
 * as JSON, contain the text of BACKLOT_TEST_CRASH_READ ends its worker;
 * BACKLOT_TEST_SLOW_READ=MARK:MS makes a read with MARK in its arguments hold
 * its snapshot for MS milliseconds before it runs (writing "read paused" to
 * stderr once it holds it).
 */
export function serveReads(open: (file: string) => Db, build: (db: Db) => ReadOps): void {
  const port = parentPort;
  if (!port) throw new Error('serveReads runs in a worker thread');
  const db = open((workerData as { file: string }).file);
  const ops = build(db);
  const crashMark = process.env.BACKLOT_TEST_CRASH_READ;
  const slow = /^(.+):(\d+)$/.exec(process.env.BACKLOT_TEST_SLOW_READ ?? '');
  const marked = (args: unknown[], mark: string) => JSON.stringify(args).includes(mark);

  port.on('message', ({ op, args }: { op: string; args: unknown[] }) => {
    let reply: Reply;
    try {
      const fn = ops[op];
      if (!fn) throw new Error(`unknown read operation ${op}`);
      if (crashMark && marked(args, crashMark)) process.exit(70);
      reply = {
        result: db.transaction(() => {
          if (slow && marked(args, slow[1]!)) {
            db.prepare('SELECT count(*) FROM sqlite_schema').get(); // takes the snapshot
            process.stderr.write('read paused\n');
            Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(slow[2]));
          }
          return fn(...args);
        })(),
      };
    } catch (err) {
      reply =
        err instanceof ApiError
          ? { apiError: { status: err.status, code: err.code, message: err.message, details: err.details } }
          : { failure: err instanceof Error ? (err.stack ?? err.message) : String(err) };
    }
    port.postMessage(reply);
  });
  port.postMessage({ ready: true, tid: threadId() });
}

/** This thread's kernel id (Linux), or null. */
function threadId(): number | null {
  try {
    return Number(readlinkSync('/proc/thread-self').split('/').pop());
  } catch {
    return null;
  }
}
