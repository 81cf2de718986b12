import type { Context, Next } from 'koa';
import { z } from 'zod';
import { hashToken } from '../core/auth';
import { readJsonBody } from '../core/body';
import { ApiError } from '../core/errors';
import { classifyOrigin, requestSource, requireServiceOrigin } from '../core/origin';
import { parseWith } from '../core/route';
import type { LauncherCredentials } from '../studios';
import type { LauncherStore } from './store';
import { appShell, setPageHeaders } from '../ui';

/**
 * The service's own pages outside /api/v1 (docs/api.md §Launcher, "Sign-in"):
 *
 *   GET /login?code=...   the launcher page; spends nothing (a prefetch, a link preview or a HEAD is harmless)
 *   POST /login           {"code"} -> {"credential", "kind"}: spends the code, once (the page's own script)
 *   GET /                 the launcher page (no data in it; it shows how to sign in when it holds no credential)
 *
 * The credential goes back in a JSON body to a script of the service's own
 * origin, which keeps it in that origin's localStorage (scoped by port) and
 * sends it as `Authorization: Bearer`. Nothing here sets a cookie: a browser
 * sends cookies to every port of a host, so a cookie would reach any other
 * server on 127.0.0.1 (docs/security.md "The launcher credential").
 *
 * Only on the service's own origin (a studio's origin never reaches them:
 * the app proxies every other path of a studio host to the studio).
 */

export const LOGIN_PATH = '/login';

export interface PagesDeps {
  store: LauncherStore;
  credentials: LauncherCredentials;
  port(): number;
  bodyLimit(): number;
}

const loginBody = z.object({ code: z.string().max(64) }).strict();
const CODE = /^[A-Za-z0-9_-]{43}$/;

export function launcherPages(d: PagesDeps) {
  return async (ctx: Context, next: Next): Promise<void> => {
    if (ctx.path !== LOGIN_PATH && ctx.path !== '/') return next();
    const read = ctx.method === 'GET' || ctx.method === 'HEAD';
    if (!read && !(ctx.method === 'POST' && ctx.path === LOGIN_PATH)) return next();
    requireServiceOrigin(requestSource(ctx.req.headers), d.port());
    if (!read) return spendCode(ctx, d);
    // Both paths are the same shell; on /login its script posts the code, then shows `/`.
    setPageHeaders(ctx);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = appShell('launcher', 'Backlot');
  };
}

/**
 * The one place a login code is spent. Only a script of the service's own
 * origin may: the Origin header must be there and be ours (a fetch always
 * sends it on a POST), and the body must be JSON (a cross-origin page cannot
 * send that without a preflight, which nothing here answers).
 */
async function spendCode(ctx: Context, d: PagesDeps): Promise<void> {
  const origin = ctx.get('Origin');
  if (!origin || classifyOrigin(origin, d.port())?.kind !== 'service') {
    throw ApiError.badOrigin('A login code is spent only by the launcher page itself (Origin must be this service).');
  }
  const type = (ctx.get('Content-Type') || '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') throw ApiError.badRequest('The body must be JSON (Content-Type application/json).');
  const { code } = parseWith(loginBody, await readJsonBody(ctx.req, Math.min(d.bodyLimit(), 4096), 'bad_request'), 'body');
  if (!CODE.test(code) || !d.store.spendLoginCode(hashToken(code))) {
    throw ApiError.unauthenticated(
      'This sign-in link does not work: it was used already, is older than two minutes, or was mistyped. Run backlot login-url for a new one.',
    );
  }
  ctx.status = 200;
  ctx.type = 'application/json';
  ctx.body = { credential: d.credentials.create('browser'), kind: 'browser' };
}
