import type { Context, Next } from 'koa';
import { hashToken } from '../core/auth';
import { requireServiceOrigin } from '../core/origin';
import type { LauncherCredentials } from '../studios';
import { launcherCookie } from './login';
import type { LauncherStore } from './store';
import { appShell, setPageHeaders } from '../ui';

/**
 * The service's own pages outside /api/v1 (decisions §10):
 *
 *   GET /login?code=...   spends a one-time code: sets the launcher cookie, 303 to /
 *   GET /                 the launcher's home page
 *
 * Only on the service's own origin (a studio's origin never reaches them:
 * the app proxies every other path of a studio host to the studio).
 */

export interface PagesDeps {
  store: LauncherStore;
  credentials: LauncherCredentials;
  port(): number;
  /** Whether the request carries a live launcher credential (cookie or header). */
  signedIn(ctx: Context): boolean;
}

const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function launcherPages(d: PagesDeps) {
  return async (ctx: Context, next: Next): Promise<void> => {
    if (ctx.path !== '/login' && ctx.path !== '/') return next();
    // A HEAD (a link preview, a prefetch) must not spend a one-time code.
    if (ctx.method !== 'GET' && !(ctx.method === 'HEAD' && ctx.path === '/')) return next();
    requireServiceOrigin(
      { host: ctx.get('Host') || undefined, origin: ctx.get('Origin') || undefined, secFetchSite: ctx.get('Sec-Fetch-Site') || undefined },
      d.port(),
    );
    ctx.set('Content-Security-Policy', PAGE_CSP);
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('X-Frame-Options', 'DENY');
    if (ctx.path === '/login') return login(ctx, d);
    ctx.type = 'text/html; charset=utf-8';
    if (d.signedIn(ctx)) {
      // The launcher UI (renderer/launcher): a shell with no data in it; the page reads /api/v1/launcher.
      setPageHeaders(ctx);
      ctx.body = appShell('launcher', 'Backlot');
    } else {
      ctx.body = signInPage();
    }
  };
}

function login(ctx: Context, d: PagesDeps): void {
  const code = typeof ctx.query.code === 'string' ? ctx.query.code : '';
  if (!/^[A-Za-z0-9_-]{43}$/.test(code) || !d.store.spendLoginCode(hashToken(code))) {
    ctx.status = 401;
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = page(
      'This sign-in link does not work',
      '<p>It was used already, is older than two minutes, or was mistyped.</p><p>Get a new one with <code>backlot login-url</code>.</p>',
    );
    return;
  }
  ctx.set('Set-Cookie', launcherCookie(d.credentials.create()));
  ctx.status = 303;
  ctx.set('Location', '/');
  ctx.body = '';
}

function signInPage(): string {
  return page(
    'Sign in to Backlot',
    '<p>This page needs the launcher\'s sign-in. Run</p><pre><code>bin/backlot login-url</code></pre>' +
      '<p>and open the link it prints (it works once, for two minutes). <code>backlot serve</code> prints one when it starts.</p>',
  );
}

export function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>
:root{color-scheme:light dark;font-family:system-ui,sans-serif}body{max-width:46rem;margin:3rem auto;padding:0 1rem;line-height:1.5}
code,pre{font-family:ui-monospace,monospace}pre{padding:.6rem .8rem;border-radius:6px;background:#8882}table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #8884}a{color:#2563eb}@media (prefers-color-scheme:dark){a{color:#7aa2ff}}
</style></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
