import { interruptBench } from './harness';
import { runAssetsBench } from './assets';
import { runCrashBench } from './crash';
import { runEditorBench } from './editor';
import { runExportBench } from './export';
import { runGalleryBench } from './gallery';
import { runJobsBench } from './jobs';
import { runKvBench } from './kv';
import { runRecordsBench } from './records';
import { runResponsivenessBench } from './responsiveness';
import { runStartupBench } from './startup';
import { runSoakBench } from './soak';

/** `node dist/bench/run.js NAME`: exit 0 done, 1 the bench broke, 2 no or unknown NAME. */
const BENCHES: Record<string, () => Promise<void>> = {
  assets: runAssetsBench,
  crash: runCrashBench,
  editor: runEditorBench,
  export: runExportBench,
  gallery: runGalleryBench,
  jobs: runJobsBench,
  kv: runKvBench,
  records: runRecordsBench,
  responsiveness: runResponsivenessBench,
  startup: runStartupBench,
  soak: runSoakBench,
};

async function main(name: string | undefined): Promise<number> {
  const bench = name === undefined ? undefined : BENCHES[name];
  if (!bench) {
    if (name !== undefined) process.stderr.write(`Unknown bench "${name}".\n`);
    process.stderr.write(`Usage: npm run bench -- NAME\nBenches: ${Object.keys(BENCHES).join(', ')}\n`);
    return 2;
  }
  // Once only: a second Ctrl-C kills at once; the first lets the bench clean up.
  process.once('SIGINT', interruptBench);
  process.once('SIGTERM', interruptBench);
  try {
    await bench();
    return 0;
  } catch (err) {
    process.stderr.write(`bench ${name} failed: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

main(process.argv[2]).then((code) => {
  process.exitCode = code;
});
