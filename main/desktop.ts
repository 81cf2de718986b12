import { captureOutput, logFilePath, openLogFile } from '../service/app';
import { defaultDataDir } from '../service/data-dir';
import type { ElectronMain } from './electron-api';
import { parseShellArgs } from './rules';
import { startShell, type ShellHandle } from './shell';

/**
 * What Electron's main process does around the shell (main.ts calls it; a test
 * runs it in a child process against the stand-in):
 * - everything the process prints (the shell's and the service's console and
 *   stderr lines) is also written to DIR/logs/backlot.log, rotated by size;
 * - an error nothing caught (a socket's or a stream's error event, a throw in a
 *   timer, a rejected promise nobody awaited) is logged with its stack and the
 *   app keeps running: one request's failure never takes the windows down;
 * - SIGINT/SIGTERM (from `npm start`) quit, which closes the service first.
 */
export function runDesktop(electron: ElectronMain, args: string[], proc: NodeJS.Process = process): ShellHandle {
  let dataDir: string | null = null;
  try {
    dataDir = parseShellArgs(args).dataDir ?? defaultDataDir();
  } catch {
    // A bad command line: startShell reports it in a dialog.
  }
  if (dataDir !== null) {
    try {
      const log = openLogFile(logFilePath(dataDir));
      captureOutput(log);
      proc.on('exit', () => log.flushSync());
    } catch (err) {
      console.error(`Backlot cannot write its log file under ${dataDir}:`, err);
    }
  }
  keepRunning(proc);
  const handle = startShell(electron, args);
  proc.on('SIGINT', () => electron.app.quit());
  proc.on('SIGTERM', () => electron.app.quit());
  return handle;
}

/** Logs what nothing caught instead of ending the process (Electron would otherwise show a crash box or quit). */
export function keepRunning(proc: NodeJS.EventEmitter, log: Pick<Console, 'error'> = console): void {
  proc.on('uncaughtException', (err: unknown, origin: string) => {
    log.error(`Uncaught ${origin === 'unhandledRejection' ? 'rejection' : 'exception'}; Backlot keeps running:`, err);
  });
  proc.on('unhandledRejection', (reason: unknown) => {
    log.error('Unhandled rejection; Backlot keeps running:', reason);
  });
}
