import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { hashToken } from '../core/auth';
import { replaceFileSync } from '../core/files';
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
 * server file the server keeps in the data dir while it listens.
 */

export const LOGIN_CODE_TTL_MS = 2 * 60 * 1000;
export const SERVER_FILE = 'server.json';

export function createLoginCode(store: LauncherStore, now = Date.now()): string {
  const code = randomBytes(32).toString('base64url');
  store.addLoginCode(hashToken(code), new Date(now + LOGIN_CODE_TTL_MS).toISOString());
  return code;
}

export function loginUrl(port: number, code: string): string {
  return `http://127.0.0.1:${port}/login?code=${code}`;
}

export interface ServerInfo {
  pid: number;
  port: number;
  url: string;
  started_at: string;
}

/**
 * Written (0600, temp name then rename) once the server listens. A temp file
 * of a server killed while it wrote its own (`server.json.<pid>.tmp`, that
 * pid gone) is removed first (no temporary file outlives a crash).
 */
export function writeServerInfo(dataDir: string, info: ServerInfo): void {
  const file = join(dataDir, SERVER_FILE);
  for (const name of readdirSync(dataDir)) {
    const m = /^server\.json\.(\d+)\.tmp$/.exec(name);
    if (m && Number(m[1]) !== process.pid && !processAlive(Number(m[1]))) rmSync(join(dataDir, name), { force: true });
  }
  replaceFileSync(file, `${JSON.stringify(info)}\n`);
}

/** Removed at a clean stop, only when it is still this process's. */
export function removeServerInfo(dataDir: string, pid = process.pid): void {
  const info = readServerInfo(dataDir);
  if (info && info.pid === pid) rmSync(join(dataDir, SERVER_FILE), { force: true });
}

/** The running server of a data dir, or null when none runs (no file, or its process is gone). */
export function readServerInfo(dataDir: string): ServerInfo | null {
  let info: ServerInfo;
  try {
    info = JSON.parse(readFileSync(join(dataDir, SERVER_FILE), 'utf8')) as ServerInfo;
  } catch {
    return null;
  }
  if (!Number.isSafeInteger(info.pid) || !Number.isSafeInteger(info.port)) return null;
  try {
    process.kill(info.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return null;
  }
  return info;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
