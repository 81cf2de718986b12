import type { Context } from 'koa';
import { authenticate, authenticateLauncher, type Principal, type TokenGrants } from '../core/auth';
import { ApiError } from '../core/errors';
import { requestSource, requireServiceOrigin, type OriginVerdict } from '../core/origin';
import type { LauncherCredentials } from '../studios';

/** Who is calling: a studio (its token) or the user (the launcher credential). Once per request each. */
export interface Callers {
  /** The studio: the token (401), then whether its page or host name is another studio's (403 `bad_origin`). */
  studio(ctx: Context): Principal;
  /** The user: the service's own origin only (403), then the launcher credential (401). */
  launcher(ctx: Context): void;
  /** A `media_url` route: the service's own origin only (403 `bad_origin`). */
  serviceOriginOnly(ctx: Context): void;
}

export function createCallers(d: { grants: TokenGrants; credentials: LauncherCredentials; port: () => number }): Callers {
  return {
    studio(ctx) {
      const known = ctx.state.principal as Principal | undefined;
      if (known) return known;
      const principal = authenticate(ctx.req.headers.authorization || undefined, d.grants);
      const throughStudio = (ctx.state.source as OriginVerdict).studioId;
      if (throughStudio !== null && throughStudio !== principal.studioId) {
        throw ApiError.badOrigin(`A page of the studio "${throughStudio}" cannot act as another studio.`);
      }
      ctx.state.principal = principal;
      return principal;
    },
    // The user's side (docs/security.md "The launcher credential"): the service's
    // own origin only, then the launcher credential from `Authorization: Bearer`.
    // Only from there: every Cookie header is ignored, so a cookie another
    // server on 127.0.0.1 planted changes nothing. The use is recorded (a
    // browser sign-in expires after 30 days unused); the credential is kept on
    // the request for what it opens (media URLs, streams ended at revocation).
    launcher(ctx) {
      requireServiceOrigin(requestSource(ctx.req.headers), d.port());
      authenticateLauncher(ctx.req.headers.authorization || undefined, (hash) => {
        const used = d.credentials.use(hash);
        if (used) ctx.state.launcherCredential = used;
        return used?.hash ?? null;
      });
    },
    serviceOriginOnly: (ctx) => requireServiceOrigin(requestSource(ctx.req.headers), d.port()),
  };
}
