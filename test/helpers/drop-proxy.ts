import http from 'node:http';

/**
 * A forward HTTP proxy between Chromium and the service, so a test can drop
 * the connections of the job log streams the way a network would, while the
 * page and the service stay as they are (the Host header passes unchanged).
 */
/** `streams` picks the requests it may drop: the log streams by default. */
export async function dropProxy(streamsPath: RegExp = /\/logs$/): Promise<{ port: number; drop(): number; close(): Promise<void> }> {
  const streams = new Set<{ client: import('node:net').Socket; upstream: http.ClientRequest }>();
  const server = http.createServer((req, res) => {
    const target = new URL(req.url!);
    const headers = { ...req.headers };
    delete headers['proxy-connection'];
    const upstream = http.request(
      { host: target.hostname, port: Number(target.port), method: req.method, path: target.pathname + target.search, headers, setHost: false },
      (up) => {
        res.writeHead(up.statusCode!, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
    if (streamsPath.test(target.pathname)) {
      const entry = { client: req.socket, upstream };
      streams.add(entry);
      res.on('close', () => streams.delete(entry));
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as import('node:net').AddressInfo).port,
    drop() {
      const n = streams.size;
      for (const s of streams) {
        s.upstream.destroy();
        s.client.destroy();
      }
      streams.clear();
      return n;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
