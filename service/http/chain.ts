import { Readable } from 'node:stream';
import Koa, { type Context, type Middleware, type Next } from 'koa';
import { ApiError } from '../core/errors';
import { API_PREFIX, isUnder } from '../core/paths';
import { endStreamOnRevocation, type RevocationWatch } from '../core/revocation';
import type { Route } from '../core/route';
import { uiMiddleware } from '../ui';
import { editorMiddleware, type EditorHub } from '../editor';
import { launcherPages, type Launcher } from '../launcher';
import type { StudioProxy } from '../proxy';
import type { LauncherCredentials } from '../studios';
import type { TokenGrants } from '../core/auth';
import type { Callers } from './callers';
import { front } from './front';
import { routeDispatch } from './routes';
import { studioOrigin } from './studio-origin';

/**
 * The HTTP middleware chain, in the order a request meets it (docs/api.md
 * "Order of checks"): the front (request id, common headers, Host/Origin,
 * errors), a studio's origin, the service's pages, the OpenAPI document,
 * the routes, and the not-found answer. Each step that is not for a
 * request passes it on after a path test, so a data API request pays for
 * none of the pages, and a launcher stream's revocation watch is set up
 * only on the launcher's paths.
 */

export interface ChainDeps {
  port: () => number;
  accessLog: boolean;
  bodyLimit: () => number;
  routes: readonly Route[];
  openapiText: string;
  callers: Callers;
  launcher: Launcher;
  proxy: StudioProxy;
  grants: TokenGrants;
  credentials: LauncherCredentials;
  editor: EditorHub;
  revocations: RevocationWatch;
}

const LAUNCHER_PATH = `${API_PREFIX}/launcher`;
const OPENAPI_PATH = `${API_PREFIX}/openapi.json`;

export function createHttpApp(d: ChainDeps): Koa {
  const app = new Koa();
  // Koa reports errors of a reply body that fails after the headers went out. A
  // client that goes away mid-stream (an event stream closed, a download cut
  // short) is how streams end, not a fault: only anything else is logged.
  app.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'ERR_STREAM_PREMATURE_CLOSE' || err.code === 'ECONNRESET' || err.code === 'EPIPE') return;
    // A request the client malformed after its headers (bad chunked framing): node:http answers it and drops the connection.
    if (err.code?.startsWith('HPE_')) return;
    console.error('reply failed after it began:', err);
  });
  app.use(front(d.port, d.accessLog));
  app.use(studioOrigin(d));
  app.use(outsideApi(pages(d)));
  app.use(openapiDocument(d.openapiText));
  app.use(launcherStreams(d));
  app.use(routeDispatch(d.routes, { bodyLimit: d.bodyLimit, authenticate: d.callers.studio, authenticateLauncher: d.callers.launcher, serviceOriginOnly: d.callers.serviceOriginOnly }));
  app.use(notFound(d.callers));
  return app;
}

/** The service's own pages: the UI's files, the editor surface, the launcher's page and sign-in. None is under the API prefix. */
function pages(d: ChainDeps): Middleware {
  const ui = uiMiddleware({ port: d.port });
  const editor = editorMiddleware({ hub: d.editor, credentials: d.credentials, port: d.port });
  const launcher = launcherPages({ store: d.launcher.store, credentials: d.credentials, port: d.port, bodyLimit: d.bodyLimit });
  return (ctx, next) => ui(ctx, () => editor(ctx, () => launcher(ctx, next)));
}

/** Runs `inner` only for paths outside `/api/v1`; API requests go straight on. */
function outsideApi(inner: Middleware): Middleware {
  return (ctx, next) => (isUnder(ctx.path, API_PREFIX) ? next() : inner(ctx, next));
}

function openapiDocument(text: string): Middleware {
  return (ctx, next) => {
    if (ctx.path !== OPENAPI_PATH || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    ctx.type = 'application/json';
    ctx.body = text;
    return Promise.resolve();
  };
}

/**
 * A launcher event stream (`/launcher/events`, job and studio logs) ends when
 * its credential is revoked. Only launcher routes take the credential, and
 * all of them are under `/launcher` (createHttpApp checks it).
 */
function launcherStreams(d: ChainDeps): Middleware {
  for (const r of d.routes) {
    if (r.capability === 'launcher' && !isUnder(r.path, '/launcher') && !r.path.startsWith('/launcher:')) {
      throw new Error(`The launcher route ${r.method} ${r.path} is not under /launcher.`);
    }
  }
  return async (ctx: Context, next: Next) => {
    if (!isLauncherPath(ctx.path)) return next();
    await next();
    const used = ctx.state.launcherCredential as { hash: Buffer } | undefined;
    if (used && ctx.body instanceof Readable && ctx.response.type === 'text/event-stream') {
      endStreamOnRevocation(d.revocations, ctx.body, () => d.credentials.resolve(used.hash) !== null);
    }
  };
}

function isLauncherPath(path: string): boolean {
  return isUnder(path, LAUNCHER_PATH) || path.startsWith(`${LAUNCHER_PATH}:`);
}

/** Nothing matched: the token is still checked first (401 before 404); under /launcher, the launcher credential. */
function notFound(callers: Callers): Middleware {
  return (ctx) => {
    if (isLauncherPath(ctx.path)) callers.launcher(ctx);
    else callers.studio(ctx);
    throw ApiError.notFound('The path');
  };
}
