import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { arch, platform, release } from 'node:os';
import { join } from 'node:path';
import { LOG_DIR, LOG_FILE } from '../core/log-file';
import { DB_FILE } from '../db/open';
import { resolveMediaTools } from '../media';

/**
 * What "Copy diagnostics" in the launcher hands a person to paste into a bug
 * report (docs/api.md "Diagnostics"): versions, the platform, where things
 * are, which ffmpeg and ffprobe the media module would run, and the end of
 * the desktop app's log. Nothing secret is collected: no environment, no
 * tokens, no database contents. The log is not ours to vouch for, so its
 * lines pass maskSecrets, which blanks anything shaped like a credential.
 */

/** The app's log (service/core/log-file.ts writes and rotates it): DIR/logs/backlot.log. */
export { LOG_DIR, LOG_FILE };
/** Lines of the log returned at most, read from its last 64 KiB. */
export const LOG_LINES = 200;
const LOG_TAIL_BYTES = 64 * 1024;

export interface DiagnosticsDeps {
  dataDir: string;
  version: string;
}

export function collectDiagnostics(d: DiagnosticsDeps, env: NodeJS.ProcessEnv = process.env) {
  const logDir = join(d.dataDir, LOG_DIR);
  const logFile = join(logDir, LOG_FILE);
  const tail = readTail(logFile);
  return {
    version: d.version,
    generated_at: new Date().toISOString(),
    runtime: {
      platform: platform(),
      arch: arch(),
      os_release: release(),
      node: process.versions.node,
      electron: process.versions.electron ?? null,
      chrome: process.versions.chrome ?? null,
      pid: process.pid,
      uptime_s: Math.round(process.uptime()),
    },
    paths: {
      data_dir: d.dataDir,
      database: join(d.dataDir, DB_FILE),
      log_dir: logDir,
    },
    // As a job would resolve them now: the path and where it came from (env, bundled, ffmpeg-static, path).
    media_tools: resolveMediaTools(env),
    log: { file: logFile, present: tail !== null, lines: (tail ?? []).map(maskSecrets) },
  };
}

export type Diagnostics = ReturnType<typeof collectDiagnostics>;

/** The log's last LOG_LINES whole lines, or null when there is no log file. */
function readTail(file: string): string[] | null {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    const size = fstatSync(fd).size;
    const start = Math.max(0, size - LOG_TAIL_BYTES);
    const buffer = Buffer.alloc(size - start);
    const read = readSync(fd, buffer, 0, buffer.length, start);
    const lines = buffer.subarray(0, read).toString('utf8').split(/\r?\n/);
    if (start > 0) lines.shift(); // begun mid-line
    if (lines.at(-1) === '') lines.pop();
    return lines.slice(-LOG_LINES);
  } finally {
    closeSync(fd);
  }
}

const MASK = '[hidden]';
const SECRET_SHAPES: [RegExp, string][] = [
  // Studio tokens and launcher credentials (service/core/auth.ts prefixes).
  [/\bblt_[A-Za-z0-9_-]+/g, `blt_${MASK}`],
  [/\bbl_launcher_[A-Za-z0-9_-]+/g, `bl_launcher_${MASK}`],
  // An Authorization header's value, whatever the token.
  [/\b(Bearer\s+"?)[^\s"',;]+/gi, `$1${MASK}`],
  // One-time sign-in codes and short-lived read URLs' keys in a logged URL.
  [/([?&](?:code|token|key|sig|signature|access_token)=)[^&\s"'#]+/gi, `$1${MASK}`],
  // A media URL's path is its own credential for a few minutes (docs/api.md §Media URLs).
  [/(\/api\/v1\/media\/)[^\s"'?#]+/g, `$1${MASK}`],
];

/** A log line with anything shaped like a credential blanked (pure; table-tested). */
export function maskSecrets(line: string): string {
  let out = line;
  for (const [shape, replacement] of SECRET_SHAPES) out = out.replace(shape, replacement);
  return out;
}
