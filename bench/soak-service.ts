import { readdirSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { main } from '../cli/main';

/**
 * The service under the soak (bench/soak.ts): `bin/backlot serve ARGS` itself (the CLI's
 * own `main`, same ready line, same signal handling), run in a process forked with an
 * IPC channel so the soak can see inside it without a route: once a second it sends the
 * parent its memory (`process.memoryUsage()`), its open descriptors (`/proc/self/fd`)
 * and the main thread's event-loop delay over that second (perf_hooks, 1 ms
 * resolution), then starts the delay histogram over.
 *
 * argv: the serve arguments (`--port 0 --data-dir DIR ...`).
 */

export interface ServiceSample {
  /** Milliseconds since the epoch, taken in the service. */
  at: number;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** Open file descriptors (Linux; -1 elsewhere). The IPC channel and /proc's own read count. */
  fds: number;
  /** Event-loop delay over the last second, milliseconds. */
  loopP50: number;
  loopP99: number;
  loopMax: number;
}

function openFds(): number {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return -1;
  }
}

function start(): void {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const ms = (ns: number) => (Number.isFinite(ns) ? ns / 1e6 : 0);
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    const sample: ServiceSample = {
      at: Date.now(),
      rss: m.rss,
      heapUsed: m.heapUsed,
      heapTotal: m.heapTotal,
      external: m.external,
      arrayBuffers: m.arrayBuffers,
      fds: openFds(),
      loopP50: ms(delay.percentile(50)),
      loopP99: ms(delay.percentile(99)),
      loopMax: ms(delay.max),
    };
    delay.reset();
    if (process.connected) process.send!({ sample });
  }, 1000);
  timer.unref();
  // The parent gone: stop as a supervisor's SIGTERM would (serve's handler closes cleanly).
  process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
  void main(['serve', ...process.argv.slice(2)]);
}

start();
