import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ELECTRON_BINDING } from '../service/db/binding';

/**
 * `npm run rebuild:electron`: builds better-sqlite3 for the Electron in
 * node_modules/electron, from a copy of its sources in a temp folder, into
 * build/electron/better_sqlite3.node (with better_sqlite3.json: the Electron
 * version and ABI it was built for). node_modules keeps Node's build, so
 * bin/backlot and `npm test` never meet the wrong ABI, and the desktop app
 * loads this one (service/db/binding.ts).
 *
 * Needs what better-sqlite3's own install needs (python3, make, a C++
 * compiler) and Electron's headers, which node-gyp downloads from
 * https://electronjs.org/headers (internet access; cached after the first
 * time). Options: --target VERSION (default: the installed electron's),
 * --dist-url URL (headers mirror).
 */

const ROOT = resolve(__dirname, '..', '..');

function option(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

function main(): number {
  const electronDir = join(ROOT, 'node_modules', 'electron');
  const target = option('target') ?? (JSON.parse(readFileSync(join(electronDir, 'package.json'), 'utf8')) as { version: string }).version;
  const modules = option('target') ? null : readFileSync(join(electronDir, 'abi_version'), 'utf8').trim();
  const distUrl = option('dist-url') ?? 'https://electronjs.org/headers';
  const gyp = process.env.npm_config_node_gyp ?? require.resolve('node-gyp/bin/node-gyp.js');

  const work = mkdtempSync(join(tmpdir(), 'backlot-sqlite-electron-'));
  try {
    cpSync(join(ROOT, 'node_modules', 'better-sqlite3'), work, {
      recursive: true,
      filter: (src) => !src.startsWith(join(ROOT, 'node_modules', 'better-sqlite3', 'build')),
    });
    process.stderr.write(`Building better-sqlite3 for Electron ${target} (headers from ${distUrl}) ...\n`);
    const run = spawnSync(process.execPath, [gyp, 'rebuild', '--release', `--target=${target}`, `--arch=${process.arch}`, `--dist-url=${distUrl}`], {
      cwd: work,
      stdio: 'inherit',
    });
    if (run.status !== 0) {
      process.stderr.write(
        `Building better-sqlite3 for Electron ${target} failed. It needs Electron's headers from ${distUrl} ` +
          '(internet access, or --dist-url for a mirror), python3, make and a C++ compiler.\n',
      );
      return 1;
    }
    const out = join(ROOT, ELECTRON_BINDING);
    mkdirSync(join(out, '..'), { recursive: true });
    copyFileSync(join(work, 'build', 'Release', 'better_sqlite3.node'), out);
    writeFileSync(out.replace(/\.node$/, '.json'), `${JSON.stringify({ electron: target, modules })}\n`);
    process.stderr.write(`Wrote ${out}\n`);
    return 0;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

process.exitCode = main();
