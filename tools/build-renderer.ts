import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * Bundles the pages a person sees (renderer/) into dist/renderer/ with esbuild:
 * one script and one stylesheet per page, no inline code (the pages are served
 * with `script-src 'self'`), no remote import. Types are checked separately by
 * `tsc -p renderer/tsconfig.json` (npm run build). Run after tsc:
 * `node dist/tools/build-renderer.js`.
 *
 * The output is written to a temp folder and renamed into place, so a running
 * service never serves half a build. The subfolders tsc wrote there before
 * (dist/renderer/<page>/*.js: the pure modules the unit tests import, such as
 * renderer/editor/frames.ts) are carried over; only the bundles are served.
 */

const ROOT = resolve(__dirname, '..', '..');
const OUT = join(ROOT, 'dist', 'renderer');
const PAGES = ['launcher', 'editor'];

async function main(): Promise<void> {
  // esbuild is a devDependency: a packaged app ships the built files, not the bundler.
  const esbuild = require('esbuild') as typeof import('esbuild');
  const tmp = `${OUT}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const entryPoints = PAGES.flatMap((page) => [
    { in: join(ROOT, 'renderer', page, 'main.ts'), out: page },
    { in: join(ROOT, 'renderer', page, `${page}.css`), out: page },
  ]);
  await esbuild.build({
    entryPoints,
    outdir: tmp,
    bundle: true,
    format: 'iife',
    target: ['chrome120', 'firefox120', 'safari17'],
    sourcemap: 'linked',
    minify: false,
    legalComments: 'none',
    logLevel: 'warning',
    // Nothing from the network, no Node built-ins: a page talks HTTP to its own origin only.
    platform: 'browser',
    external: [],
  });
  if (existsSync(OUT)) {
    for (const entry of readdirSync(OUT, { withFileTypes: true })) {
      if (entry.isDirectory()) cpSync(join(OUT, entry.name), join(tmp, entry.name), { recursive: true });
    }
  }
  rmSync(OUT, { recursive: true, force: true });
  renameSync(tmp, OUT);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
