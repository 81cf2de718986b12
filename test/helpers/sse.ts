import { request, type IncomingHttpHeaders, type IncomingMessage, type ClientRequest } from 'node:http';

/**
 * A real server-sent events client for tests: one HTTP connection, and a
 * parser that follows the WHATWG event-stream rules (fields `event`, `data`,
 * `id`, `retry`; `data` lines joined with "\n"; lines starting with ":" are
 * comments; a blank line dispatches; CRLF, LF and CR all end lines; one
 * leading space after the colon is dropped).
 */

export interface SseMessage {
  event: string;
  data: string;
  /** The last event id in effect when the event was dispatched. */
  id: string;
}

/** Incremental parser: feed chunks, get dispatched events and comments. */
export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private event = '';
  private lastId = '';
  private pendingCr = false;

  constructor(
    private readonly onEvent: (m: SseMessage) => void,
    private readonly onComment: (text: string) => void = () => {},
  ) {}

  feed(chunk: string): void {
    let text = chunk;
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = false;
    this.buffer += text;
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buffer);
      if (!m) break;
      // A CR at the very end may be the first half of CRLF.
      if (m[0] === '\r' && m.index === this.buffer.length - 1) {
        this.pendingCr = true;
      }
      const line = this.buffer.slice(0, m.index);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      this.line(line);
    }
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length > 0) this.onEvent({ event: this.event || 'message', data: this.data.join('\n'), id: this.lastId });
      this.data = [];
      this.event = '';
      return;
    }
    if (line.startsWith(':')) return this.onComment(line.slice(1).replace(/^ /, ''));
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.lastId = value;
  }
}

export interface SseConnection {
  status: number;
  headers: IncomingHttpHeaders;
  /** Every event so far, in order. */
  events: SseMessage[];
  comments: string[];
  /** The raw body when it was not an event stream (an error answer). */
  text(): string;
  /** Resolves once `count` events satisfy `match`; rejects after `timeoutMs`. */
  waitFor(match: (m: SseMessage) => boolean, count?: number, timeoutMs?: number): Promise<SseMessage[]>;
  waitForComment(match: (c: string) => boolean, timeoutMs?: number): Promise<void>;
  /** Resolves when the server ends the response. */
  closed: Promise<void>;
  /** Client-side disconnect. */
  close(): void;
  res: IncomingMessage;
  req: ClientRequest;
}

export function openSse(
  port: number,
  path: string,
  token: string | undefined,
  headers: Record<string, string> = {},
): Promise<SseConnection> {
  return new Promise((resolve, reject) => {
    const h: Record<string, string> = { Host: `127.0.0.1:${port}`, Accept: 'text/event-stream', ...headers };
    if (token) h.Authorization = `Bearer ${token}`;
    // Under /api/v1 unless the path starts with '!' (then the raw path, e.g. '!/editor/events').
    const req = request({ host: '127.0.0.1', port, path: path.startsWith('!') ? path.slice(1) : `/api/v1${path}`, headers: h, setHost: false });
    req.on('error', reject);
    req.on('response', (res) => {
      const events: SseMessage[] = [];
      const comments: string[] = [];
      let raw = '';
      const waiters = new Set<() => void>();
      const wake = () => {
        for (const w of [...waiters]) w();
      };
      const parser = new SseParser(
        (m) => {
          events.push(m);
          wake();
        },
        (c) => {
          comments.push(c);
          wake();
        },
      );
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (raw.length < 100_000) raw += chunk;
        parser.feed(chunk);
      });
      let isClosed = false;
      const closed = new Promise<void>((done) => {
        const end = () => {
          isClosed = true;
          wake();
          done();
        };
        res.on('end', end);
        res.on('close', end);
        res.on('error', end);
      });
      const wait = (ok: () => boolean, what: string, timeoutMs: number) =>
        new Promise<void>((done, fail) => {
          const check = () => {
            if (ok()) {
              cleanup();
              done();
            } else if (isClosed) {
              cleanup();
              fail(new Error(`stream closed while waiting for ${what}; events: ${JSON.stringify(events.slice(-5))}`));
            }
          };
          const timer = setTimeout(() => {
            cleanup();
            fail(new Error(`timed out waiting for ${what}; ${events.length} events, last: ${JSON.stringify(events.slice(-3))}`));
          }, timeoutMs);
          const cleanup = () => {
            clearTimeout(timer);
            waiters.delete(check);
          };
          waiters.add(check);
          check();
        });
      resolve({
        status: res.statusCode!,
        headers: res.headers,
        events,
        comments,
        text: () => raw,
        async waitFor(match, count = 1, timeoutMs = 15_000) {
          await wait(() => events.filter(match).length >= count, `${count} matching events`, timeoutMs);
          return events.filter(match);
        },
        waitForComment: (match, timeoutMs = 15_000) => wait(() => comments.some(match), 'a comment', timeoutMs),
        closed,
        close: () => {
          req.destroy();
          res.destroy();
        },
        res,
        req,
      });
    });
    req.end();
  });
}
