import { send, type HttpResponse } from './http';

/**
 * The browser sign-in as the launcher page's script does it (renderer/lib/credential.ts):
 * `GET /login?code=...` serves the page and spends nothing; the page posts the code
 * to `POST /login` from its own origin and keeps the credential it gets back.
 */

/** The code of a login URL printed by `login-url` or `serve`. */
export function loginCodeOf(url: string): string {
  const code = new URL(url.trim()).searchParams.get('code');
  if (!code) throw new Error(`not a login URL: ${url}`);
  return code;
}

/** `POST /login` as the page does it (its Origin, JSON); `headers` replace those. */
export function spendLoginCode(port: number, code: string, headers: Record<string, string | undefined> = {}): Promise<HttpResponse> {
  return send(port, {
    method: 'POST',
    path: '/login',
    body: { code },
    headers: { Origin: `http://127.0.0.1:${port}`, 'Sec-Fetch-Site': 'same-origin', 'Sec-Fetch-Mode': 'cors', ...headers },
  });
}
