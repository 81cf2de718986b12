/**
 * The launcher credential in a page (docs/security.md "The launcher
 * credential"): kept in the launcher origin's own localStorage (scoped by
 * host and port, so no other server on 127.0.0.1 can read it, and no cookie
 * carries it there) and sent as `Authorization: Bearer` by api.ts and sse.ts.
 *
 * It arrives through the one-time login URL: `/login?code=...` serves the
 * launcher page, whose script posts the code to `POST /login` (this origin
 * only) and gets the credential back. Opening the URL spends nothing, so a
 * prefetch or a link preview cannot use it up. The code then leaves the
 * address bar and the history (replaced by `/`).
 */

const KEY = 'backlot.launcher';

export function credential(): string | null {
  try {
    return localStorage.getItem(KEY);
  } catch {
    return null; // storage disabled: signed out
  }
}

/** The header every call of the launcher's side carries (none when signed out). */
export function authHeaders(): Record<string, string> {
  const c = credential();
  return c ? { Authorization: `Bearer ${c}` } : {};
}

export function forgetCredential(): void {
  try {
    localStorage.removeItem(KEY);
  } catch {
    // nothing stored
  }
}

/** Calls `listener` when another page of this origin signs in or out (the editor window after the launcher's sign-in). */
export function onCredentialChange(listener: () => void): void {
  window.addEventListener('storage', (e) => {
    if (e.key === KEY || e.key === null) listener();
  });
}

export type SignIn = { kind: 'none' } | { kind: 'signed_in' } | { kind: 'failed'; message: string };

/**
 * On `/login?code=...`: spends the code and keeps the credential. The address
 * becomes `/` whatever happens, so the code never stays in the history.
 */
export async function completeSignIn(): Promise<SignIn> {
  if (location.pathname !== '/login') return { kind: 'none' };
  const code = new URLSearchParams(location.search).get('code') ?? '';
  history.replaceState(null, '', '/');
  try {
    const res = await fetch('/login', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ code }),
      credentials: 'omit',
    });
    const body = (await res.json().catch(() => ({}))) as { credential?: string; message?: string };
    if (!res.ok || typeof body.credential !== 'string') {
      return { kind: 'failed', message: body.message ?? `The sign-in link was refused (HTTP ${res.status}).` };
    }
    localStorage.setItem(KEY, body.credential);
    return { kind: 'signed_in' };
  } catch (err) {
    return { kind: 'failed', message: `Signing in failed: ${(err as Error).message}` };
  }
}
