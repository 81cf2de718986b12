import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

/**
 * Starts the real service the way a user does (`bin/backlot serve --port 0`
 * on a fresh temp data dir) and drives the real CLI against the same dir.
 */

export const ROOT = resolve(__dirname, '..', '..', '..');
export const BIN = join(ROOT, 'bin', 'backlot');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): CliResult {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export function tempDir(prefix = 'backlot-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface TestService {
  port: number;
  /** http://127.0.0.1:PORT */
  origin: string;
  dataDir: string;
  child: ChildProcess;
  cli(args: string[]): CliResult;
  /** `studio add` and a token with the given capabilities. */
  studio(id: string, caps: string[], extra?: string[]): string;
  token(studioId: string, caps: string[]): string;
  /** What the service has written to stderr so far (warnings, log lines). */
  stderr(): string;
  /** SIGTERM and wait; resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export async function startService(
  options: { args?: string[]; dataDir?: string; env?: NodeJS.ProcessEnv; keepDataDir?: boolean } = {},
): Promise<TestService> {
  const dataDir = options.dataDir ?? tempDir();
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data-dir', dataDir, ...(options.args ?? [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...options.env },
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const port = await new Promise<number>((resolvePort, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error(`serve did not get ready in 20 s\n${stderr}`)), 20_000);
    lines.on('line', (line) => {
      const m = /http:\/\/127\.0\.0\.1:(\d+)/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolvePort(Number(m[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}\n${stderr}`));
    });
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const cli = (args: string[]) => runCli([...args, '--data-dir', dataDir]);
  const token = (studioId: string, caps: string[]) => {
    const r = cli(['token', 'create', '--studio', studioId, '--caps', caps.join(',')]);
    if (r.code !== 0) throw new Error(`token create failed: ${r.stderr}`);
    return r.stdout.trim();
  };
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    dataDir,
    child,
    cli,
    token,
    stderr: () => stderr,
    studio(id, caps, extra = []) {
      const r = cli(['studio', 'add', id, ...extra]);
      if (r.code !== 0) throw new Error(`studio add failed: ${r.stderr}`);
      return token(id, caps);
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const code = await exited;
      if (!options.keepDataDir) rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
  };
}
