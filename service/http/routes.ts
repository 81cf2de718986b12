import type { Context, Middleware, Next } from 'koa';
import { Router } from '@koa/router';
import { bindRoutes, type BindOptions, type Route } from '../core/route';
import { API_PREFIX } from '../core/paths';

/**
 * The route table, served. One router per first path segment (`kv`,
 * `records`, `launcher` ...), picked by a map lookup: a request is matched
 * against its own domain's few routes, not against every route of the
 * service in turn. A route can only match a request whose first segment is
 * its own, so the answer is the one a single router would give.
 */
export function routeDispatch(routes: readonly Route[], options: BindOptions): Middleware {
  const groups = new Map<string, Route[]>();
  // A route whose path starts with a parameter could match any first segment: it joins every group.
  const anywhere = routes.filter((r) => firstSegment(r.path, 1) === '');
  for (const r of routes) {
    const key = firstSegment(r.path, 1);
    if (key === '') continue;
    if (!groups.has(key)) groups.set(key, [...anywhere]);
    groups.get(key)!.push(r);
  }
  const routers = new Map<string, Middleware>();
  for (const [key, group] of groups) routers.set(key, served(group, options));
  const fallback = anywhere.length > 0 ? served(anywhere, options) : null;
  const start = API_PREFIX.length + 1;
  return (ctx: Context, next: Next) => {
    const path = ctx.path;
    if (!path.startsWith(API_PREFIX) || path.charCodeAt(API_PREFIX.length) !== 47 /* '/' */) return next();
    const router = routers.get(firstSegment(path, start)) ?? fallback;
    return router ? router(ctx, next) : next();
  };
}

function served(routes: readonly Route[], options: BindOptions): Middleware {
  const router = new Router({ prefix: API_PREFIX, sensitive: true, strict: true });
  bindRoutes(router, routes, options);
  return router.routes() as unknown as Middleware;
}

/** The literal start of a path's first segment, from `start`: letters, digits, `_`, `-`; '' when it starts otherwise. */
function firstSegment(path: string, start: number): string {
  let end = start;
  while (end < path.length) {
    const c = path.charCodeAt(end);
    const plain = (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 95 || c === 45;
    if (!plain) break;
    end++;
  }
  return path.slice(start, end);
}
