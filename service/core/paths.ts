/**
 * Where the service's own paths begin (docs/api.md "Base URL, transport"). On the
 * service's origin everything is the service's; on a studio's origin only
 * these prefixes are, and everything else is the studio's own server.
 */

/** The data API and the launcher's side. */
export const API_PREFIX = '/api/v1';

/** Under which a studio's origin reaches this API as that studio (docs/api.md "The studio origin"). */
export const BACKLOT_PREFIX = '/_backlot';

/** `prefix` itself or anything under it. */
export function isUnder(path: string, prefix: string): boolean {
  return path.startsWith(prefix) && (path.length === prefix.length || path.charCodeAt(prefix.length) === 47 /* '/' */);
}

/**
 * Whether a path on a studio's origin is the service's own: `/_backlot` and
 * `/api/v1` and everything under them. Requests and upgrades are told apart
 * by the same test.
 */
export function isServicePath(path: string): boolean {
  return isUnder(path, BACKLOT_PREFIX) || isUnder(path, API_PREFIX);
}
