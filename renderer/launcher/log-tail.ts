import { authHeaders } from '../lib/credential';
import { API } from '../lib/api';

/**
 * The end of a log, read once from its stream. A finished job's
 * (`GET /launcher/jobs/{id}/logs`) replays, sends `end` and closes. A
 * studio's own output (`GET /launcher/studios/{id}/logs`) never ends: for a
 * studio that is not running nothing more comes after the replay, so the read
 * stops once the stream has been quiet for `quietMs` (docs/api.md
 * "GET /launcher/studios/{id}/logs"). Only the last `keep` lines are held, so
 * a long log costs no memory; the step that was running when it ended is the
 * last `step` record. Used for the failure display of failed jobs and failed
 * studios (the last lines in place).
 */

export interface LogLine {
  n: number;
  text: string;
  step: string | null;
}

export interface LogTail {
  /** The last runner step that began (null for jobs without steps: tasks, exports). */
  step: string | null;
  lines: LogLine[];
  /** Lines in the whole log. */
  total: number;
}

/** One parsed `text/event-stream` frame. */
export interface SseFrame {
  event: string;
  data: string;
  id: string | null;
}

/** Splits a growing event-stream text into whole frames; returns them and the unfinished rest. */
export function parseFrames(buffer: string): { frames: SseFrame[]; rest: string } {
  const frames: SseFrame[] = [];
  const parts = buffer.split(/\r?\n\r?\n/);
  const rest = parts.pop() ?? '';
  for (const part of parts) {
    let event = 'message';
    let id: string | null = null;
    const data: string[] = [];
    for (const line of part.split(/\r?\n/)) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id') id = value;
    }
    if (data.length > 0) frames.push({ event, data: data.join('\n'), id });
  }
  return { frames, rest };
}

export function readLogTail(jobId: string, keep = 20, signal?: AbortSignal): Promise<LogTail> {
  return readStreamTail(`${API}/launcher/jobs/${encodeURIComponent(jobId)}/logs`, keep, { signal });
}

/** A studio's output: the replay up to a quiet moment (it has no `end`). */
export function readStudioTail(studioId: string, keep = 20): Promise<LogTail> {
  return readStreamTail(`${API}/launcher/studios/${encodeURIComponent(studioId)}/logs`, keep, { quietMs: 400 });
}

export async function readStreamTail(url: string, keep: number, o: { signal?: AbortSignal; quietMs?: number } = {}): Promise<LogTail> {
  const res = await fetch(url, {
    credentials: 'omit',
    headers: { Accept: 'text/event-stream', ...authHeaders() },
    signal: o.signal,
  });
  if (!res.ok || !res.body) throw new Error(`The log could not be read (HTTP ${res.status}).`);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  const tail: LogTail = { step: null, lines: [], total: 0 };
  let buffer = '';
  try {
    for (;;) {
      const next = reader.read();
      const { value, done } = o.quietMs === undefined ? await next : await Promise.race([next, quiet(o.quietMs)]);
      if (done) break;
      const { frames, rest } = parseFrames(buffer + value);
      buffer = rest;
      for (const f of frames) {
        if (f.event === 'step') tail.step = (JSON.parse(f.data) as { step: string }).step;
        else if (f.event === 'line') {
          const l = JSON.parse(f.data) as LogLine;
          tail.total = l.n;
          tail.lines.push({ n: l.n, text: l.text, step: l.step });
          if (tail.lines.length > keep) tail.lines.shift();
        } else if (f.event === 'end') return tail;
      }
    }
  } finally {
    void reader.cancel().catch(() => undefined);
  }
  return tail;
}

/** A read that resolves as done after `ms`: the stream said nothing more for that long. */
function quiet(ms: number): Promise<{ value: undefined; done: true }> {
  return new Promise((resolve) => setTimeout(() => resolve({ value: undefined, done: true }), ms));
}
