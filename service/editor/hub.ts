import type { PassThrough } from 'node:stream';
import { ApiError } from '../core/errors';
import { formatEvent, openLiveStream, streamTuning, type LiveStream, type StreamTuning } from '../core/sse';
import { nowIso } from '../core/time';
import type { RevocationWatch } from '../core/revocation';

/**
 * The editor hub: the pages of the editor surface that are connected right
 * now (`GET /editor/events`), and what the service publishes to them.
 * `POST /timeline/{id}:open` (docs/api.md "Open `POST /timeline/{id}:open`")
 * publishes an `open` event here and answers 501 when no page was reached.
 *
 * Each event is framed once and written to every page. Nothing is replayed:
 * a page that connects later sees only later events. A page that falls more
 * than `highWater` bytes behind is dropped (core/sse.ts openLiveStream), so a
 * slow or dead page never makes the service hold more than that.
 */

export interface EditorHubOptions extends Partial<StreamTuning> {
  /** The port the service listens on; read when a URL is built (it is known only once listening). */
  port: () => number;
  /** Ends a page as soon as the service learns its credential was revoked (core/revocation.ts), not at its next heartbeat. */
  watch?: RevocationWatch;
}

/** The answer of `POST /timeline/{id}:open` (TimelineOpened in docs/api.md "Open `POST /timeline/{id}:open`"). */
export interface TimelineOpened {
  opened: true;
  surface: string;
}

export interface EditorHub {
  /**
   * Opens one page's stream (the reply body): a `hello` event, then every
   * published event and heartbeats. `valid` (default: always) says whether the
   * credential the page connected with is still live; it is asked before every
   * event and at every heartbeat, and a page whose credential was revoked gets
   * nothing more: its stream ends (revocation applies at once: docs/api.md "The launcher credential").
   */
  connect(valid?: () => boolean): PassThrough;
  /** Sends `event` with `data` (JSON) to every connected page; returns how many pages it was written to. */
  publish(event: string, data: unknown): number;
  /**
   * Publishes `open` with `{"timeline", "studio_id", "opened_at"}` and answers
   * TimelineOpened; 501 `unsupported` when no page is connected. `timeline`
   * is the Timeline as the API shows it, as an
   * object (not JSON text: it is serialised here, inside the event's data).
   */
  openTimeline(timeline: Record<string, unknown>, studioId: string): TimelineOpened;
  /**
   * Whether a sequence is open on the editor surface: its studio's `:open`
   * reached a page while this service runs (docs/api.md "Launcher-side reads
   * and edits", "The opened sequence"). The launcher's `/launcher/timeline/{id}` routes
   * reach only these. The newest MAX_OPENED are remembered.
   */
  isOpen(timelineId: string): boolean;
  /**
   * Calls `listener` after every `:open` that reached a page (the desktop shell
   * shows its editor window then). Returns the function that removes it. A
   * listener that throws is logged and does not fail the `:open`.
   */
  onOpen(listener: (opened: { timelineId: string; studioId: string }) => void): () => void;
  /** Pages connected right now. */
  connected(): number;
  /** The editor page: `http://127.0.0.1:PORT/editor/`. */
  surfaceUrl(): string;
  /** Service shutdown: every stream ends (what is buffered is still sent); later connects end at once. */
  close(): void;
}

/** Sequences remembered as open; past this, the one opened longest ago is forgotten. */
export const MAX_OPENED = 1000;

/** Event names are ours, never input; a bad one would break the stream's framing. */
const EVENT_NAME = /^[a-z][a-z0-9_.-]{0,63}$/;

/** The 501 message of `:open` when no page is connected. */
export function noEditorMessage(surface: string): string {
  return `No editor page is connected: open the editor surface (${surface}) first.`;
}

export function createEditorHub(options: EditorHubOptions): EditorHub {
  const tuning = streamTuning(options);
  /** Each connected page and the check of its credential. */
  const pages = new Map<LiveStream, () => boolean>();
  /** Ids of the sequences opened, oldest first (a Set keeps insertion order). */
  const opened = new Set<string>();
  const openListeners = new Set<(opened: { timelineId: string; studioId: string }) => void>();
  let closed = false;

  const frame = (event: string, data: unknown): string => {
    if (!EVENT_NAME.test(event)) throw new TypeError(`Not an event name: ${JSON.stringify(event)}`);
    return formatEvent({ event, data: JSON.stringify(data) });
  };

  const publish = (event: string, data: unknown): number => {
    const text = frame(event, data);
    let reached = 0;
    for (const [page, valid] of [...pages]) {
      if (!valid()) {
        page.end(); // revoked: nothing more is written to it
        pages.delete(page);
      } else if (page.send(text)) reached++;
      else pages.delete(page); // dropped for falling behind (its 'close' comes later)
    }
    return reached;
  };

  const surfaceUrl = () => `http://127.0.0.1:${options.port()}/editor/`;

  return {
    connect(given) {
      const valid = given ?? (() => true);
      const watch = given && options.watch;
      const page = openLiveStream({ ...tuning, opening: 'editor', valid, watch, onClose: () => pages.delete(page) });
      page.send(frame('hello', { connected_at: nowIso() }));
      if (closed) page.end();
      else pages.set(page, valid);
      return page.body;
    },

    publish,

    openTimeline(timeline, studioId) {
      const reached = publish('open', { timeline, studio_id: studioId, opened_at: nowIso() });
      if (reached === 0) throw ApiError.unsupported(noEditorMessage(surfaceUrl()));
      if (typeof timeline.id === 'string') {
        opened.delete(timeline.id); // re-opened: the newest again
        opened.add(timeline.id);
        if (opened.size > MAX_OPENED) opened.delete(opened.values().next().value!);
      }
      const event = { timelineId: String(timeline.id), studioId };
      for (const listener of [...openListeners]) {
        try {
          listener(event);
        } catch (err) {
          console.error('An editor open listener failed:', err);
        }
      }
      return { opened: true, surface: surfaceUrl() };
    },

    isOpen: (timelineId) => opened.has(timelineId),
    onOpen(listener) {
      openListeners.add(listener);
      return () => openListeners.delete(listener);
    },

    connected: () => pages.size,
    surfaceUrl,

    close() {
      closed = true;
      for (const page of [...pages.keys()]) page.end();
      pages.clear();
    },
  };
}
