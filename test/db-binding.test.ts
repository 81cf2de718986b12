import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { tempDir } from './helpers/service';

/**
 * service/db/open.ts under Electron (simulated: process.versions.electron set
 * in a child process, the one thing binding.ts reads): both connections load
 * the build binding.ts names, and a missing Electron build is an error naming
 * the remedy, never better-sqlite3's NODE_MODULE_VERSION crash.
 */

const ROOT = resolve(__dirname, '..', '..');
const NODE_BUILD = join(ROOT, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');

function asElectron(script: string, env: NodeJS.ProcessEnv): { status: number | null; stdout: string; stderr: string } {
  const prelude = "Object.defineProperty(process.versions, 'electron', { value: '45.4.1' });";
  const r = spawnSync(process.execPath, ['-e', `${prelude}\n${script}`], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...env } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('under Electron without its build: opening the database fails with the remedy', () => {
  const dir = tempDir();
  try {
    // The named build is missing (the default, build/electron/, may exist on a developer's machine).
    const missing = join(dir, 'electron', 'better_sqlite3.node');
    const r = asElectron(`require('./dist/service/db/open.js').openDatabase(${JSON.stringify(join(dir, 'data'))})`, { BACKLOT_SQLITE_BINDING: missing });
    assert.notEqual(r.status, 0);
    assert.ok(r.stderr.includes(`better-sqlite3 has no build for Electron 45.4.1 at ${missing}. Run \`npm run rebuild:electron\``), r.stderr);
    assert.doesNotMatch(r.stderr, /NODE_MODULE_VERSION/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("under Electron, the data dir's lock (the first connection a server opens) loads the Electron build too", () => {
  const dir = tempDir();
  try {
    const lock = (binding: string) =>
      asElectron(`require('./dist/service/data-dir-lock.js').lockDataDir(${JSON.stringify(join(dir, 'data'))}).release(); console.log('locked')`, {
        BACKLOT_SQLITE_BINDING: binding,
      });
    // Without its build: the remedy, before better-sqlite3 loads Node's build (which real Electron cannot load).
    const missing = join(dir, 'electron', 'better_sqlite3.node');
    const refused = lock(missing);
    assert.notEqual(refused.status, 0);
    assert.ok(refused.stderr.includes(`better-sqlite3 has no build for Electron 45.4.1 at ${missing}.`), refused.stderr);
    // With it: the lock is taken with that build.
    const taken = lock(NODE_BUILD);
    assert.equal(taken.status, 0, taken.stderr);
    assert.equal(taken.stdout.trim(), 'locked');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('under Electron with BACKLOT_SQLITE_BINDING: the main and the read-only connection load that build', () => {
  const dir = tempDir();
  try {
    const script = `
      const { openDatabase, openReadOnly } = require('./dist/service/db/open.js');
      const db = openDatabase(${JSON.stringify(dir)});
      const ro = openReadOnly(${JSON.stringify(join(dir, 'backlot.db'))});
      console.log(JSON.stringify([db.prepare('select 1 as x').get(), ro.prepare('select 2 as y').get()]));`;
    const r = asElectron(script, { BACKLOT_SQLITE_BINDING: NODE_BUILD });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), [{ x: 1 }, { y: 2 }]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("under Electron, a read worker thread (which shows no electron version) follows the main thread's choice", () => {
  const dir = tempDir();
  try {
    // The main connection loads the named build; then the name changes to a missing file before the
    // worker starts. A worker that decided it runs in Electron fails naming that file; one that fell
    // back to better-sqlite3's own lookup (Node's build) would open the file without complaint.
    const missing = join(dir, 'missing.node');
    const script = `
      const { Worker } = require('node:worker_threads');
      const { openDatabase } = require('./dist/service/db/open.js');
      openDatabase(${JSON.stringify(dir)});
      process.env.BACKLOT_SQLITE_BINDING = ${JSON.stringify(missing)};
      const w = new Worker(
        "const { openReadOnly } = require(" + JSON.stringify(process.cwd() + '/dist/service/db/open.js') + ");" +
        "try { openReadOnly(" + JSON.stringify(${JSON.stringify(join(dir, 'backlot.db'))}) + "); console.log('opened'); }" +
        "catch (e) { console.log('refused: ' + e.message); }" +
        "console.log('electron version in the worker: ' + process.versions.electron);",
        { eval: true },
      );
      w.on('exit', () => undefined);`;
    const r = asElectron(script, { BACKLOT_SQLITE_BINDING: NODE_BUILD });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /electron version in the worker: undefined/);
    assert.ok(r.stdout.includes(`refused: better-sqlite3 has no build for Electron (ABI ${process.versions.modules}) at ${missing}`), r.stdout);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
