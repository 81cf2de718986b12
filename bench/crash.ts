import { runCrashRounds } from '../test/helpers/crash';

/**
 * Crash (see bench/README.md "crash"): the long run of
 * test/crash.test.ts. BACKLOT_BENCH_ROUNDS rounds (default 60) of SIGKILL at a
 * seeded random moment while clients write, an export runs, a studio installs
 * and another runs; every check of test/helpers/crash.ts after each restart,
 * the last one reading back every acknowledged write. BACKLOT_PROP_SEED
 * replays a seed. Fails (exit 1) when anything was lost or any check broke.
 */
export async function runCrashBench(): Promise<void> {
  const rounds = Number(process.env.BACKLOT_BENCH_ROUNDS ?? 60);
  const seed = Number(process.env.BACKLOT_PROP_SEED ?? Math.floor(Math.random() * 2 ** 31));
  const report = await runCrashRounds({ seed, rounds, log: (line) => process.stdout.write(`  ${line}\n`) });
  const figures = [
    ['seed', report.seed],
    ['rounds (SIGKILLs)', report.rounds],
    ['acknowledged writes', report.acknowledged],
    ['acknowledged writes checked after restarts', report.checked],
    ['lost', report.lost.length],
    ['other problems', report.problems.length],
    ['kills during an export', report.killedMidExport],
    ['kills during a studio install or uninstall job', report.killedMidStudioJob],
    ['processes of killed runs, all gone after the restart', report.processesEnded],
    ['seconds', (report.ms / 1000).toFixed(0)],
  ];
  for (const [name, value] of figures) process.stdout.write(`${String(name).padEnd(54)} ${value}\n`);
  for (const line of [...report.lost, ...report.problems]) process.stdout.write(`  ${line}\n`);
  if (report.lost.length > 0 || report.problems.length > 0) throw new Error(`${report.lost.length} lost, ${report.problems.length} problems (seed ${seed})`);
}
