import { runDesktop } from './desktop';
import type { ElectronMain } from './electron-api';

/**
 * Electron's entry point (package.json "main"). The shell (shell.ts) takes the
 * Electron API as an argument so the tests can run it against a stand-in
 * (test/helpers/electron-standin.ts); desktop.ts adds the log file, the guard
 * against uncaught errors and the signals.
 *
 * Command line (after Electron's own): [--data-dir DIR] [--port N].
 */

const electron = require('electron') as ElectronMain;
// Packaged: [exe, ...args]; unpackaged: [electron, appDir, ...args].
runDesktop(electron, process.argv.slice(electron.app.isPackaged ? 1 : 2));
