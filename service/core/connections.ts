import { readFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The service's connection limits (docs/api.md "Connections and limits"): a client, with or without a
 * token, must not be able to hold the service's sockets (and so its open
 * files) by connecting and never finishing, nor reset a client whose body was
 * refused. What is bounded, and how:
 *
 * - header time: Node's own `headersTimeout` (408, then closed), checked every
 *   `checkMs`; it counts from the connection (or, on a kept-alive one, from the
 *   first byte of the next request), so a slow drip of header bytes does not help.
 * - idle body: a request whose body has not all arrived and whose socket has
 *   read no byte for `bodyIdleMs` is closed. Time while the service itself holds
 *   the socket paused (its disk or a studio is slower than the client) does not
 *   count, and any byte restarts the clock, so a slow but moving upload of any
 *   size is never cut.
 * - the number of connections: at most `maxConnections`. A newcomer over the
 *   cap evicts the connection that has waited longest without a request in
 *   progress (new and still sending its headers, idle between kept-alive
 *   requests, or lingering after its answer); a request in progress is never
 *   evicted. Only when every connection has one is the newcomer closed.
 * - upgrades (a studio's WebSockets) hold their socket for as long as they
 *   live: at most half the cap may be upgraded, so they cannot fill it.
 * - lingering close: a request answered before its body was read (413, 507,
 *   401 ...) with `Connection: close` is not reset under the client: the
 *   service ends its side, then reads and discards the rest of the body, at
 *   most `lingerBytes` and `lingerMs`, before it closes (nginx's lingering close).
 */

export interface ConnectionLimits {
  /** From the connection (or a kept-alive request's first byte) to the end of the headers. */
  headersTimeoutMs: number;
  /** The longest a request body may go without a byte. */
  bodyIdleTimeoutMs: number;
  /** How long an idle kept-alive connection stays open; announced as `Keep-Alive: timeout=N`. */
  keepAliveTimeoutMs: number;
  /** Open client connections at most. */
  maxConnections: number;
  /** After an early answer: the longest the rest of the body is read and discarded. */
  lingerMs: number;
  /** After an early answer: the most bytes read and discarded. */
  lingerBytes: number;
}

const MiB = 1024 * 1024;

export const DEFAULT_LIMITS: Omit<ConnectionLimits, 'maxConnections'> = {
  headersTimeoutMs: 30_000,
  bodyIdleTimeoutMs: 60_000,
  keepAliveTimeoutMs: 310_000,
  lingerMs: 10_000,
  lingerBytes: 64 * MiB,
};

/** The cap when none is given: 2048, less where the open-file limit could not hold three descriptors a connection. */
export const DEFAULT_MAX_CONNECTIONS = 2048;

export function defaultMaxConnections(openFiles = openFileLimit()): number {
  if (openFiles === null) return DEFAULT_MAX_CONNECTIONS;
  // Each connection may hold a second descriptor (its studio's side, proxied) and a
  // third (an upload's temp file); 256 stay for the database, workers, logs and children.
  return Math.max(16, Math.min(DEFAULT_MAX_CONNECTIONS, Math.floor((openFiles - 256) / 3)));
}

/** The process's soft limit on open files (Linux; null elsewhere). */
function openFileLimit(): number | null {
  try {
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    if (!line) return null;
    return line[1] === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(line[1]);
  } catch {
    return null;
  }
}

/** The options for node:http's createServer that go with these limits. */
export function serverOptions(limits: ConnectionLimits) {
  return {
    // Whole requests are not timed: an upload of several GiB may take long. The idle-body rule bounds a stalled one.
    requestTimeout: 0,
    headersTimeout: limits.headersTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: checkInterval(limits),
  };
}

function checkInterval(limits: ConnectionLimits): number {
  return Math.max(50, Math.min(1000, Math.floor(Math.min(limits.headersTimeoutMs, limits.bodyIdleTimeoutMs) / 4)));
}

interface Connection {
  socket: Socket;
  /** The newest request on it, and how many have no finished answer yet. */
  req: IncomingMessage | null;
  open: number;
  upgraded: boolean;
  lingering: boolean;
  /** socket.bytesRead at the last check, and when it last moved. */
  bytes: number;
  movedAt: number;
}

export interface ConnectionGuard {
  /** Counts for tests and the docs: open connections, how many are upgraded, and evicted/closed so far. */
  stats(): { open: number; upgraded: number; evicted: number; refused: number; bodyIdleClosed: number };
  /** For an upgrade request: false (and nothing changed) when half the cap is already upgraded. */
  admitUpgrade(req: IncomingMessage): boolean;
  /** Every connection, for the service's close. */
  sockets(): IterableIterator<Socket>;
  /** Stops the periodic check. */
  stop(): void;
}

/** Watches a server made with serverOptions(limits). */
export function guardConnections(server: Server, limits: ConnectionLimits): ConnectionGuard {
  const all = new Map<Socket, Connection>();
  // Connections without a request in progress, the longest waiting first (a Map keeps insertion order).
  const waiting = new Map<Socket, Connection>();
  let upgraded = 0;
  const counts = { evicted: 0, refused: 0, bodyIdleClosed: 0 };

  const wait = (c: Connection) => {
    waiting.delete(c.socket);
    if (!c.socket.destroyed) waiting.set(c.socket, c);
  };

  server.on('connection', (socket: Socket) => {
    const c: Connection = { socket, req: null, open: 0, upgraded: false, lingering: false, bytes: 0, movedAt: Date.now() };
    all.set(socket, c);
    waiting.set(socket, c);
    socket.once('close', () => {
      all.delete(socket);
      waiting.delete(socket);
      if (c.upgraded) upgraded--;
    });
    // node:http ends a `Connection: close` answer with destroySoon(): a reset under a
    // client still sending its body. Linger instead while that body is unfinished.
    const destroySoon = socket.destroySoon.bind(socket);
    socket.destroySoon = () => (c.req && !c.req.complete && !c.upgraded ? linger(c) : destroySoon());
    if (all.size > limits.maxConnections) makeRoom(socket);
  });

  // Before the app's handler, so that an answer it gives at once is seen.
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const c = all.get(req.socket);
    if (!c) return;
    c.req = req;
    c.open++;
    c.bytes = req.socket.bytesRead;
    c.movedAt = Date.now();
    waiting.delete(c.socket);
    // One listener a request: a response emits 'close' once, after its 'finish' or when its socket goes first.
    res.once('close', () => {
      c.open = Math.max(0, c.open - 1);
      if (c.open !== 0) return;
      if (req.complete) wait(c);
      // Answered before the body was all read (and kept alive): waiting once node:http has discarded the rest.
      else req.once('end', () => c.req === req && c.open === 0 && wait(c));
    });
  });

  function makeRoom(newcomer: Socket): void {
    for (const [socket] of waiting) {
      if (socket === newcomer) break;
      waiting.delete(socket);
      all.delete(socket);
      counts.evicted++;
      socket.destroy();
      return;
    }
    counts.refused++;
    all.delete(newcomer);
    waiting.delete(newcomer);
    newcomer.destroy();
  }

  function linger(c: Connection): void {
    const { socket, req } = c;
    if (c.lingering || !req) return;
    c.lingering = true;
    const start = socket.bytesRead;
    const close = () => {
      clearTimeout(timer);
      socket.destroy();
    };
    const timer = setTimeout(close, limits.lingerMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
    // The answer goes out, then our FIN; the body's rest is read and dropped.
    socket.end();
    req.removeAllListeners('data');
    req.on('data', () => {
      if (socket.bytesRead - start > limits.lingerBytes) close();
    });
    req.once('end', close);
    req.once('aborted', close);
    req.resume();
    // Its answer is given: among the first to go when room is needed.
    wait(c);
  }

  const check = setInterval(() => {
    const now = Date.now();
    for (const c of all.values()) {
      const req = c.req;
      if (c.upgraded || !req || req.complete) continue;
      const bytes = c.socket.bytesRead;
      // Moved, or paused by the service itself (its reader is slower): not the client's stall.
      if (bytes !== c.bytes || (c.socket.isPaused() && !c.lingering)) {
        c.bytes = bytes;
        c.movedAt = now;
      } else if (now - c.movedAt > limits.bodyIdleTimeoutMs) {
        counts.bodyIdleClosed++;
        c.socket.destroy();
      }
    }
  }, checkInterval(limits));
  check.unref();

  return {
    stats: () => ({ open: all.size, upgraded, ...counts }),
    admitUpgrade(req) {
      const c = all.get(req.socket as Socket);
      if (!c) return false;
      if (upgraded >= Math.floor(limits.maxConnections / 2)) return false;
      c.upgraded = true;
      upgraded++;
      waiting.delete(c.socket);
      return true;
    },
    sockets: () => all.keys(),
    stop: () => clearInterval(check),
  };
}
