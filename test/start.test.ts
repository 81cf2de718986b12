import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { loginCodeOf, spendLoginCode } from './helpers/login';

/**
 * `npm start` (bin/start.js) without the Electron binary runs the headless
 * service, says so on stderr, and passes SIGINT through (exit 0). With a
 * display it opens the sign-in link in the default browser (a stand-in
 * xdg-open on PATH records what it was given).
 */

const ROOT = resolve(__dirname, '..', '..');

/** Whether Electron's binary was fetched (not `require('electron')`, which would start a download). */
function electronInstalled(): boolean {
  try {
    const dir = join(ROOT, 'node_modules', 'electron');
    return existsSync(join(dir, 'dist', readFileSync(join(dir, 'path.txt'), 'utf8')));
  } catch {
    return false;
  }
}

/** start.js on a temp data dir with `env` added; its stdout, stderr and exit. */
function startHeadless(dataDir: string, env: NodeJS.ProcessEnv = {}) {
  const base = { ...process.env };
  delete base.DISPLAY;
  delete base.WAYLAND_DISPLAY;
  delete base.BACKLOT_NO_BROWSER;
  return spawn(process.execPath, [join(ROOT, 'bin', 'start.js'), '--port', '0', '--data-dir', dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...base, ...env },
  });
}

/** A folder holding an `xdg-open` that writes its arguments to `opened.txt` beside it. */
function fakeOpener(): string {
  const dir = mkdtempSync(join(tmpdir(), 'backlot-opener-'));
  writeFileSync(join(dir, 'xdg-open'), `#!/bin/sh\nprintf '%s\\n' "$@" > "${join(dir, 'opened.txt')}"\n`, { mode: 0o755 });
  return dir;
}

async function readyLine(child: ReturnType<typeof startHeadless>): Promise<string> {
  let stdout = '';
  return new Promise<string>((resolveLine, reject) => {
    const timer = setTimeout(() => reject(new Error(`no sign-in line in 20 s: ${stdout}`)), 20_000);
    child.stdout!.on('data', (d) => {
      stdout += d;
      if (/login\?code=\S+\n/.test(stdout)) {
        clearTimeout(timer);
        resolveLine(stdout);
      }
    });
  });
}

async function stop(child: ReturnType<typeof startHeadless>): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  child.kill('SIGINT');
  return exited;
}

test('headless with a display: the sign-in link opens in the default browser, once, and it works', { skip: electronInstalled() && 'Electron is installed here' }, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'backlot-start-'));
  const opener = fakeOpener();
  const child = startHeadless(dataDir, { DISPLAY: ':99', PATH: `${opener}:${process.env.PATH}` });
  try {
    const out = await readyLine(child);
    const link = /(http:\/\/127\.0\.0\.1:\d+\/login\?code=\S+)/.exec(out)![1]!;
    let opened = '';
    for (let i = 0; i < 200 && !opened; i++) {
      await new Promise((r) => setTimeout(r, 25));
      opened = existsSync(join(opener, 'opened.txt')) ? readFileSync(join(opener, 'opened.txt'), 'utf8') : '';
    }
    assert.equal(opened, `${link}\n`, 'xdg-open got the link as its one argument');
    // The browser would sign in with it: the code is live, and spending it (as the page does) gives a
    // credential in the answer, never a cookie.
    const port = Number(new URL(link).port);
    const res = await spendLoginCode(port, loginCodeOf(link));
    assert.equal(res.status, 200, res.text);
    assert.equal(typeof res.json.credential, 'string');
    assert.equal(res.headers['set-cookie'], undefined);
    assert.equal(await stop(child), 0);
  } finally {
    await stop(child);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(opener, { recursive: true, force: true });
  }
});

test('headless without a display (or with BACKLOT_NO_BROWSER): the link is printed, no browser is started', { skip: electronInstalled() && 'Electron is installed here' }, async () => {
  for (const env of [{}, { DISPLAY: ':99', BACKLOT_NO_BROWSER: '1' }]) {
    const dataDir = mkdtempSync(join(tmpdir(), 'backlot-start-'));
    const opener = fakeOpener();
    const child = startHeadless(dataDir, { ...env, PATH: `${opener}:${process.env.PATH}` });
    try {
      const out = await readyLine(child);
      assert.match(out, /Sign in to the launcher .*: http:\/\/127\.0\.0\.1:\d+\/login\?code=/);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(existsSync(join(opener, 'opened.txt')), false, JSON.stringify(env));
      assert.equal(await stop(child), 0);
    } finally {
      await stop(child);
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(opener, { recursive: true, force: true });
    }
  }
});

test('npm start falls back to the headless service', { skip: electronInstalled() && 'Electron is installed here' }, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'backlot-start-'));
  const child = startHeadless(dataDir);
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

/** A folder standing in for Electron's dist (ELECTRON_OVERRIDE_DIST_PATH): an `electron` that writes its arguments to args.txt. */
function fakeElectronDist(): string {
  const dir = mkdtempSync(join(tmpdir(), 'backlot-electron-'));
  writeFileSync(join(dir, 'electron'), `#!/bin/sh\nprintf '%s\\n' "$@" > "${join(dir, 'args.txt')}"\n`, { mode: 0o755 });
  return dir;
}

test('Electron present but no better-sqlite3 build for it: says so, with the remedy, and runs the headless service (no NODE_MODULE_VERSION crash)', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'backlot-start-'));
  const dist = fakeElectronDist();
  const missing = join(dist, 'no-such.node');
  const child = startHeadless(dataDir, { ELECTRON_OVERRIDE_DIST_PATH: dist, BACKLOT_SQLITE_BINDING: missing, BACKLOT_NO_BROWSER: '1' });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  try {
    await readyLine(child);
    assert.match(stderr, new RegExp(`Electron is installed, but BACKLOT_SQLITE_BINDING names ${missing}, which does not exist; running the headless service instead`));
    assert.match(stderr, /npm run rebuild:electron/);
    assert.equal(existsSync(join(dist, 'args.txt')), false, 'Electron was not started');
    assert.equal(await stop(child), 0);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(dist, { recursive: true, force: true });
  }
});

test('Electron present with a better-sqlite3 build for it: the desktop app starts, on this folder and the arguments', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'backlot-start-'));
  const dist = fakeElectronDist();
  const binding = join(dist, 'better_sqlite3.node');
  writeFileSync(binding, '');
  const child = startHeadless(dataDir, { ELECTRON_OVERRIDE_DIST_PATH: dist, BACKLOT_SQLITE_BINDING: binding });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  try {
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    assert.equal(code, 0, stderr);
    assert.match(stderr, new RegExp(`starting the desktop app with Electron \\(${join(dist, 'electron')}\\)`));
    assert.deepEqual(readFileSync(join(dist, 'args.txt'), 'utf8').split('\n').filter(Boolean), [ROOT, '--port', '0', '--data-dir', dataDir]);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(dist, { recursive: true, force: true });
  }
});
