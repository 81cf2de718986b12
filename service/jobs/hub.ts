/**
 * The in-process event hub. Log records, job ends and channel events are
 * published here once, already framed as server-sent events, and every open
 * stream that subscribed writes the same bytes (one shared Buffer, so a
 * thousand listeners do not hold a thousand copies).
 *
 * - Log events are keyed by job id (`GET /jobs/{id}/logs` and the launcher's
 *   copy of it).
 * - Channel events carry the studio they concern: `GET /events` keeps its
 *   studio's; the launcher's `GET /launcher/events` may subscribe with
 *   `studioId: null` to hear every studio (and publish its own `studio` events).
 */

export type LogEvent =
  /**
   * Line or step records now in the log file (one append), each framed, and
   * `frame` all of them at once; `end` is the file offset after the last.
   */
  | { type: 'records'; items: { n: number | null; frame: string }[]; end: number; frame: Buffer }
  /** The job finished; every record is already in the file. */
  | { type: 'end'; frame: string };

export interface ChannelEvent {
  /** The studio whose channel carries it; null: the launcher's channel only. */
  studioId: string | null;
  frame: string;
  /** false: only the studio's own channel carries it, not the launcher's (which hears its own version of the news). */
  launcher?: false;
}

type Listener<E> = (event: E) => void;

export class JobHub {
  private readonly logs = new Map<string, Set<Listener<LogEvent>>>();
  private readonly channel = new Set<{ studioId: string | null; fn: Listener<ChannelEvent> }>();
  /** Open streams, ended when the service closes. */
  private readonly streams = new Map<() => void, () => number>();

  onLog(jobId: string, fn: Listener<LogEvent>): () => void {
    let set = this.logs.get(jobId);
    if (!set) this.logs.set(jobId, (set = new Set()));
    set.add(fn);
    return () => {
      const current = this.logs.get(jobId);
      if (!current) return;
      current.delete(fn);
      if (current.size === 0) this.logs.delete(jobId);
    };
  }

  publishLog(jobId: string, event: LogEvent): void {
    const set = this.logs.get(jobId);
    if (!set) return;
    for (const fn of [...set]) fn(event);
  }

  /** `studioId: null` hears every studio. */
  onChannel(studioId: string | null, fn: Listener<ChannelEvent>): () => void {
    const entry = { studioId, fn };
    this.channel.add(entry);
    return () => {
      this.channel.delete(entry);
    };
  }

  publishChannel(event: ChannelEvent): void {
    for (const entry of [...this.channel]) {
      const heard = entry.studioId === null ? event.launcher !== false : event.studioId !== null && entry.studioId === event.studioId;
      if (heard) entry.fn(event);
    }
  }

  /** Registers an open stream's closer and its unread byte count; returns the unregister function. */
  track(close: () => void, buffered: () => number): () => void {
    this.streams.set(close, buffered);
    return () => {
      this.streams.delete(close);
    };
  }

  /** Ends every open stream (service shutdown). */
  closeAll(): void {
    for (const close of [...this.streams.keys()]) close();
  }

  /** Subscriptions held right now (log listeners, channel listeners, open streams); for tests. */
  stats(): { logListeners: number; channelListeners: number; streams: number; maxBuffered: number } {
    let logListeners = 0;
    for (const set of this.logs.values()) logListeners += set.size;
    let maxBuffered = 0;
    for (const buffered of this.streams.values()) maxBuffered = Math.max(maxBuffered, buffered());
    return { logListeners, channelListeners: this.channel.size, streams: this.streams.size, maxBuffered };
  }
}
