import type { Context, Next } from 'koa';
import { authenticateLauncher, bearerToken, hashToken, type LauncherPrincipal } from '../core/auth';
import { ApiError } from '../core/errors';
import { requireServiceOrigin } from '../core/origin';
import type { LauncherCredentials } from '../studios';
import { appShell, setPageHeaders } from '../ui';
import type { EditorHub } from './hub';

/**
 * The editor surface's HTTP side, outside `/api/v1` (decisions §10):
 *
 *   GET /editor/         the editor page (an HTML shell loading /ui/editor.js; no data in it)
 *   GET /editor          308 to /editor/
 *   GET /editor/events   server-sent events for the editor page (launcher credential)
 *   anything else under /editor   404 `not_found`
 *
 * Order: the app's global Host/Origin guard, then this path's own tighter one
 * (the service's own origin only: 403 `bad_origin`), then the credential
 * (401), then the path (404).
 */

export const EDITOR_PREFIX = '/editor';
export const EDITOR_EVENTS_PATH = `${EDITOR_PREFIX}/events`;

export interface EditorRoutesDeps {
  hub: EditorHub;
  credentials: LauncherCredentials;
  port: () => number;
  /** The launcher credential as an `Authorization` value: the header, or the login cookie. */
  credential: (ctx: Context) => string | undefined;
}

export function editorMiddleware(deps: EditorRoutesDeps) {
  /**
   * The caller of the launcher side: the credential from `Authorization:
   * Bearer` (the desktop shell, tests) or the HttpOnly cookie the one-time
   * login URL set (a browser), through the same authenticateLauncher check.
   */
  const authenticate = (ctx: Context): LauncherPrincipal => authenticateLauncher(deps.credential(ctx), deps.credentials.resolve);

  return async (ctx: Context, next: Next): Promise<void> => {
    if (ctx.path !== EDITOR_PREFIX && !ctx.path.startsWith(`${EDITOR_PREFIX}/`)) return next();
    requireServiceOrigin(
      { host: ctx.get('Host') || undefined, origin: ctx.get('Origin') || undefined, secFetchSite: ctx.get('Sec-Fetch-Site') || undefined },
      deps.port(),
    );
    const read = ctx.method === 'GET' || ctx.method === 'HEAD';
    if (read && ctx.path === EDITOR_PREFIX) {
      ctx.status = 308;
      ctx.set('Location', `${EDITOR_PREFIX}/`);
      ctx.body = '';
      return;
    }
    if (read && ctx.path === `${EDITOR_PREFIX}/`) {
      // The page holds no data: it signs in through its events stream (cookie), and says how when refused.
      setPageHeaders(ctx);
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = appShell('editor', 'Backlot editor');
      return;
    }
    if (ctx.path !== EDITOR_EVENTS_PATH || !read) {
      throw ApiError.notFound('The path');
    }
    ctx.state.launcher = authenticate(ctx);
    // Asked again before every event and at every heartbeat: a revocation from
    // the CLI ends a page already connected, not only later connects. A failed
    // lookup counts as revoked.
    const hash = hashToken(bearerToken(deps.credential(ctx))!);
    const valid = () => {
      try {
        return deps.credentials.resolve(hash) !== null;
      } catch {
        return false;
      }
    };
    ctx.status = 200;
    ctx.type = 'text/event-stream';
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('X-Accel-Buffering', 'no');
    // Koa pipes the stream and destroys it when the page goes away (or at once for HEAD).
    ctx.body = deps.hub.connect(valid);
  };
}
