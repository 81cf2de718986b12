import { toolPath } from '../media';

/**
 * The environment a studio's processes get (docs/studios.md "The environment a studio gets"): a clean
 * one, never the service's. Steps get PATH, HOME and LANG (and on Windows the
 * few variables its programs cannot start without) plus the manifest's `env`;
 * the start command also gets PORT, BACKLOT_URL, BACKLOT_TOKEN and the
 * studio's folders and media tools. No variable of the service leaks, so no
 * other token or credential does. Pure apart from the media tool lookup.
 */

const WINDOWS_ESSENTIALS = ['SYSTEMROOT', 'WINDIR', 'COMSPEC', 'PATHEXT', 'TEMP', 'TMP', 'USERPROFILE', 'APPDATA', 'LOCALAPPDATA'];

export function stepEnv(manifestEnv: Record<string, string> | undefined, base: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {
    PATH: base.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: base.HOME ?? base.USERPROFILE ?? '/',
    LANG: base.LANG ?? 'C.UTF-8',
  };
  if (process.platform === 'win32') {
    for (const name of WINDOWS_ESSENTIALS) if (base[name] !== undefined) env[name] = base[name]!;
  }
  return { ...env, ...manifestEnv };
}

export interface RunEnvInput {
  port: number;
  baseUrl: string;
  token: string;
  studioId: string;
  stageDir: string;
  dataDir: string;
}

export function runEnv(
  manifestEnv: Record<string, string> | undefined,
  input: RunEnvInput,
  base: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env = stepEnv(manifestEnv, base);
  env.PORT = String(input.port);
  env.BACKLOT_URL = input.baseUrl;
  env.BACKLOT_TOKEN = input.token;
  env.BACKLOT_STUDIO_ID = input.studioId;
  env.BACKLOT_STAGE_DIR = input.stageDir;
  env.BACKLOT_DATA_DIR = input.dataDir;
  for (const [tool, name] of [['ffmpeg', 'BACKLOT_FFMPEG'], ['ffprobe', 'BACKLOT_FFPROBE']] as const) {
    const found = toolPath(tool, base);
    if (found) env[name] = found;
  }
  return env;
}
