import type { ElectronMain } from './electron-api';
import { startShell } from './shell';

/**
 * Electron's entry point (package.json "main"). Everything is in shell.ts,
 * which takes the Electron API as an argument so the tests can run it against
 * a stand-in (test/helpers/electron-standin.ts).
 *
 * Command line (after Electron's own): [--data-dir DIR] [--port N].
 */

const electron = require('electron') as ElectronMain;
// Packaged: [exe, ...args]; unpackaged: [electron, appDir, ...args].
startShell(electron, process.argv.slice(electron.app.isPackaged ? 1 : 2));

// `npm start` forwards SIGINT/SIGTERM here; quitting closes the service first.
process.on('SIGINT', () => electron.app.quit());
process.on('SIGTERM', () => electron.app.quit());
