import type { Readable } from 'node:stream';
import type { Context } from 'koa';
import type { Router } from '@koa/router';
import { z, type ZodType } from 'zod';
import { requireCapability, type Capability, type Principal } from './auth';
import { readJsonBody } from './body';
import { ApiError } from './errors';
import { parseIfMatch, quoteEtag, type IfMatch } from './etag';

/**
 * A route is data: method, path, capability, zod schemas for what it takes and
 * gives, and a handler. The same table registers the router and generates the
 * OpenAPI document, so the reference cannot drift from the code.
 *
 * Order of checks (docs/api.md "Order of checks"): the capability, then params and query
 * (400), then whether the caller may see the resource (404), then the body
 * (400 / 413), then the handler (404, 409, 422 ...). Host, Origin and the
 * token were checked by the app before routing.
 */

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface Reply {
  status: number;
  /** A value to send as JSON, or a string that is already JSON text. */
  body?: unknown;
  rawJson?: string;
  etag?: string;
  /**
   * Bytes from disk or a live event stream. Koa pipes it and destroys it when
   * the client goes away; `type` names its media type.
   */
  stream?: Readable;
  /** Media type of `stream` or of a Buffer `body`. */
  type?: string;
  /** Further response headers (Content-Range, Cache-Control ...). */
  headers?: Record<string, string>;
}

export interface RouteInput<P, Q, B, V = void> {
  params: P;
  query: Q;
  body: B;
  /** What `visible` found (the resource it checked), so the handler need not read it again. */
  seen: V;
  principal: Principal;
  ifMatch: IfMatch;
  ctx: Context;
}

export interface Route<P = any, Q = any, B = any, V = any> {
  method: Method;
  /** OpenAPI path template under base_url: `{name}` one segment, `{name+}` the rest of the path. */
  path: string;
  summary: string;
  description?: string;
  /**
   * The capability a studio token needs, or `launcher`: the route is the
   * user's side (docs/api.md §Launcher), opened by the launcher credential
   * alone and only from the service's own origin; no studio token ever opens
   * it. Or `media_url`: the path is its own credential (a short-lived signed
   * media URL, docs/api.md §Media URLs), checked by the route's `visible`;
   * no header opens it, and only the service's own origin reaches it.
   */
  capability: Capability | 'launcher' | 'media_url';
  /**
   * Capabilities that depend on the request (e.g. `kv.shared` for the `shared`
   * namespace, `gallery.read_all` for `scope=all`); checked before any 400.
   */
  extraCapabilities?: (rawParams: Record<string, string>, rawQuery: Context['query']) => Capability[];
  params?: ZodType<P>;
  query?: ZodType<Q>;
  /**
   * For operations on an existing resource: throws 404 when the caller may not
   * see it. Runs before the body is read, because something the caller may not
   * see is 404 before any other answer about it (docs/api.md "Order of checks").
   */
  visible?: (input: { params: P; principal: Principal }) => V;
  body?: ZodType<B>;
  /**
   * The body is or wraps a stored document (docs/api.md "Documents"): a body nested past the
   * documents' depth is 400 `invalid_document`. On other routes it is a malformed
   * body, 400 `bad_request`. Either way it is refused before the parse (core/body.ts).
   */
  documentBody?: true;
  /** Every member of the body is optional, and no body at all means `{}` (`:accept`, `:approve`). */
  bodyOptional?: true;
  /** Body media type for the reference (default application/json). */
  bodyType?: 'application/json' | 'application/merge-patch+json';
  /**
   * The handler reads `ctx.req` itself (an upload streamed to disk); no JSON
   * body is read and `body` is not used. Described as any media type.
   */
  rawBody?: { description: string };
  /** Media type of a success reply that is not JSON (`image/webp`, `text/event-stream`). */
  successType?: string;
  headers?: { name: string; description: string; required?: boolean }[];
  success: { status: number; description: string; schema?: ZodType; etag?: boolean };
  errors: number[];
  handle(input: RouteInput<P, Q, B, V>): Reply | Promise<Reply>;
}

/** A server-sent event stream as a reply (no caching, no proxy buffering). */
export function eventStreamReply(stream: Readable): Reply {
  return { status: 200, stream, type: 'text/event-stream', headers: { 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' } };
}

/** Helper that keeps a route's input types inferred from its schemas. */
export function route<P = Record<string, never>, Q = Record<string, never>, B = undefined, V = void>(
  r: Route<P, Q, B, V>,
): Route<P, Q, B, V> {
  return r;
}

export interface BindOptions {
  bodyLimit: () => number;
  /** Resolves the caller (401 / 403 `bad_origin`); memoised per request by the app. */
  authenticate: (ctx: Context) => Principal;
  /** The launcher side's check (403 `bad_origin` off the service's origin, 401 without the credential). */
  authenticateLauncher: (ctx: Context) => void;
  /** A `media_url` route's check before its path's own (403 `bad_origin` off the service's origin). */
  serviceOriginOnly: (ctx: Context) => void;
}

/**
 * Who calls a `launcher` route: the user, never a studio. Its studio id is
 * one no studio can have, so nothing studio-scoped can match it by accident.
 */
export const LAUNCHER_PRINCIPAL: Principal = Object.freeze({ studioId: '', capabilities: new Set<string>() });

/**
 * The principal a launcher-side mirror acts as (launcherMirror): `studioId` a
 * studio's id (the owner of what it touches), or '' (no studio's) for a reader
 * of every studio's items; `capabilities` what the mirrored handler consults
 * (`gallery.read_all` widens a reader to every studio).
 */
export function actingPrincipal(studioId: string, capabilities: readonly string[]): Principal {
  return Object.freeze({ studioId, capabilities: new Set(capabilities) });
}

/** What a launcher-side mirror of a studio route acts as, and what it changes of the original. */
export interface LauncherMirror<P, Q> {
  /**
   * The studio the route acts as (docs/api.md "Launcher-side reads and edits"):
   * the owner of the resource the params name, or a reader of every studio
   * (`gallery.read_all`). Throws 404 when the launcher may not reach it. Runs
   * where `visible` runs: after params and query, before any body is read.
   */
  actingAs: (params: P) => Principal;
  /** The launcher's query, when it differs (e.g. without `scope`); its output is the original's query. */
  query?: ZodType<Q>;
  summary?: string;
  description?: string;
}

/**
 * A studio route served on the launcher's side under `/launcher`: the same
 * schemas, `visible` check and handler, run with the principal `actingAs`
 * gives instead of a token's, behind the launcher credential (service origin
 * only). Not a copy of the logic: a change to the studio route changes its
 * mirror. The studio route's extra capabilities are not asked for: the acting
 * principal is the launcher's choice, not a token's grant.
 */
export function launcherMirror<P, Q, B, V>(r: Route<P, Q, B, V>, m: LauncherMirror<P, Q>): Route<P, Q, B, { acting: Principal; seen: V }> {
  const { extraCapabilities: _ignored, visible, handle, ...rest } = r;
  return {
    ...rest,
    path: `/launcher${r.path}`,
    summary: m.summary ?? `${r.summary} (the launcher)`,
    description: m.description ?? r.description,
    capability: 'launcher',
    query: m.query ?? r.query,
    errors: [...new Set([...r.errors, 404])].sort((a, b) => a - b),
    visible: ({ params }) => {
      const acting = m.actingAs(params);
      return { acting, seen: visible ? visible({ params, principal: acting }) : (undefined as V) };
    },
    handle: (input) => handle({ ...input, principal: input.seen.acting, seen: input.seen.seen }),
  };
}

/** A route of a table by method and path (a mirror's original); throws when the table has none. */
export function findRoute(routes: readonly Route[], method: Method, path: string): Route {
  const found = routes.find((r) => r.method === method && r.path === path);
  if (!found) throw new Error(`No route ${method} ${path}`);
  return found;
}

/** Registers routes on a router; more literal routes first (`/x/{id}:activate` before `/x/{id}`). */
export function bindRoutes(router: Router, routes: readonly Route[], options: BindOptions): void {
  const ordered = [...routes].sort((a, b) => literalLength(b.path) - literalLength(a.path));
  for (const r of ordered) {
    const plan = planOf(r, options);
    router.register(toRouterPath(r.path), [r.method], (ctx: Context) => {
      const reply = run(r, plan, ctx, options);
      if (reply instanceof Promise) return reply.then((done) => send(ctx, done));
      send(ctx, reply);
      return undefined;
    });
  }
}

const ABSENT: IfMatch = { kind: 'absent' };

/** The header a conditional write declares; only routes that declare it read it. */
export const IF_MATCH_HEADER = { name: 'If-Match', description: 'The etag last read (quoted or bare), or `*`.' };

/** What a route's checks need that does not change between requests. */
interface Plan {
  /** Only routes that take If-Match read it: elsewhere (a GET) the header means nothing. */
  takesIfMatch: boolean;
  readBody: ((ctx: Context) => Promise<unknown>) | undefined;
}

function planOf(r: Route, options: BindOptions): Plan {
  const deepCode = r.documentBody ? 'invalid_document' : 'bad_request';
  return {
    // By name: a route may declare a copy of IF_MATCH_HEADER (e.g. `{ ...IF_MATCH_HEADER, required: true }`).
    takesIfMatch: r.headers?.some((h) => h.name === IF_MATCH_HEADER.name) ?? false,
    readBody: r.body ? (ctx) => readJsonBody(ctx.req, options.bodyLimit(), deepCode, r.bodyOptional === true) : undefined,
  };
}

/** The checks in their order, then the handler. */
function run(r: Route, plan: Plan, ctx: Context, options: BindOptions): Reply | Promise<Reply> {
  let principal: Principal;
  if (r.capability === 'launcher') {
    options.authenticateLauncher(ctx);
    principal = LAUNCHER_PRINCIPAL;
  } else if (r.capability === 'media_url') {
    options.serviceOriginOnly(ctx);
    principal = LAUNCHER_PRINCIPAL;
  } else {
    principal = options.authenticate(ctx);
    requireCapability(principal, r.capability);
  }
  const rawParams = pathParams(ctx);
  if (r.extraCapabilities) for (const cap of r.extraCapabilities(rawParams, ctx.query)) requireCapability(principal, cap);

  const params = r.params ? parseWith(r.params, rawParams, 'path') : rawParams;
  const query = r.query ? parseWith(r.query, ctx.query, 'query') : {};
  const seen = r.visible?.({ params, principal });
  const ifMatch = plan.takesIfMatch ? parseIfMatch(ctx.req.headers['if-match'] || undefined) : ABSENT;
  if (!plan.readBody) return r.handle({ params, query, principal, ifMatch, ctx, seen, body: undefined });
  return plan.readBody(ctx).then((raw) => r.handle({ params, query, principal, ifMatch, ctx, seen, body: parseWith(r.body!, raw, 'body') }));
}

function send(ctx: Context, reply: Reply): void {
  ctx.status = reply.status;
  if (reply.etag !== undefined) ctx.set('ETag', quoteEtag(reply.etag));
  if (reply.headers) ctx.set(reply.headers);
  if (reply.stream !== undefined) {
    ctx.type = reply.type ?? 'application/octet-stream';
    ctx.body = reply.stream;
  } else if (reply.rawJson !== undefined) {
    ctx.type = 'application/json';
    ctx.body = reply.rawJson;
  } else if (reply.body !== undefined) {
    if (reply.type !== undefined) ctx.type = reply.type;
    ctx.body = reply.body;
  }
}

/**
 * The router's percent-decoded path parameters. It passes a malformed escape
 * (`%ZZ`, a cut UTF-8 sequence) through as it stands, which would make two
 * paths name one key; such a path is refused instead.
 */
function pathParams(ctx: Context): Record<string, string> {
  const path = ctx.path;
  if (path.includes('%')) {
    try {
      decodeURIComponent(path);
    } catch {
      throw ApiError.badRequest('The path has a malformed percent-encoding.');
    }
  }
  return { ...(ctx as Context & { params?: Record<string, string> }).params };
}

/** Parses with zod; failures become 400 `bad_request` naming each field. */
export function parseWith<T>(schema: ZodType<T>, value: unknown, where: 'path' | 'query' | 'body'): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw zodToApiError(result.error, where);
}

export function zodToApiError(error: z.ZodError, where: string): ApiError {
  const issues = error.issues.map((i) => ({
    field: [where, ...i.path.map(String)].join('.'),
    message: i.message,
  }));
  const first = issues[0];
  const message = first ? `Invalid ${first.field}: ${first.message}` : `Invalid ${where}.`;
  return ApiError.badRequest(message, { issues });
}

function toRouterPath(path: string): string {
  return path
    .replace(/:/g, '\\:')
    .replace(/\{([a-z_]+)\+\}/g, '*$1')
    .replace(/\{([a-z_]+)\}/g, ':$1');
}

function literalLength(path: string): number {
  return path.replace(/\{[^}]+\}/g, '').length;
}
