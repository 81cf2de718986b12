import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { judge, opTable, report, runSoak, type SoakBounds } from '../bench/soak';
import { requireFfmpeg } from './helpers/media';

/**
 * The soak's 60 s version (the 30-minute run is `npm run bench -- soak`,
 * bench/README.md). The same driver as the bench: `bin/backlot serve` in a child that
 * reports its RSS, heap, descriptors and event-loop delay each second; mixed traffic
 * (KV, records, uploads, gallery create and search, sessions, task jobs and their logs)
 * at a fixed open-loop rate over 32 keep-alive connections, SSE listeners on `/events`
 * and job logs joining and leaving, an export every 20 s.
 *
 * Asserted: not one error (every answer has the status its operation expects, no socket
 * error, every export succeeds, no listener cut off, the service exits 0), every request
 * answered, the service's descriptors back to their idle count once the clients have
 * gone, and no growth between the window 20-30 s (after the warm-up) and 50-60 s past
 * what healthy runs on the loaded machine show plus a margin (BOUNDS): a leak of about
 * 1 MiB/s fails it. The 30-minute bench holds the long-run figures (bench/README.md, soak).
 *
 * BACKLOT_SOAK_RATE changes the rate. The default, 50 req/s, is what the shared 2-core
 * machine sustained with room to spare while 8 other builds and test runs loaded it (load
 * averages of 15-27): the service kept up with 85 req/s at load 16 and 60 at load 25, so
 * 100 would fail on the machine rather than on the service. The bench runs 200.
 * A service more than 10 s behind the schedule fails at once (client backlog errors)
 * rather than running the test past its time.
 */

const SECONDS = 60;
const RATE = Number(process.env.BACKLOT_SOAK_RATE ?? 50);
const SEED = Number(process.env.BACKLOT_PROP_SEED ?? Math.floor(Math.random() * 2 ** 31));

const BOUNDS: SoakBounds = {
  warmup: 20,
  window: 10,
  // Growth between the windows 20-30 s and 50-60 s. Four healthy runs at load 6-17 (six other
  // helpers building and testing): RSS -10.9, -14.3, -12.8, +9.2 MiB; heap floor +3.7, +0.7, +2.2,
  // +2.8 MiB. A leak of 20 KiB a request (1 MiB/s at 50 req/s) gave RSS +19.8 / +18.8 and heap
  // floor +26.6 / +29.3 MiB: it passed the old bounds (96 and 32) and fails the heap floor's. A
  // leak outside the JavaScript heap of that rate would add about 30 MiB of RSS, past 24.
  rssMiB: 24,
  heapMiB: 10,
  // A stall or a growing backlog shows as seconds; a busy neighbour as a factor on a small p99.
  p99Factor: 4,
  p99SlackMs: 1500,
};

before(requireFfmpeg);

test(`soak: ${SECONDS} s of mixed traffic at ${RATE} req/s, no error, no growth (seed ${SEED})`, { timeout: 120_000 }, async (t) => {
  const result = await runSoak({
    seconds: SECONDS,
    rate: RATE,
    connections: 32,
    listeners: 8,
    exportEvery: 20,
    seed: SEED,
    maxBehindSeconds: 10,
    drainSeconds: 10,
    exportWaitSeconds: 20,
  });
  const verdict = judge(result, BOUNDS);
  const f = verdict.figures;
  const summary =
    `${report(result, 10)}\n${opTable(result)}\n` +
    `sent ${result.sent}, answered ${result.answered}, listeners ${result.listenersOpened} (${result.listenerEvents} events), ` +
    `exports ${result.exports.succeeded}/${result.exports.started}, fds idle ${result.fdsIdle} after ${result.fdsAfter} ` +
    `${result.fdsLeft.join(' ')}, RSS ${f.rssGrowthMiB.toFixed(1)} MiB, heap floor ${f.heapFloorGrowthMiB.toFixed(1)} MiB, ` +
    `p99 ${f.first.p99.toFixed(0)} -> ${f.last.p99.toFixed(0)} ms, load ${result.load.before} / ${result.load.after}`;
  // The figures of a run that passed, too: the bounds are set from them.
  t.diagnostic(summary.split('\n').pop()!);
  assert.deepEqual(verdict.failures, [], summary);
  assert.equal(result.answered, Math.floor(SECONDS * RATE));
  assert.ok(result.exports.started >= 2 && result.exports.succeeded === result.exports.started, summary);
  assert.ok(result.listenersOpened >= 20, summary);
  assert.equal(result.exitCode, 0);
});
