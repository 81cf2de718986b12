import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

/**
 * A raw HTTP client over node:http, so tests control every header (Host,
 * Origin, Content-Type, Content-Length) exactly as a hostile client could.
 */

export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json: any;
}

export interface HttpRequest {
  method?: string;
  path: string;
  token?: string | null;
  headers?: Record<string, string | undefined>;
  /** Sent as JSON unless `raw` is given. */
  body?: unknown;
  raw?: string | Buffer;
  contentType?: string;
}

export function send(port: number, req: HttpRequest): Promise<HttpResponse> {
  const headers: Record<string, string> = { Host: `127.0.0.1:${port}` };
  if (req.token) headers.Authorization = `Bearer ${req.token}`;
  let payload: Buffer | undefined;
  if (req.raw !== undefined) payload = Buffer.isBuffer(req.raw) ? req.raw : Buffer.from(req.raw);
  else if (req.body !== undefined) payload = Buffer.from(JSON.stringify(req.body));
  if (payload) {
    headers['Content-Type'] = req.contentType ?? 'application/json';
    headers['Content-Length'] = String(payload.length);
  }
  for (const [k, v] of Object.entries(req.headers ?? {})) {
    const existing = Object.keys(headers).find((h) => h.toLowerCase() === k.toLowerCase());
    if (existing) delete headers[existing];
    if (v !== undefined) headers[k] = v;
  }
  return new Promise((resolve, reject) => {
    const r = httpRequest({ host: '127.0.0.1', port, method: req.method ?? 'GET', path: req.path, headers, setHost: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown = undefined;
        if ((res.headers['content-type'] ?? '').includes('json') && text !== '') json = JSON.parse(text);
        resolve({ status: res.statusCode!, headers: res.headers, text, json });
      });
      res.on('error', reject);
    });
    r.on('error', reject);
    if (payload) r.write(payload);
    r.end();
  });
}

/** A client bound to one service and (optionally) one token. */
export function client(port: number, token?: string) {
  const call = (method: string, path: string, body?: unknown, headers?: Record<string, string | undefined>) =>
    send(port, { method, path: `/api/v1${path}`, token, body, headers });
  return {
    get: (path: string, headers?: Record<string, string | undefined>) => call('GET', path, undefined, headers),
    put: (path: string, body: unknown, headers?: Record<string, string | undefined>) => call('PUT', path, body, headers),
    post: (path: string, body?: unknown, headers?: Record<string, string | undefined>) => call('POST', path, body, headers),
    patch: (path: string, body: unknown, headers?: Record<string, string | undefined>) =>
      call('PATCH', path, body, { 'Content-Type': 'application/merge-patch+json', ...headers }),
    delete: (path: string, headers?: Record<string, string | undefined>) => call('DELETE', path, undefined, headers),
  };
}
