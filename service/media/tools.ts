import { accessSync, chmodSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { ApiError } from '../core/errors';
import type { MediaTool } from './types';

/**
 * Where ffmpeg and ffprobe are found (docs/api.md "Media tools"), in this
 * order, resolved afresh at every call (a few stat calls):
 *
 * 1. `BACKLOT_FFMPEG` / `BACKLOT_FFPROBE`. When set (non-empty), that path and
 *    nothing else: an executable regular file there, or the tool is
 *    unavailable (null). A wrong override never falls through to another copy.
 *    A relative path is taken from the service's working directory.
 * 2. Backlot's own copy: the per-platform package that carries the binary
 *    (`@ffmpeg-installer/<platform>-<arch>`, `@ffprobe-installer/...`, an
 *    optional dependency, so only the machine's own is installed). Before
 *    anything on the machine: a packaged app must work, and export, on a
 *    machine with nothing installed, and the same binary everywhere gives the
 *    same output. Its ffmpeg is 4.1 (2018); the timeline's conform graph uses
 *    only what 4.1 has (docs/design.md "The conform graph runs on ffmpeg 4.1").
 * 3. ffmpeg only: the `ffmpeg-static` package, where its install script could
 *    download its binary (Apple silicon has no package of step 2).
 * 4. The first executable regular file named after the tool in an absolute
 *    `PATH` entry (relative and empty entries are skipped; on Windows
 *    `<tool>.exe`). No shell and no `which` are involved.
 *
 * Inside a packaged app a bundled binary is read from `app.asar.unpacked`,
 * next to the archive (a program cannot run from inside it).
 * docs/design.md "ffmpeg and ffprobe come with Backlot" records which
 * packages, versions and licences these are.
 */

export const TOOL_ENV: Readonly<Record<MediaTool, string>> = {
  ffmpeg: 'BACKLOT_FFMPEG',
  ffprobe: 'BACKLOT_FFPROBE',
};

/** Where a resolved tool came from, in the order above. */
export type ToolSource = 'env' | 'bundled' | 'ffmpeg-static' | 'path';

export interface ResolvedTool {
  /** Absolute path, or null when the tool is unavailable. */
  path: string | null;
  /** null when unavailable; `env` also when the override names nothing usable (path null then). */
  source: ToolSource | null;
}

export function resolveTool(tool: MediaTool, env: NodeJS.ProcessEnv = process.env): ResolvedTool {
  const override = env[TOOL_ENV[tool]];
  if (override !== undefined && override !== '') {
    const full = path.resolve(override);
    return { path: isExecutableFile(full) ? full : null, source: 'env' };
  }
  const own = bundledPath(tool);
  if (own !== null) return { path: own, source: 'bundled' };
  const fromStatic = tool === 'ffmpeg' ? ffmpegStaticPath() : null;
  if (fromStatic !== null) return { path: fromStatic, source: 'ffmpeg-static' };
  const onPath = findOnPath(tool, env);
  return onPath !== null ? { path: onPath, source: 'path' } : { path: null, source: null };
}

/** Both tools' resolved paths and where each came from (the diagnostics). */
export function resolveMediaTools(env: NodeJS.ProcessEnv = process.env): Record<MediaTool, ResolvedTool> {
  return { ffmpeg: resolveTool('ffmpeg', env), ffprobe: resolveTool('ffprobe', env) };
}

export function toolPath(tool: MediaTool, env: NodeJS.ProcessEnv = process.env): string | null {
  return resolveTool(tool, env).path;
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
      : `${tool} is not available: Backlot's own copy is not installed for this platform (${process.platform}-${process.arch}); ` +
        `install ffmpeg (it includes ffprobe) so that ${tool} is on PATH, or set ${variable} to the path of the ${tool} binary.`;
  return unsupported(message, tool);
}

function unsupported(message: string, tool: MediaTool): never {
  throw ApiError.unsupported(message, { tool });
}

/** The package that carries the tool's binary for this platform, and the file's name in it. */
export function bundledPackage(tool: MediaTool, platform: NodeJS.Platform = process.platform, arch: string = process.arch): { name: string; file: string } {
  return {
    name: `@${tool}-installer/${platform}-${arch}`,
    file: platform === 'win32' ? `${tool}.exe` : tool,
  };
}

/** Inside a packaged app a program is run from the unpacked copy next to app.asar (pure). */
export function unpackedPath(file: string): string {
  return file.replace(`app.asar${path.sep}`, `app.asar.unpacked${path.sep}`);
}

const located = new Map<string, string | null>();

/** Where an installed package's folder is (require.resolve of its package.json), cached; null when absent. */
function packageDir(name: string): string | null {
  if (!located.has(name)) {
    let dir: string | null = null;
    try {
      dir = path.dirname(require.resolve(`${name}/package.json`));
    } catch {
      // An optional dependency: only the machine's own platform's is installed.
    }
    located.set(name, dir);
  }
  return located.get(name)!;
}

function bundledPath(tool: MediaTool): string | null {
  const { name, file } = bundledPackage(tool);
  const dir = packageDir(name);
  return dir === null ? null : firstExecutable(path.join(dir, file));
}

function ffmpegStaticPath(): string | null {
  if (!located.has('ffmpeg-static')) {
    let exported: unknown = null;
    try {
      // An optionalDependency whose install script downloads the binary: absent on many installs.
      exported = require('ffmpeg-static');
    } catch {
      exported = null;
    }
    located.set('ffmpeg-static', typeof exported === 'string' && exported !== '' ? exported : null);
  }
  const file = located.get('ffmpeg-static')!;
  return file === null ? null : firstExecutable(file);
}

/**
 * The unpacked copy, else the file itself, when it is an executable regular
 * file. The packages set the execute bit in an install script, and only for
 * their owner (`chmod u+x`): an install that skipped scripts leaves none, and
 * a package built from such a tree would carry a binary other users cannot
 * run. So a copy this user owns is made executable for everyone (0755) once;
 * on a read-only or foreign copy the chmod fails harmlessly.
 */
function firstExecutable(file: string): string | null {
  for (const candidate of [unpackedPath(file), file]) {
    if (process.platform !== 'win32') openUp(candidate);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}

function openUp(file: string): void {
  try {
    const st = statSync(file);
    if (!st.isFile() || (st.mode & 0o111) === 0o111 || st.uid !== process.getuid?.()) return;
    chmodSync(file, 0o755);
  } catch {
    // Missing, read-only or not ours: judged as it is.
  }
}

/** The first executable `tool` in an absolute PATH entry (step 4 above). */
export function findOnPath(tool: MediaTool, env: NodeJS.ProcessEnv): string | null {
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

