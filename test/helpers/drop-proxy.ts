import http from 'node:http';

/**
 * A forward HTTP proxy between Chromium and the service, so a test can drop
 * the connections of the job log streams the way a network would, while the
 * page and the service stay as they are (the Host header passes unchanged).
 */
/** `streams` picks the requests it may drop: the log streams by default. */
export async function dropProxy(
  streamsPath: RegExp = /\/logs$/,
): Promise<{ port: number; drop(options?: { answered?: boolean }): number; close(): Promise<void> }> {
  const streams = new Set<{ client: import('node:net').Socket; upstream: http.ClientRequest; answered: boolean }>();
  const server = http.createServer((req, res) => {
    const target = new URL(req.url!);
    const headers = { ...req.headers };
    delete headers['proxy-connection'];
    const upstream = http.request(
      { host: target.hostname, port: Number(target.port), method: req.method, path: target.pathname + target.search, headers, setHost: false },
      (up) => {
        res.writeHead(up.statusCode!, up.headers);
        up.pipe(res);
        // Answered once the service's first bytes (the stream's opening line) are on their way to the page.
        up.once('data', () => {
          if (entry) entry.answered = true;
        });
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
    const entry = streamsPath.test(target.pathname) ? { client: req.socket, upstream, answered: false } : null;
    if (entry) {
      streams.add(entry);
      res.on('close', () => streams.delete(entry));
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as import('node:net').AddressInfo).port,
    /** Drops the streams (only those already answered, with `answered`); returns how many. */
    drop(options: { answered?: boolean } = {}) {
      const chosen = [...streams].filter((s) => !options.answered || s.answered);
      const n = chosen.length;
      for (const s of chosen) {
        s.upstream.destroy();
        s.client.destroy();
        streams.delete(s);
      }
      return n;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
