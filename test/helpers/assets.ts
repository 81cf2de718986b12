import { request } from 'node:http';
import sharp from 'sharp';
import type { HttpResponse } from './http';

/** Upload and byte-level read helpers for the assets tests. */

export interface BytesResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  json: any;
}

/**
 * A raw request whose body is `body` (Content-Length) or, with `chunks`, a
 * chunked body from an iterable. The answer may come before the body is all
 * sent (413, 507): a write error after an answer is ignored.
 */
export function rawRequest(
  port: number,
  options: { method?: string; path: string; token?: string; headers?: Record<string, string>; body?: Buffer; chunks?: AsyncIterable<Buffer> | Iterable<Buffer> },
): Promise<BytesResponse> {
  const headers: Record<string, string> = { Host: `127.0.0.1:${port}`, ...options.headers };
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  if (options.body) headers['Content-Length'] = String(options.body.length);
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request({ host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path, headers, setHost: false }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        const json = String(res.headers['content-type'] ?? '').includes('json') && body.length > 0 ? JSON.parse(body.toString()) : undefined;
        resolve({ status: res.statusCode!, headers: res.headers, body, json });
      });
      res.on('error', reject);
    });
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    if (options.body) req.end(options.body);
    else if (options.chunks) {
      void (async () => {
        try {
          for await (const chunk of options.chunks!) {
            if (answered || req.destroyed) break;
            if (!req.write(chunk)) await new Promise((r) => req.once('drain', r));
          }
          req.end();
        } catch {
          // the server answered and closed: nothing more to send
        }
      })();
    } else req.end();
  });
}

export function upload(port: number, token: string, bytes: Buffer, query: string, contentType = 'application/octet-stream') {
  return rawRequest(port, { method: 'POST', path: `/api/v1/assets?${query}`, token, body: bytes, headers: { 'Content-Type': contentType } });
}

export function uploadChunked(port: number, token: string, chunks: AsyncIterable<Buffer> | Iterable<Buffer>, query: string) {
  return rawRequest(port, { method: 'POST', path: `/api/v1/assets?${query}`, token, chunks });
}

export function getAsset(port: number, token: string, path: string, headers: Record<string, string> = {}, method = 'GET') {
  return rawRequest(port, { method, path: `/api/v1${path}`, token, headers });
}

/** An HttpResponse-shaped view for assertError. */
export function asHttp(r: BytesResponse): HttpResponse {
  return { status: r.status, headers: r.headers as HttpResponse['headers'], text: r.body.toString(), json: r.json };
}

/** A JPEG of the given size; `seed` makes different bytes. Noise makes it costly to decode, like a photo. */
export async function makeJpeg(width: number, height: number, seed: number, noise = false): Promise<Buffer> {
  const background = { r: seed % 256, g: (seed * 7) % 256, b: (seed * 13) % 256 };
  const create = noise
    ? { width, height, channels: 3 as const, background, noise: { type: 'gaussian' as const, mean: 128, sigma: 40 } }
    : { width, height, channels: 3 as const, background };
  return sharp({ create }).jpeg({ quality: 90 }).toBuffer();
}

export async function makePng(width: number, height: number, seed: number): Promise<Buffer> {
  // All 24 bits of the seed pick the colour (the same picture as before for seeds under 256): with the red
  // channel alone, two random seeds in one file named the same bytes one time in 256, and an upload
  // meant to be new was a 200 re-upload.
  const background = { r: seed % 256, g: (10 + (seed >> 8)) % 256, b: (20 + (seed >> 16)) % 256, alpha: 1 };
  return sharp({ create: { width, height, channels: 4, background } }).png().toBuffer();
}
