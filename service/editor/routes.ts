import type { Context, Next } from 'koa';
import { authenticateLauncher, bearerToken, hashToken, type LauncherPrincipal } from '../core/auth';
import { ApiError } from '../core/errors';
import { requestSource, requireServiceOrigin } from '../core/origin';
import type { LauncherCredentials } from '../studios';
import { appShell, setPageHeaders } from '../ui';
import type { EditorHub } from './hub';

/**
 * The editor surface's HTTP side, outside `/api/v1` (docs/api.md §Editor surface):
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
}

export function editorMiddleware(deps: EditorRoutesDeps) {
  /**
   * The caller of the launcher side: the credential from `Authorization:
   * Bearer` only (the editor page reads the channel with fetch, which sends
   * it; docs/security.md "The launcher credential"). A Cookie header is
   * never read. The use is recorded, as for every launcher call.
   */
  const authenticate = (ctx: Context): LauncherPrincipal =>
    authenticateLauncher(ctx.get('Authorization') || undefined, (hash) => deps.credentials.use(hash)?.hash ?? null);

  return async (ctx: Context, next: Next): Promise<void> => {
    if (ctx.path !== EDITOR_PREFIX && !ctx.path.startsWith(`${EDITOR_PREFIX}/`)) return next();
    requireServiceOrigin(requestSource(ctx.req.headers), deps.port());
    const read = ctx.method === 'GET' || ctx.method === 'HEAD';
    if (read && ctx.path === EDITOR_PREFIX) {
      ctx.status = 308;
      ctx.set('Location', `${EDITOR_PREFIX}/`);
      ctx.body = '';
      return;
    }
    if (read && ctx.path === `${EDITOR_PREFIX}/`) {
      // The page holds no data: it opens its events stream with the launcher page's credential, and says how to sign in when refused.
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
    const hash = hashToken(bearerToken(ctx.get('Authorization'))!);
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
