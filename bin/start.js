#!/usr/bin/env node
'use strict';
// `npm start [-- ARGS]`: the desktop app when the Electron binary is installed,
// else the headless service (`bin/backlot serve ARGS`). Electron is an optional
// dependency whose binary download can fail (offline installs), so both are
// normal outcomes. Signals are forwarded; the exit code is the child's.
//
// Headless, the service prints a one-time sign-in link; when a display is
// available (macOS, Windows, or DISPLAY / WAYLAND_DISPLAY set) and
// BACKLOT_NO_BROWSER is not set, this opens it in the default browser
// (xdg-open, open, or Windows' URL handler; never through a shell).

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const args = process.argv.slice(2);

if (!fs.existsSync(path.join(root, 'dist', 'cli', 'main.js')) || !fs.existsSync(path.join(root, 'dist', 'main', 'main.js'))) {
  process.stderr.write('backlot: dist/ is missing or incomplete. Run `npm install` (or `npm run build`) in the project folder.\n');
  process.exit(1);
}

/** The Electron binary's path, or null. `require('electron')` returns it, and throws when the download failed. */
function electronBinary() {
  try {
    const binary = require('electron');
    return typeof binary === 'string' && fs.existsSync(binary) ? binary : null;
  } catch {
    return null;
  }
}

/** The data dir `serve` will use: --data-dir as given, else the default (decisions §1). */
function dataDirOf(argv) {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--data-dir' && i + 1 < argv.length) return argv[i + 1];
    if (argv[i].startsWith('--data-dir=')) return argv[i].slice('--data-dir='.length);
  }
  return require(path.join(root, 'dist', 'service', 'data-dir.js')).defaultDataDir();
}

let child;
const binary = electronBinary();
if (binary) {
  process.stderr.write(`backlot: starting the desktop app with Electron (${binary}).\n`);
  // A stray ELECTRON_RUN_AS_NODE (set when started from an Electron-based editor) would make it plain Node.
  const env = { ...process.env };
  delete env.ELECTRON_RUN_AS_NODE;
  child = spawn(binary, [root, ...args], { stdio: 'inherit', env });
} else {
  process.stderr.write(
    `backlot: Electron is not installed; running the headless service instead (data dir ${dataDirOf(args)}).\n`,
  );
  child = spawn(process.execPath, [path.join(root, 'bin', 'backlot'), 'serve', ...args], { stdio: ['inherit', 'pipe', 'inherit'] });
  watchForSignInLink(child.stdout);
}

/** Whether a browser can be shown here. */
function displayAvailable() {
  if (process.env.BACKLOT_NO_BROWSER) return false;
  if (process.platform === 'darwin' || process.platform === 'win32') return true;
  return Boolean(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);
}

/** Passes the service's stdout through and opens the first sign-in link it prints. */
function watchForSignInLink(stdout) {
  let pending = '';
  let opened = false;
  stdout.on('data', (chunk) => {
    process.stdout.write(chunk);
    if (opened) return;
    pending = (pending + chunk.toString('utf8')).slice(-4096);
    const m = /(http:\/\/127\.0\.0\.1:\d+\/login\?code=[A-Za-z0-9_-]+)\s/.exec(pending);
    if (!m) return;
    opened = true;
    if (displayAvailable()) openInBrowser(m[1]);
  });
}

function openInBrowser(url) {
  const [command, commandArgs] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['rundll32', ['url.dll,FileProtocolHandler', url]]
        : ['xdg-open', [url]];
  try {
    const opener = spawn(command, commandArgs, { stdio: 'ignore', detached: true });
    opener.on('error', (err) => process.stderr.write(`backlot: could not open the browser (${err.message}); open the link above.\n`));
    opener.unref();
  } catch (err) {
    process.stderr.write(`backlot: could not open the browser (${err.message}); open the link above.\n`);
  }
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => child.kill(signal));
}
child.on('error', (err) => {
  process.stderr.write(`backlot: could not start: ${err.message}\n`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  process.exit(code ?? 128 + (os.constants.signals[signal] ?? 0));
});
