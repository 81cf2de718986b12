#!/usr/bin/env node
'use strict';
// `npm start [-- ARGS]`: the desktop app when Electron can run it, else the
// headless service (`bin/backlot serve ARGS`), saying which and why on stderr.
// The desktop app needs two things a plain `npm install` does not fetch (both
// need the internet): Electron's binary (`npm run electron:fetch`) and
// better-sqlite3 built for Electron's ABI (`npm run rebuild:electron`, into
// build/electron/). Without either, this runs the headless service instead of
// crashing. Signals are forwarded; the exit code is the child's.
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

/**
 * The Electron binary's path, or null when it was never fetched. Not
 * `require('electron')`: that starts a download when the binary is missing.
 */
function electronBinary() {
  let dir;
  try {
    dir = path.dirname(require.resolve('electron/package.json', { paths: [root] }));
  } catch {
    return null;
  }
  let executable = null;
  try {
    executable = fs.readFileSync(path.join(dir, 'path.txt'), 'utf8');
  } catch {
    // never fetched
  }
  const distDir = process.env.ELECTRON_OVERRIDE_DIST_PATH || (executable ? path.join(dir, 'dist') : null);
  if (!distDir) return null;
  const binary = path.join(distDir, executable || 'electron');
  return fs.existsSync(binary) ? binary : null;
}

/** Why the desktop app cannot open the database under this Electron (service/db/binding.ts), or null when it can. */
function electronSqliteProblem() {
  const override = process.env.BACKLOT_SQLITE_BINDING;
  if (override) return fs.existsSync(override) ? null : `BACKLOT_SQLITE_BINDING names ${override}, which does not exist`;
  const built = path.join(root, 'build', 'electron', 'better_sqlite3.node');
  if (!fs.existsSync(built)) return `better-sqlite3 has no build for Electron (${path.relative(root, built)} is missing)`;
  try {
    const stamp = JSON.parse(fs.readFileSync(built.replace(/\.node$/, '.json'), 'utf8'));
    const abi = fs.readFileSync(path.join(path.dirname(require.resolve('electron/package.json', { paths: [root] })), 'abi_version'), 'utf8').trim();
    if (stamp.modules !== abi) return `better-sqlite3 in build/electron was built for Electron ${stamp.electron}, not this one (ABI ${abi})`;
  } catch {
    // no stamp (a build made by hand): trust it
  }
  return null;
}

/** The data dir `serve` will use: --data-dir as given, else the default (service/data-dir.ts). */
function dataDirOf(argv) {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--data-dir' && i + 1 < argv.length) return argv[i + 1];
    if (argv[i].startsWith('--data-dir=')) return argv[i].slice('--data-dir='.length);
  }
  return require(path.join(root, 'dist', 'service', 'data-dir.js')).defaultDataDir();
}

let child;
const binary = electronBinary();
const sqliteProblem = binary ? electronSqliteProblem() : null;
if (binary && !sqliteProblem) {
  process.stderr.write(`backlot: starting the desktop app with Electron (${binary}).\n`);
  // A stray ELECTRON_RUN_AS_NODE (set when started from an Electron-based editor) would make it plain Node.
  const env = { ...process.env };
  delete env.ELECTRON_RUN_AS_NODE;
  child = spawn(binary, [root, ...args], { stdio: 'inherit', env });
} else {
  const why = binary
    ? `Electron is installed, but ${sqliteProblem}; running the headless service instead (data dir ${dataDirOf(args)}). ` +
      'For the desktop app run `npm run rebuild:electron` (it downloads Electron\'s headers).'
    : `Electron is not installed; running the headless service instead (data dir ${dataDirOf(args)}). ` +
      'For the desktop app run `npm run electron:fetch`, then `npm run rebuild:electron` (both download).';
  process.stderr.write(`backlot: ${why}\n`);
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
