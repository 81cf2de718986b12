import { Agent, request, type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import {
  badGatewayPage,
  gatewayTimeoutPage,
  notRunningPage,
  plainResponse,
  sendPage,
  stoppingPage,
  unknownStudioPage,
} from './page';

/**
 * The reverse proxy behind every studio origin `http://<id>.localhost:PORT/`
 * (docs/api.md "The studio origin"): plain requests and upgrades go to the studio's own server on
 * 127.0.0.1:<its port>, streaming both ways with nothing buffered. The caller has
 * already checked Host/Origin and named the studio; that id is the only thing from
 * the request that chooses where bytes go.
 */

export type StudioTarget =
  | { kind: 'running'; port: number }
  | { kind: 'not_running'; name: string; state: string }
  | { kind: 'unknown' };

export interface StudioProxyOptions {
  lookup(studioId: string): StudioTarget;
  servicePort(): number;
  /**
   * How long the studio may take to start its answer, counted from the last moment
   * the request body moved (from the start for a request without a body). Default 60 s.
   */
  headersTimeoutMs?: number;
  /** Sockets to the studios at most, open and idle together (the service's connection cap). Default: no bound. */
  maxSockets?: number;
  /**
   * Whether an upgrade may become a tunnel (the service's cap on upgraded connections,
   * core/connections.ts); refused ones get a 503. Default: all may.
   */
  admitUpgrade?(req: IncomingMessage): boolean;
}

export interface StudioProxy {
  /** Handles a plain HTTP request for a studio origin (the caller already checked Host and decided it is studio `studioId`). */
  handle(studioId: string, req: IncomingMessage, res: ServerResponse): void;
  /** Handles an HTTP upgrade (WebSocket) for a studio origin: pipes the socket to the studio server, or answers an HTTP error and closes. */
  upgrade(studioId: string, req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Ends every proxied connection (service close). */
  close(): void;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
/** The service is the first hop: what a page claims about earlier hops is dropped, not passed on. */
const FORWARDING = new Set(['x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'forwarded']);

/** Header names a `Connection` header lists are hop-by-hop too (RFC 9110 §7.6.1). */
function connectionTokens(raw: string[]): Set<string> {
  const tokens = new Set<string>();
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() !== 'connection') continue;
    for (const t of raw[i + 1]!.split(',')) tokens.add(t.trim().toLowerCase());
  }
  return tokens;
}

function isHopByHop(lower: string, listed: Set<string>): boolean {
  return HOP_BY_HOP.has(lower) || lower.startsWith('proxy-') || listed.has(lower);
}

/**
 * The headers sent to the studio, as a flat raw list (order, case and repeats kept).
 * Host stays as the page sent it, so the studio can build absolute URLs; an upgrade
 * keeps its Upgrade header and gets `Connection: Upgrade`.
 */
export function upstreamRequestHeaders(req: IncomingMessage, authority: string, upgrade: boolean): string[] {
  const raw = req.rawHeaders;
  const listed = connectionTokens(raw);
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const lower = raw[i]!.toLowerCase();
    if (FORWARDING.has(lower)) continue;
    if (upgrade && lower === 'upgrade') out.push(raw[i]!, raw[i + 1]!);
    else if (!isHopByHop(lower, listed)) out.push(raw[i]!, raw[i + 1]!);
  }
  if (upgrade) out.push('Connection', 'Upgrade');
  out.push('X-Forwarded-Host', authority, 'X-Forwarded-Proto', 'http');
  const from = req.socket.remoteAddress;
  if (from) out.push('X-Forwarded-For', from);
  return out;
}

/**
 * The studio's response headers as passed to the page: hop-by-hop ones and CORS
 * (`Access-Control-*`: the service never sends CORS) dropped, every cookie host-only.
 */
export function clientResponseHeaders(raw: string[]): string[] {
  const listed = connectionTokens(raw);
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const lower = raw[i]!.toLowerCase();
    if (isHopByHop(lower, listed) || lower.startsWith('access-control-')) continue;
    out.push(raw[i]!, lower === 'set-cookie' ? hostOnlyCookie(raw[i + 1]!) : raw[i + 1]!);
  }
  return out;
}

/**
 * Removes every Domain attribute: a cookie for `.localhost` would reach every other
 * studio's origin (and the service's). Cookie values cannot contain `;`.
 */
export function hostOnlyCookie(setCookie: string): string {
  return setCookie
    .split(';')
    .filter((part, i) => i === 0 || part.split('=', 1)[0]!.trim().toLowerCase() !== 'domain')
    .join(';');
}

export function createStudioProxy(o: StudioProxyOptions): StudioProxy {
  const headersTimeoutMs = o.headersTimeoutMs ?? 60_000;
  // Its own agent: keep-alive to the studios, no socket timeout (an event stream may stay open for hours).
  // At most maxSockets of them; a request over that waits for one (and its wait counts toward headersTimeoutMs).
  const agent = new Agent({ keepAlive: true, ...(o.maxSockets ? { maxTotalSockets: o.maxSockets } : {}) });
  const exchanges = new Set<{ upstream: ClientRequest; res: ServerResponse }>();
  const tunnels = new Set<Duplex>();
  let closed = false;

  const authority = (studioId: string) => `${studioId}.localhost:${o.servicePort()}`;

  function forward(studioId: string, port: number, req: IncomingMessage, res: ServerResponse, mayRetry: boolean): void {
    const length = req.headers['content-length'];
    const bodyless = req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0');
    const headers = upstreamRequestHeaders(req, authority(studioId), false);
    // The page's own framing is hop-by-hop; a body of unknown length goes on chunked.
    if (!bodyless && length === undefined) headers.push('Transfer-Encoding', 'chunked');
    const upstream = request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers, agent, setHost: false });
    const exchange = { upstream, res };
    exchanges.add(exchange);
    // waiting for the studio's headers; streaming its answer; done (a page was sent, or the page left).
    let state: 'waiting' | 'streaming' | 'done' = 'waiting';

    const timer = setTimeout(() => {
      if (state !== 'waiting') return;
      state = 'done';
      upstream.destroy();
      sendPage(req, res, gatewayTimeoutPage(studioId, Math.round(headersTimeoutMs / 1000)));
    }, headersTimeoutMs);

    upstream.on('response', (upRes) => {
      clearTimeout(timer);
      if (state !== 'waiting') return void upRes.destroy();
      try {
        res.writeHead(upRes.statusCode ?? 502, upRes.statusMessage, clientResponseHeaders(upRes.rawHeaders));
      } catch {
        // A head Node will not repeat (say, a status line it refuses): the studio's fault, not a crash of the service.
        upRes.destroy();
        state = 'done';
        return sendPage(req, res, badGatewayPage(studioId));
      }
      state = 'streaming';
      // Headers at once (an event stream's first event may be minutes away); chunks as they come.
      res.flushHeaders();
      upRes.pipe(res);
      upRes.on('error', () => res.destroy());
      // Cut short after the headers: the page must see a broken answer, not a short one that looks whole.
      upRes.on('close', () => {
        if (!upRes.complete) res.destroy();
      });
    });

    upstream.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (state === 'streaming') res.destroy();
      if (state !== 'waiting') return;
      state = 'done';
      exchanges.delete(exchange);
      // A keep-alive socket the studio closed as we reused it: once, for a request with no body to replay.
      if (mayRetry && bodyless && upstream.reusedSocket && err.code === 'ECONNRESET' && !res.destroyed) {
        return forward(studioId, port, req, res, false);
      }
      sendPage(req, res, badGatewayPage(studioId));
    });

    res.on('close', () => {
      clearTimeout(timer);
      exchanges.delete(exchange);
      // The page went away (or close() ended it): the studio's request ends too.
      if (!res.writableFinished) {
        state = 'done';
        upstream.destroy();
      }
    });

    if (bodyless) {
      req.resume();
      upstream.end();
    } else {
      req.pipe(upstream);
      // The wait for headers counts from the last moment the body moved.
      req.on('data', () => {
        if (state === 'waiting') timer.refresh();
      });
    }
  }

  function refuse(socket: Duplex, status: number, text: string): void {
    if (socket.destroyed) return;
    socket.end(plainResponse(status, text), () => socket.destroy());
  }

  function tunnel(studioId: string, port: number, req: IncomingMessage, client: Duplex, head: Buffer): void {
    const upstream: Socket = connect({ host: '127.0.0.1', port });
    let connected = false;
    tunnels.add(client);
    tunnels.add(upstream);
    const finish = () => {
      tunnels.delete(client);
      tunnels.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    upstream.once('connect', () => {
      connected = true;
      upstream.setNoDelay(true);
      const headers = upstreamRequestHeaders(req, authority(studioId), true);
      let text = `${req.method} ${req.url} HTTP/1.1\r\n`;
      for (let i = 0; i < headers.length; i += 2) text += `${headers[i]}: ${headers[i + 1]}\r\n`;
      // Header values arrive as latin1 strings; written back the same way, the bytes are the page's.
      upstream.write(Buffer.from(`${text}\r\n`, 'latin1'));
      if (head.length > 0) upstream.write(head);
      client.pipe(upstream);
      upstream.pipe(client);
    });
    upstream.on('error', () => {
      if (connected) return finish();
      tunnels.delete(upstream);
      tunnels.delete(client);
      upstream.destroy();
      refuse(client, 502, `${studioId} did not answer.`);
    });
    upstream.on('close', () => {
      if (connected) finish();
    });
    client.on('error', finish);
    client.on('close', finish);
  }

  return {
    handle(studioId, req, res) {
      if (closed) return sendPage(req, res, stoppingPage());
      const target = o.lookup(studioId);
      if (target.kind === 'unknown') return sendPage(req, res, unknownStudioPage(studioId));
      if (target.kind === 'not_running') return sendPage(req, res, notRunningPage(studioId, target.name, target.state));
      forward(studioId, target.port, req, res, true);
    },

    upgrade(studioId, req, socket, head) {
      socket.on('error', () => socket.destroy());
      if (closed) return refuse(socket, 503, 'Backlot is stopping.');
      const target = o.lookup(studioId);
      if (target.kind === 'unknown') return refuse(socket, 404, `No studio named ${studioId}.`);
      if (target.kind === 'not_running') {
        return refuse(socket, 503, `${target.name} is not running (${target.state}). Start it from the Backlot launcher or \`bin/backlot start ${studioId}\`.`);
      }
      if (o.admitUpgrade && !o.admitUpgrade(req)) return refuse(socket, 503, 'Too many open upgraded (WebSocket) connections; close some and try again.');
      tunnel(studioId, target.port, req, socket, head);
    },

    close() {
      closed = true;
      for (const { upstream, res } of [...exchanges]) {
        upstream.destroy();
        res.destroy();
      }
      exchanges.clear();
      for (const socket of [...tunnels]) socket.destroy();
      tunnels.clear();
      agent.destroy();
    },
  };
}
