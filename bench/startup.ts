import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { prepareAssetRows } from '../test/helpers/asset-rows';
import { BACKLOT, fmt, pct, table } from './common';

/**
 * Time from spawning `bin/backlot serve` to its ready line, on data dirs of
 * 0, 100k and 1M asset rows (docs/reliability.md "Start-up and recovery at scale"), after a clean stop and after a
 * SIGKILL; after the kill also the time until the background recovery ended.
 * BACKLOT_BASELINE_BIN=/path/to/other/bin/backlot measures that build too
 * (e.g. a checkout from before the change). BENCH_STARTUP_RUNS=N rounds (default 3).
 */

const SIZES = [0, 100_000, 1_000_000];
const READY = /listening on http:\/\/\S+/;
const BACKGROUND = /checking the rest of the blob store in the background/;
const FINISHED = /blob store recovery finished/;
const AFTER_READY = /^API http\S+, data dir /m;
const TIMEOUT_MS = 180_000;

interface Started {
  child: ChildProcess;
  readyMs: number;
  /** From spawn until recovery ended: the ready line, or the background recovery's last line. */
  recovered: Promise<number>;
}

function start(bin: string, dataDir: string): Promise<Started> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let readyMs = -1;
  let resolveRecovered: (ms: number) => void = () => {};
  const recovered = new Promise<number>((r) => (resolveRecovered = r));
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    if (FINISHED.test(stderr)) resolveRecovered(performance.now() - t0);
    // serve's stderr line after the ready line: a recovery that did not go to the background
    // (its line comes before, on the same pipe) was over before the ready line.
    else settleQuick();
  });
  const settleQuick = () => {
    if (readyMs >= 0 && AFTER_READY.test(stderr) && !BACKGROUND.test(stderr)) resolveRecovered(readyMs);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no ready line in ${TIMEOUT_MS} ms\n${stderr}`));
    }, TIMEOUT_MS);
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (readyMs < 0) reject(new Error(`serve exited with ${code}\n${stderr}`));
    });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (readyMs >= 0 || !READY.test(line)) return;
      readyMs = performance.now() - t0;
      clearTimeout(timer);
      settleQuick();
      resolve({ child, readyMs, recovered });
    });
  });
}

function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

/** `runs` rounds of: SIGKILL, start (crash), wait for recovery, SIGTERM, start (clean). */
async function measure(bin: string, dataDir: string, runs: number) {
  const crash: number[] = [];
  const recovery: number[] = [];
  const clean: number[] = [];
  let s = await start(bin, dataDir);
  await s.recovered;
  for (let i = 0; i < runs; i++) {
    await stop(s.child, 'SIGKILL');
    s = await start(bin, dataDir);
    crash.push(s.readyMs);
    recovery.push(await s.recovered);
    await stop(s.child, 'SIGTERM');
    s = await start(bin, dataDir);
    clean.push(s.readyMs);
    await s.recovered;
  }
  await stop(s.child, 'SIGTERM');
  const median = (xs: number[]) => pct([...xs].sort((a, b) => a - b), 0.5);
  return { crash: median(crash), recovery: median(recovery), clean: median(clean) };
}

export async function runStartupBench(): Promise<void> {
  const runs = Number(process.env.BENCH_STARTUP_RUNS) || 3;
  const bins: [string, string][] = [['this build', BACKLOT]];
  if (process.env.BACKLOT_BASELINE_BIN) bins.push(['baseline', process.env.BACKLOT_BASELINE_BIN]);
  const rows: string[][] = [];
  for (const size of SIZES) {
    const dataDir = mkdtempSync(join(tmpdir(), 'backlot-bench-startup-'));
    try {
      const t = performance.now();
      prepareAssetRows(dataDir, { rows: size, studio: 'big', reclaimedEvery: 20 });
      process.stderr.write(`startup: ${size} rows prepared in ${fmt(performance.now() - t)} ms\n`);
      for (const [label, bin] of bins) {
        const m = await measure(bin, dataDir, runs);
        rows.push([label, size.toLocaleString('en-US'), fmt(m.clean), fmt(m.crash), fmt(m.recovery)]);
        process.stderr.write(`startup: ${label}, ${size} rows done\n`);
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  process.stdout.write(
    `Time to the ready line, ms (median of ${runs}); asset rows with 1 in 20 reclaimed; no blob files\n` +
      `${table(['build', 'asset rows', 'after clean stop', 'after SIGKILL', 'SIGKILL: recovery done'], rows)}\n`,
  );
}
