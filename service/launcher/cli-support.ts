import type { Db } from '../db/open';
import { createLoginCode, loginUrl, readServerInfo } from './login';
import { createLauncherStore } from './store';

/**
 * `backlot login-url`: a new one-time code written through the data dir's
 * database, for the server that the server file names; null when no server
 * runs there.
 */
export function newLoginUrl(open: (dataDir: string) => Db, dataDir: string): string | null {
  const info = readServerInfo(dataDir);
  if (!info) return null;
  const db = open(dataDir);
  try {
    return loginUrl(info.port, createLoginCode(createLauncherStore(db)));
  } finally {
    db.close();
  }
}
