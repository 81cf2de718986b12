import type { Readable } from 'node:stream';

/**
 * Open streams end when the credential they were opened with is revoked (a
 * revocation applies at once; docs/security.md "Hostile studios: bounds" and
 * "The launcher credential"). One watch per service holds every open event
 * stream (jobs' `/events` and log streams, the editor channel, and the
 * launcher's `/launcher/events` and log streams, whose launcher credential is
 * checked: `backlot launcher-token --revoke-all` ends them) with the check of
 * its credential and the way to end it, and asks them all:
 * - at once after a revocation in this process (`recheck`: the launcher's
 *   stop, an uninstall), in the next turn of the event loop so that a
 *   revocation rolled back with its transaction ends nothing;
 * - every `pollMs` while any stream is open, when `changedElsewhere` says
 *   another connection wrote to the database (`PRAGMA data_version`: the CLI's
 *   `token revoke` and `launcher-token --revoke-all` run in another process), so a quiet stream does not wait
 *   for its heartbeat.
 * A stream also checks before each event it writes (see its module), so a
 * revoked credential never receives an event published after the revocation.
 */

export interface RevocationWatch {
  /** Registers an open stream; returns the function that forgets it (call it when the stream closes). */
  watch(valid: () => boolean, end: () => void): () => void;
  /** Asks every open stream soon (this turn's revocations are committed by then). */
  recheck(): void;
  /** Streams watched right now (tests). */
  size(): number;
  close(): void;
}

export function createRevocationWatch(o: { changedElsewhere: () => boolean; pollMs?: number }): RevocationWatch {
  const pollMs = o.pollMs ?? 500;
  const streams = new Map<() => void, () => boolean>();
  let timer: NodeJS.Timeout | null = null;
  let pending = false;

  const check = (): void => {
    for (const [end, valid] of [...streams]) {
      let live = false;
      try {
        live = valid();
      } catch {
        live = false; // a failed lookup counts as revoked, as in the editor channel
      }
      if (!live) {
        streams.delete(end);
        end();
      }
    }
    if (streams.size === 0) stopPolling();
  };
  const stopPolling = (): void => {
    if (timer !== null) clearInterval(timer);
    timer = null;
  };

  return {
    watch(valid, end) {
      streams.set(end, valid);
      if (timer === null) {
        timer = setInterval(() => {
          if (o.changedElsewhere()) check();
        }, pollMs);
        timer.unref();
      }
      return () => {
        streams.delete(end);
        if (streams.size === 0) stopPolling();
      };
    },
    recheck() {
      if (pending || streams.size === 0) return;
      pending = true;
      setImmediate(() => {
        pending = false;
        check();
      });
    },
    size: () => streams.size,
    close() {
      streams.clear();
      stopPolling();
    },
  };
}

/**
 * Ends a reply stream once `valid` fails: it is destroyed, so whatever feeds
 * it stops (its 'close') and the connection closes. For streams whose
 * producer knows nothing of the credential (the launcher's, checked by the app).
 */
export function endStreamOnRevocation(w: RevocationWatch, body: Readable, valid: () => boolean): void {
  const unwatch = w.watch(valid, () => body.destroy());
  body.once('close', unwatch);
}
