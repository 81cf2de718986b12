import { authHeaders } from '../lib/credential';
import { API } from '../lib/api';

/**
 * The end of a finished job's log, read once from its log stream
 * (`GET /launcher/jobs/{id}/logs`: replay, then `end`, then the server closes
 * it). Only the last `keep` lines are held, so a long log costs no memory;
 * the step that was running when the job ended is the last `step` record.
 * Used for the failure display of every failed job (last 20 lines in place).
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

export async function readLogTail(jobId: string, keep = 20, signal?: AbortSignal): Promise<LogTail> {
  const res = await fetch(`${API}/launcher/jobs/${encodeURIComponent(jobId)}/logs`, {
    credentials: 'omit',
    headers: { Accept: 'text/event-stream', ...authHeaders() },
    signal,
  });
  if (!res.ok || !res.body) throw new Error(`The log could not be read (HTTP ${res.status}).`);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  const tail: LogTail = { step: null, lines: [], total: 0 };
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
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
