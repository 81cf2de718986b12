/**
 * `job_output` on the launcher's event channel: that a job wrote log lines,
 * with the newest line, so the launcher UI can tell a quiet job ("No output
 * for 30 s") from a working one without following every job's log stream.
 * At most one event per job per `intervalMs`: the first line after a quiet
 * spell goes out at once, later ones are folded into one event at the end of
 * the interval (so the last line a job wrote is always announced).
 */

export interface OutputNote {
  id: string;
  studio_id: string;
  /** The newest line's number and text (cut to 500 characters) and when it was written. */
  n: number;
  text: string;
  at: string;
}

const MAX_TEXT = 500;

export class OutputNotices {
  private readonly jobs = new Map<string, { sentAt: number; pending: OutputNote | null; timer: NodeJS.Timeout | null }>();

  constructor(
    private readonly send: (note: OutputNote) => void,
    private readonly intervalMs = 2000,
  ) {}

  /** Lines were written to a job's log: `n` and `text` of the newest one. */
  note(id: string, studioId: string, n: number, text: string, at: string): void {
    const note = { id, studio_id: studioId, n, text: text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text, at };
    const now = Date.now();
    let entry = this.jobs.get(id);
    if (!entry) {
      entry = { sentAt: 0, pending: null, timer: null };
      this.jobs.set(id, entry);
    }
    if (entry.timer === null && now - entry.sentAt >= this.intervalMs) {
      entry.sentAt = now;
      this.send(note);
      return;
    }
    entry.pending = note;
    if (entry.timer !== null) return;
    const e = entry;
    e.timer = setTimeout(() => {
      e.timer = null;
      if (e.pending) {
        e.sentAt = Date.now();
        this.send(e.pending);
        e.pending = null;
      }
    }, Math.max(0, this.intervalMs - (now - e.sentAt)));
    e.timer.unref();
  }

  /** The job finished: nothing more is sent for it (its `job` event says the rest). */
  forget(id: string): void {
    const entry = this.jobs.get(id);
    if (entry?.timer) clearTimeout(entry.timer);
    this.jobs.delete(id);
  }

  close(): void {
    for (const id of [...this.jobs.keys()]) this.forget(id);
  }
}
