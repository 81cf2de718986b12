import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';

/**
 * `npm start` (bin/start.js) without the Electron binary runs the headless
 * service, says so on stderr, and passes SIGINT through (exit 0).
 */

const ROOT = resolve(__dirname, '..', '..');

function electronInstalled(): boolean {
  try {
    const binary: unknown = require(require.resolve('electron', { paths: [ROOT] }));
    return typeof binary === 'string' && existsSync(binary);
  } catch {
    return false;
  }
}

test('npm start falls back to the headless service', { skip: electronInstalled() && 'Electron is installed here' }, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'backlot-start-'));
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'start.js'), '--port', '0', '--data-dir', dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  try {
    const url = await new Promise<string>((resolveUrl, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ready line in 20 s\n${stderr}`)), 20_000);
      child.stdout.on('data', (d) => {
        stdout += d;
        const m = /Backlot listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
        if (m) {
          clearTimeout(timer);
          resolveUrl(m[1]!);
        }
      });
      void exited.then((code) => reject(new Error(`start.js exited with ${code}\n${stderr}`)));
    });
    assert.match(stderr, /Electron is not installed; running the headless service instead/);
    assert.ok(stderr.includes(`data dir ${dataDir}`), stderr);

    const res = await fetch(`${url}/api/v1/openapi.json`);
    assert.equal(res.status, 200);

    child.kill('SIGINT');
    assert.equal(await exited, 0);
  } finally {
    // SIGTERM, not SIGKILL: start.js forwards it, so its child does not outlive the test.
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
});
