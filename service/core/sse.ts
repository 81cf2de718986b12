import { PassThrough } from 'node:stream';
import type { RevocationWatch } from './revocation';

/**
 * Server-sent events (the WHATWG event-stream format): framing, which is
 * pure (a hub formats each event once and every listener writes the same
 * text), the tuning every stream shares, and the live broadcast stream the
 * jobs channel and the editor channel are built on.
 */

export interface SseEvent {
  event: string;
  /** Sent as `id:`; the client's `Last-Event-ID` on reconnect. */
  id?: string | number;
  /** One `data:` field per line of the text. */
  data: string;
}

export function formatEvent(e: SseEvent): string {
  let out = `event: ${e.event}\n`;
  if (e.id !== undefined) out += `id: ${e.id}\n`;
  for (const line of e.data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
  return `${out}\n`;
}

/** A comment line (ignored by clients): heartbeats and the opening line. */
export function formatComment(text: string): string {
  return `: ${text.replace(/[\r\n]+/g, ' ')}\n\n`;
}

/**
 * `Last-Event-ID` as a line number to resume after, or 0 (from the start) for
 * anything that is not a non-negative integer.
 */
export function parseLastEventId(header: string | undefined): number {
  if (header === undefined || !/^[0-9]{1,15}$/.test(header.trim())) return 0;
  return Number(header.trim());
}

export interface StreamTuning {
  /** A comment is sent this often so proxies and clients see the stream alive (at most 15 s apart: docs/api.md "Logs"). */
  heartbeatMs: number;
  /** Bytes a client may have unread before its stream stops writing to it (paused or dropped). */
  highWater: number;
}

/**
 * The tuning of every event stream of a service: 15 s heartbeats (or
 * `BACKLOT_SSE_HEARTBEAT_MS`, for tests) and 1 MiB of unread bytes per client,
 * unless given.
 */
export function streamTuning(given: Partial<StreamTuning> = {}, env: NodeJS.ProcessEnv = process.env): StreamTuning {
  const envHeartbeat = Number(env.BACKLOT_SSE_HEARTBEAT_MS);
  return {
    heartbeatMs: given.heartbeatMs ?? (envHeartbeat > 0 ? envHeartbeat : 15_000),
    highWater: given.highWater ?? 1024 * 1024,
  };
}

export interface LiveStream {
  /** The reply body (Koa pipes it and destroys it when the client goes away). */
  body: PassThrough;
  /**
   * Writes a frame. A client that has bytes unread and would be left with
   * more than `highWater` is dropped instead: the body is destroyed, which
   * makes Koa close the connection (an EventSource reconnects by itself). So
   * a client holds at most `highWater` bytes, or one frame when that frame
   * alone is larger (it still reaches a client that has read everything).
   * False when the frame was not delivered because the stream is closed or
   * was just dropped.
   */
  send(frame: string | Buffer): boolean;
  /** Ends the stream once what is buffered is sent (service shutdown). */
  end(): void;
  /** Bytes written and not yet read by the client. */
  buffered(): number;
  isClosed(): boolean;
}

export interface LiveStreamOptions extends StreamTuning {
  /** The comment written first, so the client and any proxy see the stream open at once. */
  opening: string;
  /** Called once when the stream closes for any reason: free what it holds (subscriptions). */
  onClose?: () => void;
  /**
   * Asked at every heartbeat: false ends the stream (the credential it was
   * opened with has been revoked since), so a quiet stream does not outlive it.
   */
  valid?: () => boolean;
  /** With `valid`: the stream is also ended as soon as the watch learns of a revocation (core/revocation.ts). */
  watch?: RevocationWatch;
}

/**
 * A live event stream: nothing replayed, heartbeats, and a bound on what a
 * slow or dead client can make the service hold (`highWater`, or one larger frame).
 */
export function openLiveStream(o: LiveStreamOptions): LiveStream {
  const body = new PassThrough();
  let closed = false;
  const buffered = () => body.writableLength + body.readableLength;
  const send = (frame: string | Buffer): boolean => {
    if (closed) return false;
    // A frame goes out when it fits under the mark, or when the client has
    // read everything (so one frame larger than the mark, a big sequence,
    // still reaches a client that reads). Not end(): that would wait behind
    // the data the client does not read.
    const waiting = buffered();
    if (waiting > 0 && waiting + Buffer.byteLength(frame) > o.highWater) {
      closed = true;
      body.destroy();
      return false;
    }
    body.write(frame);
    return true;
  };
  const end = () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    body.end();
  };
  const heartbeat = setInterval(() => {
    if (o.valid && !o.valid()) end();
    else send(formatComment('heartbeat'));
  }, o.heartbeatMs);
  heartbeat.unref();
  const unwatch = o.valid && o.watch ? o.watch.watch(o.valid, end) : () => {};
  body.once('close', () => {
    closed = true;
    clearInterval(heartbeat);
    unwatch();
    o.onClose?.();
  });
  body.write(formatComment(o.opening));
  return {
    body,
    send,
    end,
    buffered,
    isClosed: () => closed,
  };
}
