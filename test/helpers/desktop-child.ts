import { runDesktop } from '../../main/desktop';
import { StandIn } from './electron-standin';

/**
 * Electron's main process as main/main.ts runs it (runDesktop: the log file,
 * the guard against uncaught errors, the shell), against the stand-in, in a
 * process of its own so that what nothing catches really reaches the process.
 * Prints `READY <url>`, then obeys lines on stdin:
 *   throw    an error thrown from a callback no request handler awaits
 *            (as a socket's or a stream's error event would be)
 *   reject   a promise rejected that nobody awaits
 *   quit     quits the app (the service closes), then exits 0
 * Arguments: the shell's command line.
 */

const electron = new StandIn();
const { ready } = runDesktop(electron.api(), process.argv.slice(2));
ready.then(
  (state) => {
    process.stdout.write(`READY ${state.url}\n`);
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (chunk: string) => {
      for (const command of chunk.split('\n').filter(Boolean)) {
        if (command === 'throw') {
          setImmediate(() => {
            throw new Error('boom from a request callback');
          });
        } else if (command === 'reject') {
          void Promise.reject(new Error('a rejection nobody awaited'));
        } else if (command === 'quit') {
          electron.app.quit();
          const timer = setInterval(() => {
            if (!electron.app.ended) return;
            clearInterval(timer);
            process.exit(0);
          }, 20);
        }
      }
    });
  },
  () => process.exit(1),
);
