import { closeSync, fstatSync, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { ensureDir } from '../core/files';

/**
 * One append-only log file per job, owned by the service, not the database
 * (docs/api.md "Logs"): `DIR/jobs/<job id>.log`, one JSON record
 * per line (JSON escapes newlines, so a record never spans two lines):
 *
 *   {"n":1,"text":"...","at":"2026-...Z","step":"install deps"}   a log line (n from 1)
 *   {"step":"install deps","index":0,"at":"2026-...Z"}            a step begins (runner jobs)
 *
 * Appends are synchronous writes to a file descriptor kept open while the job
 * is live, so a record is in the file before any listener hears of it, and a
 * reader that reaches the end of the file can switch to live events without
 * a gap. Records are not fsynced one by one: a crash may lose the last lines.
 */

/** A line longer than this many UTF-8 bytes: 400 through the API; the runner cuts it into pieces. */
export const MAX_LINE_BYTES = 16 * 1024;
/** A job's log file stops growing here: 413 through the API; the runner drops further output. */
export const MAX_LOG_BYTES = 64 * 1024 * 1024;

export interface LogStep {
  step: string;
  index: number;
  at: string;
}

/** A record as written: its JSON text, and the file offset just after it. */
export interface WrittenRecord {
  json: string;
  /** Line number for a line record, null for a step record. */
  n: number | null;
  end: number;
}

/**
 * Splits given texts into log lines: a text holding line breaks (`\n`,
 * `\r\n`, `\r`) becomes several lines, and one trailing break adds no empty
 * line. Pure.
 */
export function splitLines(texts: readonly string[]): string[] {
  const out: string[] = [];
  for (const text of texts) {
    const parts = text.split(/\r\n|\r|\n/);
    if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
    out.push(...parts);
  }
  return out;
}

/** Cuts a line into pieces of at most `max` UTF-8 bytes, never inside a character. Pure. */
export function cutLine(text: string, max = MAX_LINE_BYTES): string[] {
  if (Buffer.byteLength(text) <= max) return [text];
  const pieces: string[] = [];
  let piece = '';
  let bytes = 0;
  for (const ch of text) {
    const size = Buffer.byteLength(ch);
    if (bytes + size > max) {
      pieces.push(piece);
      piece = '';
      bytes = 0;
    }
    piece += ch;
    bytes += size;
  }
  pieces.push(piece);
  return pieces;
}

/**
 * Descriptors kept open at most (least recently used closed first): a studio
 * with many live task jobs cannot exhaust the process's file descriptors.
 */
const MAX_OPEN_LOGS = 256;
const MAX_COUNTED = 10_000;

interface OpenLog {
  fd: number;
  lines: number;
  bytes: number;
}

export class JobLogs {
  private readonly dir: string;
  private readonly open = new Map<string, OpenLog>();
  /** Line counts of logs closed in this process, so reopening one needs no rescan. */
  private readonly counted = new Map<string, { lines: number; bytes: number }>();

  constructor(dataDir: string) {
    this.dir = join(dataDir, 'jobs');
    ensureDir(this.dir);
  }

  path(jobId: string): string {
    return join(this.dir, `${jobId}.log`);
  }

  /** Lines and bytes written so far. */
  stats(jobId: string): { lines: number; bytes: number } {
    const log = this.handle(jobId);
    return { lines: log.lines, bytes: log.bytes };
  }

  appendLines(jobId: string, texts: readonly string[], step: string | null, at: string): WrittenRecord[] {
    const log = this.handle(jobId);
    const records: WrittenRecord[] = [];
    let chunk = '';
    let end = log.bytes;
    let n = log.lines;
    for (const text of texts) {
      n += 1;
      const json = JSON.stringify({ n, text, at, step });
      chunk += `${json}\n`;
      end += Buffer.byteLength(json) + 1;
      records.push({ json, n, end });
    }
    this.write(log, chunk);
    log.lines = n;
    return records;
  }

  appendStep(jobId: string, step: LogStep): WrittenRecord {
    const log = this.handle(jobId);
    const json = JSON.stringify({ step: step.step, index: step.index, at: step.at });
    this.write(log, `${json}\n`);
    return { json, n: null, end: log.bytes };
  }

  /** Closes the job's descriptor (the job finished); a later append reopens it. */
  release(jobId: string): void {
    const log = this.open.get(jobId);
    if (!log) return;
    this.open.delete(jobId);
    closeSync(log.fd);
    this.counted.delete(jobId);
    this.counted.set(jobId, { lines: log.lines, bytes: log.bytes });
    if (this.counted.size > MAX_COUNTED) this.counted.delete(this.counted.keys().next().value!);
  }

  closeAll(): void {
    for (const id of [...this.open.keys()]) this.release(id);
  }

  private write(log: OpenLog, text: string): void {
    const buf = Buffer.from(text);
    let done = 0;
    while (done < buf.length) done += writeSync(log.fd, buf, done, buf.length - done);
    log.bytes += buf.length;
  }

  /**
   * The open log of a job. Opening an existing file counts its lines once and
   * cuts a torn last record (a crash mid-write) so numbering continues.
   */
  private handle(jobId: string): OpenLog {
    const known = this.open.get(jobId);
    if (known) {
      // Most recently used last, so the first entry is the one to close.
      this.open.delete(jobId);
      this.open.set(jobId, known);
      return known;
    }
    if (this.open.size >= MAX_OPEN_LOGS) this.release(this.open.keys().next().value!);
    const fd = openSync(this.path(jobId), 'a+', 0o600);
    let bytes = fstatSync(fd).size;
    const counted = this.counted.get(jobId);
    if (counted && counted.bytes === bytes) {
      const log = { fd, lines: counted.lines, bytes };
      this.open.set(jobId, log);
      return log;
    }
    let lines = 0;
    if (bytes > 0) {
      const text = readFileSync(fd, 'utf8');
      const whole = text.lastIndexOf('\n') + 1;
      if (whole < text.length) {
        bytes = Buffer.byteLength(text.slice(0, whole));
        ftruncateSync(fd, bytes);
      }
      for (const record of text.slice(0, whole).split('\n')) {
        if (record.startsWith('{"n":')) lines += 1;
      }
    }
    const log = { fd, lines, bytes };
    this.open.set(jobId, log);
    return log;
  }
}

export interface ReadRecord {
  json: string;
  end: number;
}

/**
 * Reads whole records from `offset` onward, at most about `maxBytes` at a
 * time; an incomplete last record waits for the next read. Resolves with the
 * records and the offset after the last whole one.
 */
export async function readRecords(path: string, offset: number, maxBytes = 256 * 1024): Promise<{ records: ReadRecord[]; next: number }> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], next: offset };
    throw err;
  }
  try {
    const buf = Buffer.alloc(maxBytes);
    const records: ReadRecord[] = [];
    let next = offset;
    for (;;) {
      const { bytesRead } = await handle.read(buf, 0, maxBytes, next);
      if (bytesRead === 0) break;
      let start = 0;
      for (let i = buf.indexOf(10, 0); i !== -1 && i < bytesRead; i = buf.indexOf(10, start)) {
        records.push({ json: buf.toString('utf8', start, i), end: next + i + 1 });
        start = i + 1;
      }
      if (start === 0) {
        // One record longer than the buffer (cannot happen under MAX_LINE_BYTES); read it whole.
        if (bytesRead < maxBytes) break;
        return readRecords(path, offset, maxBytes * 4);
      }
      next += start;
      break;
    }
    return { records, next };
  } finally {
    await handle.close();
  }
}
