import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * The default data dir (README.md, "The CLI"): $BACKLOT_HOME, else the platform's
 * per-user app-data dir.
 */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  if (env.BACKLOT_HOME) return env.BACKLOT_HOME;
  if (platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'Backlot');
  if (platform === 'win32') return join(env.APPDATA ?? join(homedir(), 'AppData', 'Roaming'), 'Backlot');
  return join(env.XDG_DATA_HOME || join(homedir(), '.local', 'share'), 'backlot');
}

/** Where a studio's own folders live: stage (handed over for adoption) and data. */
export function studioDirs(dataDir: string, studioId: string): { stage_dir: string; data_dir: string } {
  const root = join(dataDir, 'studios', studioId);
  return { stage_dir: join(root, 'stage'), data_dir: join(root, 'data') };
}
