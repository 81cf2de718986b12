import { closeSync, openSync, statSync, writeSync } from 'node:fs';
import { open, rename, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ensureDir } from './files';

/**
 * The app's own log file, `DIR/logs/backlot.log`: what the desktop app's main
 * process (the shell and the service in it) prints, and `serve`'s output with
 * `--log-file`. Rotated by size: past `limit` bytes the file becomes
 * backlot.log.1, the older ones move up to .2 and .3, the oldest goes.
 *
 * Writes never wait on the disk: lines are queued in memory and one drain loop
 * appends them with async I/O, so the serving thread only pays a string copy.
 * When the disk falls far behind, lines past `maxQueued` bytes are dropped and
 * the drop is written in their place. `flushSync` writes what is queued at exit.
 */

export const LOG_DIR = 'logs';
export const LOG_FILE = 'backlot.log';
const MiB = 1024 * 1024;

export interface LogFileOptions {
  /** Bytes a file may reach before it is rotated (default 5 MiB). */
  limit?: number;
  /** Rotated files kept: backlot.log.1 .. .keep (default 3). */
  keep?: number;
  /** Queued bytes beyond which new lines are dropped (default 1 MiB). */
  maxQueued?: number;
}

/** The log file of a data dir. */
export function logFilePath(dataDir: string): string {
  return join(dataDir, LOG_DIR, LOG_FILE);
}

/** Pure: whether `incoming` bytes onto a file of `size` bytes rotate it first. An empty file takes any write. */
export function needsRotation(size: number, incoming: number, limit: number): boolean {
  return size > 0 && size + incoming > limit;
}

/**
 * Pure: the renames of one rotation, in order: the oldest kept file is
 * replaced by the one below it, and so on down to the live file becoming `.1`.
 */
export function rotationRenames(file: string, keep: number): Array<[from: string, to: string]> {
  const renames: Array<[string, string]> = [];
  for (let n = keep - 1; n >= 1; n--) renames.push([`${file}.${n}`, `${file}.${n + 1}`]);
  if (keep >= 1) renames.push([file, `${file}.1`]);
  return renames;
}

/** Pure: `text` with each line that starts in it prefixed by `stamp`; `atLineStart` says whether the previous text ended a line. */
export function stampLines(text: string, stamp: string, atLineStart: boolean): { text: string; atLineStart: boolean } {
  if (text === '') return { text, atLineStart };
  const lines = text.split('\n');
  const out = lines.map((line, i) => ((i === 0 ? atLineStart : true) && (line !== '' || i < lines.length - 1) ? stamp + line : line));
  return { text: out.join('\n'), atLineStart: text.endsWith('\n') };
}

export interface LogFile {
  readonly path: string;
  /** Queues text (whole or partial lines); never throws, never waits. */
  write(text: string): void;
  /** Resolves once everything queued before the call is on disk. */
  flush(): Promise<void>;
  /** At exit: writes what is queued and in flight, synchronously; the log takes nothing more. */
  flushSync(): void;
  close(): Promise<void>;
}

export function openLogFile(path: string, options: LogFileOptions = {}): LogFile {
  const limit = options.limit ?? 5 * MiB;
  const keep = options.keep ?? 3;
  const maxQueued = options.maxQueued ?? MiB;
  ensureDir(dirname(path));
  let size = 0;
  try {
    size = statSync(path).size;
  } catch {
    // a new file
  }
  let queue: string[] = [];
  let queued = 0;
  let dropped = 0;
  let handle: FileHandle | null = null;
  let draining: Promise<void> | null = null;
  /** The batch the drain took and has not written yet. */
  let inFlight: Buffer | null = null;
  let closed = false;

  /** The queued text that fits in the current file (at least one chunk), as bytes. */
  const nextBatch = (): Buffer => {
    const parts: string[] = [];
    let bytes = 0;
    let taken = 0;
    for (; taken < queue.length; taken++) {
      const n = Buffer.byteLength(queue[taken]!);
      if (taken > 0 && needsRotation(size + bytes, n, limit)) break;
      parts.push(queue[taken]!);
      bytes += n;
    }
    queue = queue.slice(taken);
    queued -= parts.reduce((sum, p) => sum + p.length, 0);
    if (queue.length === 0 && dropped > 0) {
      queue.push(`[log] ${dropped} bytes of log dropped: the disk fell behind\n`);
      dropped = 0;
    }
    return Buffer.from(parts.join(''), 'utf8');
  };

  const rotate = async () => {
    await handle?.close();
    handle = null;
    for (const [from, to] of rotationRenames(path, keep)) {
      await rename(from, to).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      });
    }
    size = 0;
  };

  const drain = async () => {
    while (queue.length > 0 && !closed) {
      const bytes = nextBatch();
      inFlight = bytes;
      try {
        if (needsRotation(size, bytes.length, limit)) await rotate();
        handle ??= await open(path, 'a', 0o600);
        // flushSync (at exit) may have written this batch meanwhile.
        if (inFlight !== bytes) break;
        inFlight = null; // issued: flushSync leaves it to the disk
        await handle.write(bytes);
        size += bytes.length;
      } catch {
        // A log that cannot be written must not take the app down; the lines are lost.
        await handle?.close().catch(() => undefined);
        handle = null;
      }
      inFlight = null;
    }
    draining = null;
  };

  return {
    path,
    write(text) {
      if (closed || text === '') return;
      if (queued + text.length > maxQueued) {
        dropped += Buffer.byteLength(text);
        return;
      }
      queue.push(text);
      queued += text.length;
      draining ??= drain();
    },
    async flush() {
      while (draining) await draining;
    },
    flushSync() {
      const bytes = Buffer.concat([inFlight ?? Buffer.alloc(0), Buffer.from(queue.join(''), 'utf8')]);
      inFlight = null;
      queue = [];
      queued = 0;
      closed = true;
      if (bytes.length === 0) return;
      try {
        const fd = openSync(path, 'a', 0o600);
        try {
          writeSync(fd, bytes);
        } finally {
          closeSync(fd);
        }
      } catch {
        // as in drain
      }
    },
    async close() {
      while (draining) await draining;
      closed = true;
      await handle?.close();
      handle = null;
    },
  };
}

type Write = typeof process.stdout.write;

/**
 * Copies everything the process prints (console.*, which goes through these
 * streams, and direct writes such as the access log) into `log`, each line
 * stamped with the time. The streams keep printing as before; an error on them
 * (no terminal behind a packaged app) is ignored, since the file is the record.
 * Returns the function that undoes it.
 */
export function captureOutput(log: LogFile, streams: NodeJS.WriteStream[] = [process.stdout, process.stderr]): () => void {
  const undo: Array<() => void> = [];
  for (const stream of streams) {
    const original = stream.write;
    let atLineStart = true;
    const ignore = () => undefined;
    stream.on('error', ignore);
    const tee = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]): boolean {
      const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) || chunk instanceof Uint8Array ? Buffer.from(chunk).toString('utf8') : '';
      const stamped = stampLines(text, `${new Date().toISOString()} `, atLineStart);
      atLineStart = stamped.atLineStart;
      log.write(stamped.text);
      try {
        return (original as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
      } catch {
        return true;
      }
    } as Write;
    stream.write = tee;
    undo.push(() => {
      stream.write = original;
      stream.off('error', ignore);
    });
  }
  return () => undo.forEach((fn) => fn());
}
