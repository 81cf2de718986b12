import type { Context, Next } from 'koa';
import { authenticate, type TokenGrants } from '../core/auth';
import { ApiError } from '../core/errors';
import type { OriginVerdict } from '../core/origin';
import { API_PREFIX, BACKLOT_PREFIX, isUnder } from '../core/paths';
import type { Launcher } from '../launcher';
import type { StudioProxy } from '../proxy';

/**
 * A studio's origin (docs/api.md "The studio origin"): `/_backlot/api/v1/*` is this
 * API as that studio (its runtime token, whatever Authorization the page
 * sent); `/api/v1/*` is this API with the caller's own token, as on the
 * service's origin; everything else is the studio's own server. On the
 * service's origin it does nothing and costs one field read.
 */
export function studioOrigin(d: { launcher: Launcher; proxy: StudioProxy; grants: TokenGrants }) {
  return (ctx: Context, next: Next): Promise<void> => {
    const studioId = (ctx.state.source as OriginVerdict).hostStudioId;
    if (studioId === null) return next();
    if (isUnder(ctx.path, BACKLOT_PREFIX)) {
      // The whole prefix is the service's: nothing under it reaches the studio's server.
      if (!ctx.path.startsWith(`${BACKLOT_PREFIX}${API_PREFIX}/`)) throw ApiError.notFound('The path');
      const target = d.launcher.runtime.target(studioId);
      if (!target) {
        ctx.respond = false;
        d.proxy.handle(studioId, ctx.req, ctx.res);
        return Promise.resolve();
      }
      ctx.state.principal = authenticate(`Bearer ${target.token}`, d.grants);
      ctx.path = ctx.path.slice(BACKLOT_PREFIX.length);
      return next();
    }
    if (isUnder(ctx.path, API_PREFIX)) return next();
    ctx.respond = false;
    d.proxy.handle(studioId, ctx.req, ctx.res);
    return Promise.resolve();
  };
}
