import type { IncomingHttpHeaders } from 'node:http';
import { ApiError } from './errors';

/**
 * The one allow-list predicate for Host and Origin (docs/api.md "Host and Origin"), applied
 * before any routing. It defends against DNS rebinding (a Host that is not a
 * loopback name of this port) and cross-site requests (an Origin that is not
 * the service or a studio page). `Origin == Host` is never taken as proof: a
 * rebound page would send both equal.
 */

export const STUDIO_ID_PATTERN = /^[a-z][a-z0-9-]{1,31}$/;

export type Site = { kind: 'service' } | { kind: 'studio'; studioId: string };

const SERVICE_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** What a `host:port` authority names, or null when it is not ours. */
export function classifyAuthority(authority: string, port: number): Site | null {
  const lower = authority.toLowerCase();
  const suffix = `:${port}`;
  if (!lower.endsWith(suffix)) return null;
  const host = lower.slice(0, -suffix.length);
  if (SERVICE_HOSTS.has(host)) return { kind: 'service' };
  if (host.endsWith('.localhost')) {
    const id = host.slice(0, -'.localhost'.length);
    if (STUDIO_ID_PATTERN.test(id)) return { kind: 'studio', studioId: id };
  }
  return null;
}

/** What an Origin header names, or null when it is not one of ours. */
export function classifyOrigin(origin: string, port: number): Site | null {
  const m = /^http:\/\/([^/?#@\s]+)$/i.exec(origin);
  return m ? classifyAuthority(m[1]!, port) : null;
}

export interface OriginVerdict {
  /** The studio whose page origin (or host name) the request came through, if any. */
  studioId: string | null;
  /** The studio whose host name (`<id>.localhost:PORT`) the request was sent to, if any. */
  hostStudioId: string | null;
}

export interface RequestSource {
  host: string | undefined;
  origin: string | undefined;
  secFetchSite: string | undefined;
}

/** The headers the checks read, as a request (or an upgrade) carries them; empty ones count as absent. */
export function requestSource(h: IncomingHttpHeaders): RequestSource {
  return { host: h.host || undefined, origin: one(h.origin), secFetchSite: one(h['sec-fetch-site']) };
}

function one(value: string | string[] | undefined): string | undefined {
  return (Array.isArray(value) ? value[0] : value) || undefined;
}

/**
 * Throws 403 `bad_origin` for a request the service must not answer.
 * `navigation`: a person's top-level navigation to a studio's page, which
 * arrives from another site (the launcher's page) and may say so.
 */
export function checkRequestSource(source: RequestSource, port: number, options: { navigation?: boolean } = {}): OriginVerdict {
  if (!source.host) throw ApiError.badOrigin('The Host header is missing.');
  const host = classifyAuthority(source.host, port);
  if (!host) throw ApiError.badOrigin(`The Host "${source.host}" is not this service.`);
  if (source.secFetchSite?.toLowerCase() === 'cross-site' && !(options.navigation && host.kind === 'studio')) {
    throw ApiError.badOrigin('Cross-site requests are refused.');
  }
  let studioId = host.kind === 'studio' ? host.studioId : null;
  if (source.origin !== undefined) {
    const origin = classifyOrigin(source.origin, port);
    if (!origin) throw ApiError.badOrigin(`Requests from the origin "${source.origin}" are refused.`);
    if (origin.kind === 'studio') {
      if (studioId !== null && studioId !== origin.studioId) {
        throw ApiError.badOrigin('The Origin and Host name different studios.');
      }
      studioId = origin.studioId;
    }
  }
  return { studioId, hostStudioId: host.kind === 'studio' ? host.studioId : null };
}

/**
 * The service's own pages only (the editor channel; later the launcher's
 * pages): on top of checkRequestSource, a request through a studio's host
 * name or page origin is 403 `bad_origin`, and so is one a browser marks as
 * coming from another site. `same-site` matters here: a studio page on
 * `<id>.localhost` is the same site as `localhost`, so a request it makes
 * without an Origin header (an image, a navigation) would otherwise pass.
 */
export function requireServiceOrigin(source: RequestSource, port: number): void {
  const { studioId } = checkRequestSource(source, port);
  if (studioId !== null) {
    throw ApiError.badOrigin(`Only the service's own pages may use this; the studio "${studioId}" may not.`);
  }
  const site = source.secFetchSite?.toLowerCase();
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    throw ApiError.badOrigin(`Only the service's own pages may use this (Sec-Fetch-Site: ${site}).`);
  }
}
