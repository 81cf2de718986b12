import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type Koa from 'koa';
import { ApiError } from './core/errors';
import { checkRequestSource, requestSource } from './core/origin';
import { isServicePath } from './core/paths';
import { guardConnections, serverOptions, type ConnectionGuard, type ConnectionLimits } from './core/connections';
import { nowIso } from './core/time';
import { removeServerInfo, writeServerInfo } from './launcher';
import type { StudioProxy } from './proxy';

/**
 * The server's lifecycle: listen (with the connection limits and the
 * upgrades a studio's origin passes on), and the stop, in its order. The
 * domains it stops are handed in; it builds none of them.
 */

export interface ServerState {
  /** 0 until it listens. */
  port: number;
  guard: ConnectionGuard | null;
}

export interface LifecycleDeps {
  app: Koa;
  dataDir: string;
  connections: ConnectionLimits;
  state: ServerState;
  proxy: StudioProxy;
  /** The domains' own stop, run once the server stops accepting and before its sockets go. */
  stopDomains(): Promise<void>;
  /** The rest, once no request can run any more (read workers, recovery, the database). */
  release(): Promise<void>;
}

export function createLifecycle(d: LifecycleDeps) {
  const callback = d.app.callback();
  let server: Server | null = null;
  return {
    callback,
    listen(requested: number): Promise<{ port: number; url: string }> {
      return new Promise((resolve, reject) => {
        // Our Host guard answers a missing Host itself, with the error body (403 bad_origin).
        // Header time, idle body time, keep-alive and the connection cap: core/connections.ts.
        const s = createServer({ requireHostHeader: false, ...serverOptions(d.connections) }, callback);
        const g = guardConnections(s, d.connections);
        s.on('upgrade', (req, socket, head) => upgrade(d, req, socket, head));
        s.once('error', (err) => {
          g.stop();
          reject(err);
        });
        s.listen(requested, '127.0.0.1', () => {
          s.removeAllListeners('error');
          server = s;
          d.state.guard = g;
          d.state.port = (s.address() as AddressInfo).port;
          const port = d.state.port;
          const url = `http://127.0.0.1:${port}`;
          writeServerInfo(d.dataDir, { pid: process.pid, port, url, started_at: nowIso() });
          resolve({ port, url });
        });
      });
    },
    async close(): Promise<void> {
      const s = server;
      const g = d.state.guard;
      server = null;
      const closed = s ? new Promise<void>((resolve) => s.close(() => resolve())) : null;
      await d.stopDomains();
      removeServerInfo(d.dataDir);
      if (s && closed) {
        s.closeIdleConnections();
        // Requests in flight get a moment to finish; then every socket goes.
        const timer = setTimeout(() => {
          for (const socket of [...g!.sockets()]) socket.destroy();
        }, 1000);
        await closed;
        clearTimeout(timer);
        g!.stop();
      }
      await d.release();
    },
  };
}

/** WebSocket (and any other) upgrades: only a studio's origin has them, passed to its server. */
function upgrade(d: LifecycleDeps, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  let studioId: string | null;
  try {
    studioId = checkRequestSource(requestSource(req.headers), d.state.port).hostStudioId;
  } catch (err) {
    refuseUpgrade(socket, err instanceof ApiError ? err : ApiError.badOrigin('Refused.'));
    return;
  }
  if (studioId === null) {
    refuseUpgrade(socket, ApiError.notFound('An upgrade on the service\'s own origin'));
    return;
  }
  // The paths the service answers itself on a studio's origin never reach the studio's
  // server, upgrades included (docs/security.md, Studios). The path is read as Koa reads
  // it for every other request (raw, case-sensitive), so both kinds go the same way.
  if (isServicePath(koaPath(d.app, req))) {
    refuseUpgrade(socket, ApiError.notFound('The path'));
    return;
  }
  d.proxy.upgrade(studioId, req, socket, head);
}

/** A request's path exactly as Koa's `ctx.path` gives it (not decoded, not normalised). */
function koaPath(app: Koa, req: IncomingMessage): string {
  const request = Object.create(app.request) as { req: typeof req; path: string };
  request.req = req;
  return request.path;
}

/** An upgrade the service will not pass on: the error body, then the connection ends. */
function refuseUpgrade(socket: Duplex, error: ApiError): void {
  const body = JSON.stringify(error.toBody());
  socket.end(
    `HTTP/1.1 ${error.status} ${error.status === 403 ? 'Forbidden' : 'Not Found'}\r\nConnection: close\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}
