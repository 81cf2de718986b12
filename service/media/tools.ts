import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { ApiError } from '../core/errors';
import type { MediaTool } from './types';

/**
 * Where ffmpeg and ffprobe are found (decisions §1 "media tools"), in this
 * order, resolved afresh at every call (a few stat calls):
 *
 * 1. `BACKLOT_FFMPEG` / `BACKLOT_FFPROBE`. When set (non-empty), that path and
 *    nothing else: an executable regular file there, or the tool is
 *    unavailable (null). A wrong override never falls through to another copy.
 *    A relative path is taken from the service's working directory.
 * 2. The bundled binary: the optional `ffmpeg-static` package, ffmpeg only
 *    (it ships no ffprobe, so ffprobe has no bundled copy and goes to 3).
 * 3. The first executable regular file named after the tool in an absolute
 *    `PATH` entry (relative and empty entries are skipped; on Windows
 *    `<tool>.exe`). No shell and no `which` are involved.
 */

export const TOOL_ENV: Readonly<Record<MediaTool, string>> = {
  ffmpeg: 'BACKLOT_FFMPEG',
  ffprobe: 'BACKLOT_FFPROBE',
};

export function toolPath(tool: MediaTool, env: NodeJS.ProcessEnv = process.env): string | null {
  const override = env[TOOL_ENV[tool]];
  if (override !== undefined && override !== '') {
    const full = path.resolve(override);
    return isExecutableFile(full) ? full : null;
  }
  return bundledPath(tool) ?? searchPath(tool, env);
}

/** The tool's path, or 501 `unsupported` with `details.tool` and advice a person can act on. */
export function requireTool(tool: MediaTool, env: NodeJS.ProcessEnv = process.env): string {
  const found = toolPath(tool, env);
  if (found !== null) return found;
  const variable = TOOL_ENV[tool];
  const override = env[variable];
  const message =
    override !== undefined && override !== ''
      ? `${tool} is not available: ${variable} is set to ${JSON.stringify(override)}, which is not an executable file. ` +
        `Point it at the ${tool} binary or unset it.`
      : `${tool} is not available: install ffmpeg (it includes ffprobe) so that ${tool} is on PATH, ` +
        `or set ${variable} to the path of the ${tool} binary.`;
  return unsupported(message, tool);
}

function unsupported(message: string, tool: MediaTool): never {
  throw ApiError.unsupported(message, { tool });
}

/** undefined: not looked up yet; null: the package is not installed. */
let bundled: string | null | undefined;

function bundledPath(tool: MediaTool): string | null {
  if (tool !== 'ffmpeg') return null;
  if (bundled === undefined) bundled = loadFfmpegStatic();
  if (bundled === null) return null;
  // Inside a packaged app the binary is unpacked next to the archive.
  const unpacked = bundled.replace(`app.asar${path.sep}`, `app.asar.unpacked${path.sep}`);
  for (const candidate of [unpacked, bundled]) if (isExecutableFile(candidate)) return candidate;
  return null;
}

function loadFfmpegStatic(): string | null {
  try {
    // An optionalDependency: absent on many installs.
    const exported: unknown = require('ffmpeg-static');
    return typeof exported === 'string' && exported !== '' ? exported : null;
  } catch {
    return null;
  }
}

function searchPath(tool: MediaTool, env: NodeJS.ProcessEnv): string | null {
  const dirs = (env.PATH ?? env.Path ?? '').split(path.delimiter).filter((dir) => dir !== '' && path.isAbsolute(dir));
  // Windows: only the .exe (a .cmd or .bat would need a shell, which is never used).
  const names = process.platform === 'win32' ? [`${tool}.exe`] : [tool];
  for (const dir of dirs) {
    for (const name of names) {
      const candidate = path.join(dir, name);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return null;
}

function isExecutableFile(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
