import { statSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import type { JobHub, LogEvent } from './hub';
import { readRecords } from './logs';
import { formatComment, formatEvent, openLiveStream, type StreamTuning } from '../core/sse';
import type { RevocationWatch } from '../core/revocation';

/**
 * The credential a stream was opened with: `valid` says whether it is still
 * live (asked before each event, and by the watch after a revocation); a
 * stream whose credential is revoked ends and gets nothing more.
 */
export interface StreamCredential {
  valid: () => boolean;
  watch: RevocationWatch;
}

/** A failed lookup counts as revoked. */
function stillValid(credential: StreamCredential | undefined): boolean {
  if (!credential) return true;
  try {
    return credential.valid();
  } catch {
    return false;
  }
}

/**
 * The two event streams. Each is a PassThrough handed to Koa as the reply
 * body; Koa destroys it when the client goes away, and its 'close' frees
 * everything the stream held (hub subscription, heartbeat timer, file reads).
 */

/**
 * The event frame of a log record, as written (live) or read back from the
 * file (replay): a line, whose number is its event id, or a step (n null).
 */
export function recordFrame(json: string, n: number | null = lineNumberOf(json)): { n: number | null; frame: string } {
  return n === null
    ? { n, frame: formatEvent({ event: 'step', data: json }) }
    : { n, frame: formatEvent({ event: 'line', id: n, data: json }) };
}

/** A line record's number, read from its first member (logs.ts writes `{"n":N,...}`) without parsing the rest. */
function lineNumberOf(json: string): number | null {
  const m = /^\{"n":(\d+),/.exec(json);
  return m ? Number(m[1]) : null;
}

export interface LogStreamOptions extends StreamTuning {
  jobId: string;
  logPath: string;
  /** Resume after this line number (`Last-Event-ID`), 0 for the whole log. */
  after: number;
  hub: JobHub;
  /** The `end` frame when the job has finished, else null; read when the file is caught up. */
  endFrame: () => string | null;
  /** A studio's stream: ends when its token is revoked. */
  credential?: StreamCredential;
}

/**
 * `GET /jobs/{id}/logs`: replay from the file, then live.
 *
 * The stream is always in one of three modes:
 * - `catching-up`: reading the file from `offset`; live events are ignored,
 *   because every record is in the file before it is published. At the end of
 *   the file the size is checked synchronously and the mode becomes `live` in
 *   the same tick, so no record falls between the file and the live events.
 * - `live`: records from the hub are written as they come.
 * - `paused`: the client has more than `highWater` bytes unread; nothing more
 *   is buffered for it. When it drains, the stream catches up from the file.
 *   A slow client thus costs at most `highWater` plus one read of memory, and
 *   misses nothing.
 * `end` is written once, when the job has finished and the file is caught up,
 * and the stream then closes.
 */
export function openLogStream(o: LogStreamOptions): PassThrough {
  const out = new PassThrough();
  let mode: 'catching-up' | 'live' | 'paused' | 'closed' = 'catching-up';
  let offset = 0;
  let skipping = o.after > 0;

  /** The frames of records in order, leaving out those up to line `after` on a resume. */
  const pick = (items: readonly { n: number | null; frame: string }[]): string => {
    let text = '';
    for (const { n, frame } of items) {
      if (skipping) {
        if (n !== null && n >= o.after) skipping = false;
        continue;
      }
      text += frame;
    }
    return text;
  };
  const resume = (): void => {
    if (mode === 'paused') void catchUp().catch((err: unknown) => out.destroy(err as Error));
  };

  const finish = (frame: string): void => {
    if (mode === 'closed') return;
    mode = 'closed';
    out.end(frame);
  };

  let stalledAt = -1;
  const catchUp = async (): Promise<void> => {
    mode = 'catching-up';
    for (;;) {
      const { records, next } = await readRecords(o.logPath, offset);
      if ((mode as string) === 'closed') return;
      const text = pick(records.map((r) => recordFrame(r.json)));
      if (text !== '') out.write(text);
      offset = next;
      if (records.length === 0) {
        // The read ran on another thread: records appended since are only
        // seen by a synchronous size check, in the same tick as the switch to live.
        // A size that stays past the last whole record is a tail torn by a crash: done.
        const size = fileSize(o.logPath);
        if (size > offset && size !== stalledAt) {
          stalledAt = size;
          continue;
        }
        const end = o.endFrame();
        if (end !== null) return finish(end);
        mode = 'live';
        return;
      }
      if (out.writableLength > o.highWater && out.writableNeedDrain) {
        mode = 'paused';
        return;
      }
    }
  };

  const revoked = (): void => {
    if (mode === 'closed') return;
    mode = 'closed';
    out.end();
  };

  const onEvent = (e: LogEvent): void => {
    if (mode !== 'live') return;
    if (!stillValid(o.credential)) return revoked();
    if (e.type === 'end') return finish(e.frame);
    if (e.end <= offset) return;
    // Over the mark, the client reads these records from the file once it drains.
    if (out.writableLength + e.frame.length > o.highWater) {
      mode = 'paused';
      // 'drain' comes only after a write that returned false; otherwise read on now.
      if (!out.writableNeedDrain) resume();
      return;
    }
    offset = e.end;
    const chunk = skipping ? pick(e.items) : e.frame;
    if (chunk.length > 0) out.write(chunk);
  };

  const unsubscribe = o.hub.onLog(o.jobId, onEvent);
  const unwatch = o.credential ? o.credential.watch.watch(o.credential.valid, revoked) : () => {};
  const untrack = o.hub.track(() => {
    if (mode !== 'closed') {
      mode = 'closed';
      out.end();
    }
  }, () => out.writableLength + out.readableLength);
  const heartbeat = setInterval(() => {
    if (mode !== 'closed' && out.writableLength <= o.highWater) out.write(formatComment('heartbeat'));
  }, o.heartbeatMs);
  heartbeat.unref();
  out.on('drain', resume);
  out.once('close', () => {
    mode = 'closed';
    clearInterval(heartbeat);
    unsubscribe();
    untrack();
    unwatch();
  });

  out.write(formatComment('log stream'));
  void catchUp().catch((err: unknown) => out.destroy(err as Error));
  return out;
}

export interface ChannelStreamOptions extends StreamTuning {
  /** The studio whose events are sent; null for every studio (the launcher). */
  studioId: string | null;
  hub: JobHub;
  /** A studio's stream: ends when its token is revoked. */
  credential?: StreamCredential;
}

/**
 * `GET /events`: live channel events only, nothing replayed. A client that
 * falls more than `highWater` bytes behind is disconnected (an EventSource
 * reconnects by itself and should re-read `GET /jobs`), so nothing is
 * buffered without bound (core/sse.ts openLiveStream).
 */
export function openChannelStream(o: ChannelStreamOptions): PassThrough {
  const stream = openLiveStream({
    ...o,
    valid: o.credential && (() => stillValid(o.credential)),
    watch: o.credential?.watch,
    opening: 'events',
    onClose: () => {
      unsubscribe();
      untrack();
    },
  });
  const unsubscribe = o.hub.onChannel(o.studioId, (e) => {
    if (stillValid(o.credential)) stream.send(e.frame);
    else stream.end();
  });
  // Service shutdown: what is buffered is still sent.
  const untrack = o.hub.track(() => stream.end(), stream.buffered);
  return stream.body;
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
