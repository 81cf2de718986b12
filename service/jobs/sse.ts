/**
 * Server-sent event framing (the WHATWG event-stream format). Pure: the hub
 * formats each event once and every listener writes the same text.
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
