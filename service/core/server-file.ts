import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { replaceFileSync } from './files';

/**
 * The server file, DIR/server.json: where the running server of a data dir
 * listens and its pid. The server writes it once it listens and removes it at
 * a clean stop; `login-url`, the CLI's launcher commands and a refused second
 * `serve` (docs/api.md "One server per data dir") read it. Kept apart from
 * the launcher domain so that reading it loads nothing else.
 */

export const SERVER_FILE = 'server.json';

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
