import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The small HTML pages the proxy answers with itself on a studio origin (a
 * studio that is not running gets a 503 page: docs/api.md "The studio origin"), and the plain answers it writes on a
 * raw socket when an upgrade cannot be passed on. Pure text building plus one sender.
 */

export interface ProxyPage {
  status: number;
  title: string;
  /** Paragraphs of plain text; `code` spans become <code>. Every value is escaped here. */
  lines: (string | { code: string })[][];
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

export function unknownStudioPage(studioId: string): ProxyPage {
  return {
    status: 404,
    title: `No studio named ${studioId}`,
    lines: [['Nothing is installed under this name. Install it from the Backlot launcher.']],
  };
}

export function notRunningPage(studioId: string, name: string, state: string): ProxyPage {
  return {
    status: 503,
    title: `${name} is not running`,
    lines: [
      ['Its state is ', { code: state }, '.'],
      ['Start it from the Backlot launcher or ', { code: `bin/backlot start ${studioId}` }, ', then reload this page.'],
    ],
  };
}

export function badGatewayPage(studioId: string): ProxyPage {
  return {
    status: 502,
    title: `${studioId} did not answer`,
    lines: [["The studio is running but its server refused the connection or closed it before answering. Its log is in the Backlot launcher."]],
  };
}

export function gatewayTimeoutPage(studioId: string, seconds: number): ProxyPage {
  return {
    status: 504,
    title: `${studioId} did not answer in time`,
    lines: [[`The studio's server sent no answer within ${seconds} s. Its log is in the Backlot launcher.`]],
  };
}

export function stoppingPage(): ProxyPage {
  return { status: 503, title: 'Backlot is stopping', lines: [['The service is shutting down.']] };
}

const STYLE = [
  ':root{color-scheme:light dark;--bg:#f7f7f5;--fg:#1d1d1f;--muted:#5f6368;--card:#fff;--line:#dadce0}',
  '@media (prefers-color-scheme:dark){:root{--bg:#161618;--fg:#ececec;--muted:#a0a4a8;--card:#222226;--line:#3a3a3f}}',
  'body{margin:0;min-height:100vh;display:grid;place-items:center;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,sans-serif}',
  'main{max-width:34rem;margin:1rem;padding:1.5rem 2rem;background:var(--card);border:1px solid var(--line);border-radius:12px}',
  'h1{font-size:1.25rem;margin:0 0 .75rem}p{margin:.5rem 0;color:var(--muted)}',
  'code{font:.9em ui-monospace,monospace;padding:.1em .3em;border:1px solid var(--line);border-radius:4px;color:var(--fg);white-space:nowrap}',
  'small{display:block;margin-top:1rem;color:var(--muted)}',
].join('');

export function renderPage(page: ProxyPage): string {
  const paragraphs = page.lines
    .map((parts) => `<p>${parts.map((p) => (typeof p === 'string' ? escapeHtml(p) : `<code>${escapeHtml(p.code)}</code>`)).join('')}</p>`)
    .join('');
  const title = escapeHtml(page.title);
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<title>${title}</title><style>${STYLE}</style></head>` +
    `<body><main><h1>${title}</h1>${paragraphs}<small>${page.status} · Backlot</small></main></body></html>`
  );
}

/** The inline style is the only thing a proxy page may load or run. */
export const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'";

/**
 * Answers with a page. A request whose body was not read to the end (an upload to a
 * stopped studio) gets `Connection: close` rather than a drain of what is left.
 */
export function sendPage(req: IncomingMessage, res: ServerResponse, page: ProxyPage): void {
  const body = Buffer.from(renderPage(page));
  res.writeHead(page.status, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': body.length,
    'Content-Security-Policy': PAGE_CSP,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...(req.complete ? {} : { Connection: 'close' }),
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

const REASONS: Record<number, string> = { 404: 'Not Found', 502: 'Bad Gateway', 503: 'Service Unavailable' };

/** A whole HTTP/1.1 answer for a raw socket (a refused upgrade). */
export function plainResponse(status: number, text: string): string {
  const body = Buffer.from(`${text}\n`);
  return (
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\n` +
    `Content-Type: text/plain; charset=utf-8\r\nContent-Length: ${body.length}\r\n` +
    `Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body.toString()}`
  );
}
