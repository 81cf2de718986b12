import { API } from '../lib/api';
import { h } from '../lib/dom';
import { EventStream } from '../lib/sse';

/**
 * A job's live log, or a studio's console: the job log stream
 * (`GET /api/v1/launcher/jobs/{id}/logs`, or a studio's own output at
 * `GET /api/v1/launcher/studios/{id}/logs`, the same format without `end`)
 * through an EventStream (lib/sse.ts:
 * EventSource's behaviour, with the launcher credential's header), which
 * replays the log, then follows it; after a dropped connection it reconnects
 * by itself sending `Last-Event-ID` (the number of the last line it got), and
 * the service resumes after that line. Lines are also kept by number here, so
 * a line is never shown twice whatever a reconnect replays.
 *
 * - Step headers are headings (`h4`) between the lines.
 * - Auto-scroll follows the newest line while the view is at its bottom; when
 *   the person scrolls up it stops and a "Jump to latest" button appears;
 *   scrolling back to the bottom (or the button) resumes it.
 * - The view holds at most MAX_LINES lines: older ones leave the page (and a
 *   note says how many), so a chatty build cannot grow the page without end.
 * - The log is a labelled region, not a live region: a busy log would be read
 *   out line by line. The job's row says its state.
 */

const MAX_LINES = 5000;
/** How close to the bottom (px) counts as "at the bottom". */
const BOTTOM_SLACK = 8;

export interface JobLogEvents {
  /** A line arrived (any line: for the stall notice). */
  onLine?(text: string): void;
  /** The stream ended (`end` event): the job finished and every line was sent. */
  onEnd?(state: string): void;
}

/** Which log a view reads: its stream's URL, and how a `step` record is headed. */
export interface LogSource {
  url: string;
  stepTitle(step: { step: string; index: number }): string;
}

export function jobLogSource(jobId: string): LogSource {
  return { url: `${API}/launcher/jobs/${encodeURIComponent(jobId)}/logs`, stepTitle: (s) => `Step ${s.index + 1}: ${s.step}` };
}

/** A studio's console: each start of its server begins a section ("start 1.0.0 on port …"). */
export function studioLogSource(studioId: string): LogSource {
  return { url: `${API}/launcher/studios/${encodeURIComponent(studioId)}/logs`, stepTitle: (s) => s.step };
}

export class JobLogView {
  readonly element: HTMLElement;
  private readonly scroller: HTMLDivElement;
  private readonly body: HTMLDivElement;
  private readonly jump: HTMLButtonElement;
  private readonly status: HTMLParagraphElement;
  private readonly dropped: HTMLParagraphElement;
  private source: EventStream | null = null;
  private lastN = 0;
  private shown = 0;
  private droppedCount = 0;
  private follow = true;
  private ended = false;

  constructor(
    readonly jobId: string,
    title: string,
    private readonly events: JobLogEvents = {},
    private readonly log: LogSource = jobLogSource(jobId),
  ) {
    this.body = h('div', { class: 'log-body' });
    this.dropped = h('p', { class: 'log-dropped muted', hidden: true });
    this.scroller = h(
      'div',
      { class: 'log', role: 'region', 'aria-label': `Log of ${title}`, tabindex: 0, 'data-log': jobId },
      this.dropped,
      this.body,
    );
    this.jump = h('button', { type: 'button', class: 'jump', hidden: true }, 'Jump to latest ↓');
    this.jump.addEventListener('click', () => {
      this.follow = true;
      this.toBottom();
    });
    this.status = h('p', { class: 'log-status muted', 'aria-live': 'polite' }, 'Connecting…');
    this.scroller.addEventListener('scroll', () => {
      const atBottom = this.scroller.scrollTop + this.scroller.clientHeight >= this.scroller.scrollHeight - BOTTOM_SLACK;
      this.follow = atBottom;
      this.jump.hidden = atBottom;
      this.element.dataset.follow = String(atBottom);
    });
    this.element = h('div', { class: 'log-view', 'data-follow': 'true' }, this.status, h('div', { class: 'log-wrap' }, this.scroller, this.jump));
  }

  open(): void {
    if (this.source) return;
    const es = new EventStream(this.log.url);
    this.source = es;
    es.addEventListener('open', () => {
      if (!this.ended) this.setStatus('Live', 'live');
    });
    es.addEventListener('error', () => {
      // The stream retries by itself (with Last-Event-ID) unless the answer was not a stream.
      if (this.ended) return;
      this.setStatus(es.readyState === EventStream.CLOSED ? 'The log stream closed.' : 'Connection lost: reconnecting…', 'reconnecting');
    });
    es.addEventListener('step', (e) => {
      const s = JSON.parse((e as MessageEvent<string>).data) as { step: string; index: number };
      // A reconnect resends no step that began before the last line it got (api.md §Log stream).
      this.append(h('h4', { class: 'log-step', 'data-index': s.index }, this.log.stepTitle(s)));
    });
    es.addEventListener('line', (e) => {
      const l = JSON.parse((e as MessageEvent<string>).data) as { n: number; text: string };
      if (l.n <= this.lastN) return;
      this.lastN = l.n;
      this.append(h('div', { class: 'log-line', 'data-n': l.n }, h('span', { class: 'n', 'aria-hidden': 'true' }, l.n), l.text));
      this.events.onLine?.(l.text);
    });
    es.addEventListener('end', (e) => {
      const end = JSON.parse((e as MessageEvent<string>).data) as { state: string };
      this.ended = true;
      es.close(); // the server closes the stream after `end`; without this the stream would reconnect
      this.setStatus(`Finished: ${end.state}. ${this.lastN} line${this.lastN === 1 ? '' : 's'}.`, 'ended');
      this.events.onEnd?.(end.state);
    });
  }

  close(): void {
    this.source?.close();
    this.source = null;
  }

  /** Keyboard users reach the log itself (it scrolls with the arrow keys). */
  focus(options?: FocusOptions): void {
    this.scroller.focus(options);
  }

  private setStatus(text: string, state: string): void {
    this.status.textContent = text;
    this.element.dataset.stream = state;
  }

  private append(node: HTMLElement): void {
    this.body.append(node);
    if (node.classList.contains('log-line')) this.shown += 1;
    while (this.shown > MAX_LINES) {
      const first = this.body.firstElementChild;
      if (!first) break;
      if (first.classList.contains('log-line')) {
        this.shown -= 1;
        this.droppedCount += 1;
      }
      first.remove();
    }
    if (this.droppedCount > 0) {
      this.dropped.hidden = false;
      this.dropped.textContent = `${this.droppedCount} earlier line${this.droppedCount === 1 ? '' : 's'} not shown (the view keeps the last ${MAX_LINES}).`;
    }
    if (this.follow) this.toBottom();
  }

  private toBottom(): void {
    this.scroller.scrollTop = this.scroller.scrollHeight;
    this.jump.hidden = true;
    this.element.dataset.follow = 'true';
  }
}
