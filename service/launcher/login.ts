import { randomBytes } from 'node:crypto';
import { hashToken } from '../core/auth';
import type { LauncherStore } from './store';

/**
 * The browser's way in (docs/security.md "The launcher credential"): a
 * one-time login URL `http://127.0.0.1:PORT/login?code=...`. The code is 32
 * random bytes, stored only as its SHA-256, works once and for two minutes.
 * Opening the URL spends nothing: the page's own script posts the code
 * (pages.ts) and gets a launcher credential back, which it keeps in the
 * launcher origin's localStorage and sends as `Authorization: Bearer`. No
 * cookie is ever set: a browser sends a cookie to every port of its host.
 * `serve` prints one URL at start and `backlot login-url` makes more: the
 * CLI writes the code into the database and finds the server's port in the
 * server file the server keeps in the data dir while it listens
 * (core/server-file.ts).
 */

export const LOGIN_CODE_TTL_MS = 2 * 60 * 1000;

export function createLoginCode(store: LauncherStore, now = Date.now()): string {
  const code = randomBytes(32).toString('base64url');
  store.addLoginCode(hashToken(code), new Date(now + LOGIN_CODE_TTL_MS).toISOString());
  return code;
}

export function loginUrl(port: number, code: string): string {
  return `http://127.0.0.1:${port}/login?code=${code}`;
}
