import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createService, DataDirLockedError } from '../service/app';
import { SERVER_FILE } from '../service/launcher';
import { fixture, pidsIn, startLauncher } from './helpers/launcher';
import { BIN, ROOT, startService, tempDir } from './helpers/service';

/**
 * One server per data dir (docs/api.md "One server per data dir"): `serve`
 * holds DIR/lock.db's exclusive lock while it runs; a second one exits 1 at
 * once naming the first one's address and pid and touches nothing; a killed
 * holder's lock is the kernel's to drop; the CLI's admin commands work beside
 * a running server.
 */

/** Every entry under `dir` with its size and mtime: a second server must change none of them. */
function snapshot(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const full = join(d, name);
      const st = lstatSync(full);
      out.push(`${full.slice(dir.length)} ${st.isDirectory() ? 'dir' : st.size} ${st.mtimeMs}`);
      if (st.isDirectory()) walk(full);
    }
  };
  walk(dir);
  return out;
}

/** Runs the CLI as a child; its exit code, output and wall time. */
function runTimed(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr, ms: performance.now() - started })));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

test('a second serve on the dir exits 1 at once, names the first one, and touches nothing; the first keeps its studio and its server file', async () => {
  const { svc, l } = await startLauncher({ keepDataDir: true });
  const dir = svc.dataDir;
  let pids: number[] = [];
  try {
    await l.installOk(fixture({ id: 'busy', env: { FIXTURE_MODE: 'child' } }));
    const studio = await l.startOk('busy');
    pids = pidsIn(await l.studioLog('busy', (t) => t === `listening on ${studio.port}`));
    assert.equal(pids.length, 2, 'the studio and its child');
    // An upload in flight on the first server: a second one's start-up recovery would clear it.
    writeFileSync(join(dir, 'blobs', '.tmp', 'in-flight.part'), 'half an upload');
    const serverFile = readFileSync(join(dir, SERVER_FILE), 'utf8');
    const before = snapshot(dir);

    // What loading the program alone takes right now (the machine is shared): the refusal must add under a second.
    const baseline = await runTimed(['serve', '--help']);
    // With --log-file: a refused start writes no log either.
    const second = await runTimed(['serve', '--port', '0', '--log-file', '--data-dir', dir]);
    assert.equal(second.code, 1, second.stderr);
    assert.equal(second.stdout, '');
    assert.match(second.stderr, new RegExp(`already running on the data dir ${escape(dir)}: ${escape(svc.origin)} \\(pid ${svc.child.pid}\\)`));
    assert.ok(second.ms < baseline.ms + 1000, `refused in ${second.ms.toFixed(0)} ms (loading alone: ${baseline.ms.toFixed(0)} ms)`);

    assert.deepEqual(snapshot(dir), before, 'nothing in the data dir was created, changed or removed');
    assert.equal(readFileSync(join(dir, SERVER_FILE), 'utf8'), serverFile, 'the server file is intact');
    assert.ok(pids.every(alive), 'the running studio and its child were not ended as orphans');
    assert.equal((await l.studio('busy')).state, 'running');
    const url = svc.cli(['login-url']);
    assert.equal(url.code, 0, url.stderr);
    assert.match(url.stdout, new RegExp(`^${escape(svc.origin)}/login\\?code=`));
  } finally {
    await svc.stop();
    for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a holder killed with SIGKILL never blocks the next serve, which then holds the lock itself', async () => {
  const dataDir = tempDir();
  const first = await startService({ dataDir, keepDataDir: true });
  try {
    first.child.kill('SIGKILL');
    await first.stop();
    const next = await startService({ dataDir, keepDataDir: true });
    try {
      const third = await runTimed(['serve', '--port', '0', '--data-dir', dataDir]);
      assert.equal(third.code, 1);
      assert.match(third.stderr, new RegExp(`${escape(next.origin)} \\(pid ${next.child.pid}\\)`));
    } finally {
      assert.equal(await next.stop(), 0);
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a holder that has not written its server file yet: the refusal says so and gives its pid, not a stale file\'s', async () => {
  const dataDir = tempDir();
  // A process that holds the lock and never listens (a server in the middle of its start-up).
  const holder = spawn(
    process.execPath,
    ['-e', `require(${JSON.stringify(join(ROOT, 'dist', 'service', 'data-dir-lock.js'))}).lockDataDir(process.argv[1]); console.log('held'); setInterval(() => {}, 1e6);`, dataDir],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    await new Promise<void>((resolve, reject) => {
      holder.stdout.once('data', () => resolve());
      holder.once('exit', (code) => reject(new Error(`the holder exited with ${code}`)));
    });
    // A server file a crashed run left, naming a live process (this one) that is not the holder.
    writeFileSync(join(dataDir, SERVER_FILE), JSON.stringify({ pid: process.pid, port: 1, url: 'http://127.0.0.1:1', started_at: 'x' }));
    const before = snapshot(dataDir);
    const second = await runTimed(['serve', '--port', '0', '--data-dir', dataDir]);
    assert.equal(second.code, 1, second.stderr);
    assert.match(second.stderr, new RegExp(`holds the data dir ${escape(dataDir)} \\(process ${holder.pid}\\); it is still starting and has not written its address yet`));
    assert.doesNotMatch(second.stderr, /127\.0\.0\.1:1\b/);
    assert.deepEqual(snapshot(dataDir), before);
  } finally {
    holder.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('the admin commands work beside a running server (they do not take the lock)', async () => {
  const svc = await startService();
  try {
    const ok = (args: string[]) => {
      const r = svc.cli(args);
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      return r.stdout.trim();
    };
    ok(['studio', 'add', 'beside']);
    ok(['studio', 'set', 'beside', '--quota-records', '10']);
    const token = ok(['token', 'create', '--studio', 'beside', '--caps', 'records']);
    ok(['index', 'add', '--studio', 'beside', '--collection', 'c', '--field', 'f']);
    const credential = ok(['launcher-token']);
    assert.match(ok(['login-url']), /\/login\?code=/);
    assert.match(ok(['studios']), /\S/);
    ok(['token', 'revoke', token]);
    ok(['token', 'revoke', credential]);
    assert.equal(svc.child.exitCode, null, 'the server still runs');
  } finally {
    await svc.stop();
  }
});

test('two services in one process on one dir: the second throws DataDirLockedError and changes nothing; after close() the dir is free', async () => {
  const dataDir = tempDir();
  try {
    const first = createService({ dataDir, readWorkers: 0 });
    const { url } = await first.listen(0);
    mkdirSync(join(dataDir, 'blobs', '.tmp'), { recursive: true });
    writeFileSync(join(dataDir, 'blobs', '.tmp', 'in-flight.part'), 'half an upload');
    const before = snapshot(dataDir);
    assert.throws(
      () => createService({ dataDir, readWorkers: 0 }),
      (err: unknown) =>
        err instanceof DataDirLockedError && err.holder.pid === process.pid && err.holder.url === url && err.message.includes(`${url} (pid ${process.pid})`),
    );
    assert.deepEqual(snapshot(dataDir), before);
    // The refused attempt did not drop the first one's lock (POSIX locks are per process, and closing a file drops them).
    const other = await runTimed(['serve', '--port', '0', '--data-dir', dataDir]);
    assert.equal(other.code, 1, other.stderr);
    assert.match(other.stderr, new RegExp(`${escape(url)} \\(pid ${process.pid}\\)`));
    await first.close();
    const again = createService({ dataDir, readWorkers: 0 });
    await again.close();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a failed start lets go of the lock', () => {
  const dataDir = tempDir();
  try {
    // A data dir whose database is not a database: createService throws after it took the lock.
    writeFileSync(join(dataDir, 'backlot.db'), 'not a database, by far'.repeat(100));
    assert.throws(() => createService({ dataDir, readWorkers: 0 }), (err: unknown) => !(err instanceof DataDirLockedError));
    assert.throws(() => createService({ dataDir, readWorkers: 0 }), (err: unknown) => !(err instanceof DataDirLockedError), 'refused for its own reason again, not for a lock');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a damaged lock file is an error that says what to do, and is left in place', async () => {
  const dataDir = tempDir();
  try {
    const junk = 'not a database, by far'.repeat(100);
    writeFileSync(join(dataDir, 'lock.db'), junk);
    assert.throws(() => createService({ dataDir, readWorkers: 0 }), /lock file .*lock\.db is damaged .*remove that file and start again/);
    assert.equal(readFileSync(join(dataDir, 'lock.db'), 'utf8'), junk);
    rmSync(join(dataDir, 'lock.db'));
    await createService({ dataDir, readWorkers: 0 }).close();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
