import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import { z } from 'zod';
import { ApiError } from '../core/errors';
import { checkRequestSource, classifyAuthority, requestSource } from '../core/origin';
import { API_PREFIX, BACKLOT_PREFIX, isUnder } from '../core/paths';
import { zodToApiError } from '../core/route';

/**
 * The first middleware: request id, the headers every answer carries, the
 * Host/Origin guard (before any routing), and the one place where errors
 * become response bodies (docs/api.md "Errors").
 */
export function front(port: () => number, accessLog: boolean) {
  let sequence = 0;
  const prefix = `${randomUUID().slice(0, 8)}-`;
  return async (ctx: Context, next: Next): Promise<void> => {
    const requestId = prefix + (++sequence).toString(36);
    const started = accessLog ? performance.now() : 0;
    const res = ctx.res;
    res.setHeader('X-Request-Id', requestId);
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    try {
      const source = requestSource(ctx.req.headers);
      // Whether it is a person's navigation matters only to a request marked as from another site.
      const navigation = source.secFetchSite !== undefined && isStudioNavigation(ctx, port());
      ctx.state.source = checkRequestSource(source, port(), { navigation });
      await next();
    } catch (err) {
      const apiError = toApiError(err, ctx, requestId);
      ctx.status = apiError.status;
      ctx.type = 'application/json';
      ctx.body = apiError.toBody();
      // A refusal before the whole body was read (413, 507, 401 ...): close rather than
      // drain what is left of it, which may be gigabytes.
      if (!ctx.req.complete) ctx.set('Connection', 'close');
    } finally {
      if (accessLog) {
        const ms = (performance.now() - started).toFixed(1);
        process.stderr.write(`${new Date().toISOString()} ${requestId} ${ctx.method} ${ctx.path} ${ctx.status} ${ms}ms\n`);
      }
    }
  };
}

/**
 * A person opening a studio's page from elsewhere (the launcher's page on
 * 127.0.0.1 is another site): a top-level GET navigation to a studio's own
 * server, never to the API paths. Only these pass a `Sec-Fetch-Site: cross-site`.
 */
function isStudioNavigation(ctx: Context, port: number): boolean {
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return false;
  if (ctx.get('Sec-Fetch-Mode').toLowerCase() !== 'navigate') return false;
  if (isUnder(ctx.path, API_PREFIX) || ctx.path.startsWith(`${BACKLOT_PREFIX}/`)) return false;
  const host = classifyAuthority(ctx.get('Host'), port);
  return host?.kind === 'studio';
}

function toApiError(err: unknown, ctx: Context, requestId: string): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof z.ZodError) return zodToApiError(err, 'request');
  const status = (err as { status?: number }).status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // Errors raised by Koa or Node's parser (e.g. a malformed URL).
    return ApiError.badRequest((err as Error).message || 'Bad request.');
  }
  console.error(`[${requestId}] ${ctx.method} ${ctx.path} failed:`, err);
  return new ApiError(500, 'internal', `Internal error (request ${requestId}); see the service log.`);
}
