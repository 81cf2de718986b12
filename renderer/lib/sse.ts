import { authHeaders } from './credential';

/**
 * Server-sent events over fetch, with the launcher credential in the
 * `Authorization` header (EventSource cannot send headers, and the
 * credential is never a cookie: docs/security.md "The launcher credential").
 *
 * It behaves as EventSource does, so the pages' call sites stay as they were:
 * `open`, `error`, `message` and named events dispatched as MessageEvents
 * (`data`, `lastEventId`); `readyState` CONNECTING / OPEN / CLOSED. A dropped
 * connection is retried after `retry` ms (the server's `retry:` field, else
 * RETRY_MS) sending `Last-Event-ID`; an answer that is not a 200 event stream
 * (a 401 after a revocation, a 404) closes it for good (`status` says which).
 * The format: https://html.spec.whatwg.org/multipage/server-sent-events.html.
 */

const RETRY_MS = 3000;

export class EventStream extends EventTarget {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSED = 2;

  readyState: number = EventStream.CONNECTING;
  /** The HTTP status of the answer that closed the stream for good (0 while none did). */
  status = 0;
  private lastEventId = '';
  private retryMs = RETRY_MS;
  private abort: AbortController | null = null;
  private timer: number | null = null;

  constructor(readonly url: string) {
    super();
    void this.connect();
  }

  close(): void {
    this.readyState = EventStream.CLOSED;
    this.abort?.abort();
    this.abort = null;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private async connect(): Promise<void> {
    if (this.readyState === EventStream.CLOSED) return;
    const abort = new AbortController();
    this.abort = abort;
    const headers: Record<string, string> = { Accept: 'text/event-stream', ...authHeaders() };
    if (this.lastEventId) headers['Last-Event-ID'] = this.lastEventId;
    let res: Response;
    try {
      res = await fetch(this.url, { headers, cache: 'no-store', credentials: 'omit', signal: abort.signal });
    } catch {
      return this.retry(abort);
    }
    const type = res.headers.get('Content-Type') ?? '';
    if (res.status !== 200 || !/^text\/event-stream\b/i.test(type) || !res.body) {
      this.status = res.status;
      void res.body?.cancel().catch(() => {});
      this.readyState = EventStream.CLOSED;
      this.dispatchEvent(new Event('error'));
      return;
    }
    this.readyState = EventStream.OPEN;
    this.dispatchEvent(new Event('open'));
    try {
      await this.read(res.body, abort);
    } catch {
      // a dropped connection: retried below
    }
    this.retry(abort);
  }

  private retry(abort: AbortController): void {
    if (this.readyState === EventStream.CLOSED || abort.signal.aborted) return;
    this.readyState = EventStream.CONNECTING;
    this.dispatchEvent(new Event('error'));
    this.timer = window.setTimeout(() => {
      this.timer = null;
      void this.connect();
    }, this.retryMs);
  }

  private async read(body: ReadableStream<Uint8Array>, abort: AbortController): Promise<void> {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    let data: string[] = [];
    let event = '';
    let id: string | null = null;
    for (;;) {
      const { value, done } = await reader.read();
      if (done || abort.signal.aborted) return;
      buffer += decoder.decode(value, { stream: true });
      // Lines end with CRLF, LF or CR; a CR at the very end may be half of a CRLF.
      let m: RegExpExecArray | null;
      const line = /\r\n|\n|\r(?!$)/g;
      let start = 0;
      while ((m = line.exec(buffer)) !== null) {
        const text = buffer.slice(start, m.index);
        start = m.index + m[0].length;
        if (text === '') {
          if (id !== null) this.lastEventId = id;
          id = null;
          if (data.length > 0) {
            const name = event || 'message';
            this.dispatchEvent(new MessageEvent(name, { data: data.join('\n'), lastEventId: this.lastEventId }));
          }
          data = [];
          event = '';
          if (this.readyState === EventStream.CLOSED) return;
          continue;
        }
        if (text.startsWith(':')) continue;
        const colon = text.indexOf(':');
        const field = colon === -1 ? text : text.slice(0, colon);
        let v = colon === -1 ? '' : text.slice(colon + 1);
        if (v.startsWith(' ')) v = v.slice(1);
        if (field === 'data') data.push(v);
        else if (field === 'event') event = v;
        else if (field === 'id' && !v.includes('\0')) id = v;
        else if (field === 'retry' && /^\d+$/.test(v)) this.retryMs = Number(v);
      }
      buffer = buffer.slice(start);
    }
  }
}
