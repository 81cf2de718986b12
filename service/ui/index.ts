import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Context, Next } from 'koa';
import { requestSource, requireServiceOrigin } from '../core/origin';

/**
 * The pages a person sees (renderer/README.md): the launcher UI at `/` and the editor
 * surface at `/editor/` are small HTML shells that load one script and one
 * stylesheet built from renderer/ (tools/build-renderer.ts → dist/renderer/),
 * served here under `/ui/`. Only on the service's own origin; no inline code,
 * so the pages run under `script-src 'self'`.
 *
 *   GET /ui/{launcher,editor}.{js,css}[.map]   the built files (no credential: code, not data)
 */

/** The pages' policy: their own scripts, styles, images and media, and HTTP to their own origin only. */
export const APP_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob:",
  "media-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const FILE = /^\/ui\/(launcher|editor)\.(js|css)(\.map)?$/;
const TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' };

/** Where tools/build-renderer.js writes: dist/renderer, beside dist/service. */
export const RENDERER_DIR = resolve(__dirname, '..', '..', 'renderer');

interface Built {
  body: Buffer;
  etag: string;
}

export function uiMiddleware(options: { port: () => number; dir?: string }) {
  const dir = options.dir ?? RENDERER_DIR;
  const cache = new Map<string, Promise<Built | null>>();
  const load = (name: string): Promise<Built | null> => {
    let p = cache.get(name);
    if (!p) {
      p = readFile(join(dir, name)).then(
        (body) => ({ body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` }),
        () => null,
      );
      cache.set(name, p);
    }
    return p;
  };

  return async (ctx: Context, next: Next): Promise<void> => {
    if (!ctx.path.startsWith('/ui/')) return next();
    const m = FILE.exec(ctx.path);
    if (!m || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    requireServiceOrigin(requestSource(ctx.req.headers), options.port());
    const name = ctx.path.slice('/ui/'.length);
    const built = await load(name);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Cache-Control', 'no-cache');
    if (!built) {
      ctx.status = 503;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = `The pages are not built (${name} is missing): run \`npm run build\`.\n`;
      return;
    }
    ctx.set('ETag', built.etag);
    if (ctx.get('If-None-Match') === built.etag) {
      ctx.status = 304;
      return;
    }
    ctx.type = m[3] ? 'application/json; charset=utf-8' : TYPES[m[2]!]!;
    ctx.body = built.body;
  };
}

/** The HTML shell of a page: its stylesheet, its script, a root element and what shows while it loads. */
export function appShell(page: 'launcher' | 'editor', title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${title}</title>
<link rel="stylesheet" href="/ui/${page}.css">
<script src="/ui/${page}.js" defer></script>
</head>
<body>
<div id="app" data-page="${page}"><p class="loading">Loading…</p></div>
<noscript><p>Backlot's pages need JavaScript.${page === 'launcher' ? ' To sign in, run <code>backlot login-url</code> and open the link it prints.' : ''}</p></noscript>
</body>
</html>
`;
}

/** Headers of every page: its policy, no referrer, never framed. */
export function setPageHeaders(ctx: Context): void {
  ctx.set('Content-Security-Policy', APP_CSP);
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Cache-Control', 'no-store');
}
