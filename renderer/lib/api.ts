import { authHeaders } from './credential';

/**
 * The service's API from a page of its own origin: every call carries the
 * launcher credential as `Authorization: Bearer` (lib/credential.ts); no
 * cookie is ever sent (`credentials: 'omit'`).
 */

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown>,
  ) {
    super(message);
  }
}

export interface CallOptions {
  method?: string;
  body?: unknown;
  ifMatch?: string;
  contentType?: string;
  signal?: AbortSignal;
}

export const API = '/api/v1';

export async function call<T = unknown>(path: string, options: CallOptions = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json', ...authHeaders() };
  if (options.body !== undefined) headers['Content-Type'] = options.contentType ?? 'application/json';
  if (options.ifMatch !== undefined) headers['If-Match'] = options.ifMatch;
  let res: Response;
  try {
    res = await fetch(`${API}${path}`, {
      method: options.method ?? 'GET',
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      credentials: 'omit',
      signal: options.signal,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiFailure(0, 'unreachable', 'Backlot is not answering. Is the service still running?', {});
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: reported below
  }
  if (!res.ok) {
    const e = (json ?? {}) as { code?: string; message?: string; details?: Record<string, unknown> };
    throw new ApiFailure(res.status, e.code ?? `http_${res.status}`, e.message ?? `HTTP ${res.status}`, e.details ?? {});
  }
  return json as T;
}

export type { Page } from './api-types';

/** A query string from the defined entries. */
export function query(params: Record<string, string | number | boolean | null | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}
