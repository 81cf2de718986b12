import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import { BIN, runCli, tempDir, type TestService } from './helpers/service';
import { CLIPMAKER, fixture, SKETCHPAD, startLauncher, type LauncherClient } from './helpers/launcher';

/**
 * The headless CLI (README.md "The CLI"): install, link, start, stop and studios
 * talk to the running server of the data dir, show a step's output as it
 * comes, exit 1 when the job fails, and exit 1 with a clear message when no
 * server runs.
 */

let svc: TestService;
let l: LauncherClient;

before(async () => {
  ({ svc, l } = await startLauncher({ env: { BACKLOT_READY_TIMEOUT_MS: '5000' } }));
});
after(async () => {
  await svc.stop();
});

test('install PATH shows the steps and their output and exits 0', () => {
  const r = svc.cli(['install', SKETCHPAD]);
  assert.equal(r.code, 0, r.stderr + r.stdout);
  assert.match(r.stdout, /^Installing sketchpad \(job \w+\)$/m);
  assert.match(r.stdout, /^==> prepare$/m);
  assert.match(r.stdout, /^Preparing Sketchpad 1\.0\.0 /m);
  assert.match(r.stdout, /^sketchpad 1\.0\.0 is installed\.$/m);
  assert.ok(r.stdout.indexOf('==> prepare') < r.stdout.indexOf('Preparing Sketchpad'));
});

test('install of a studio with a download shows the download job too', () => {
  const r = svc.cli(['install', CLIPMAKER]);
  assert.equal(r.code, 0, r.stderr + r.stdout);
  assert.match(r.stdout, /^==> check$/m);
  assert.match(r.stdout, /models\/bed\.wav: 88244 bytes, sha256 ok/);
  assert.match(r.stdout, /^clipmaker 1\.0\.0 is installed\.$/m);
});

test('a failing install exits 1 and names the step; a refused one exits 1 with the code', () => {
  const src = fixture({ id: 'clifail', install: [{ name: 'boom', run: 'node tool.js fail 3' }] });
  const r = svc.cli(['install', src]);
  assert.equal(r.code, 1, r.stdout);
  assert.match(r.stdout, /^==> boom$/m);
  assert.match(r.stdout, /^about to fail$/m);
  assert.match(r.stdout, /^install failed: Step "boom" exited with code 3\.$/m);
  const none = svc.cli(['install', tempDir()]);
  assert.equal(none.code, 1);
  assert.match(none.stderr, /not_launchable/);
  const again = svc.cli(['install', SKETCHPAD]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /id_taken/);
});

test("a step's output is shown as it comes, not at the end", async () => {
  const src = fixture({ id: 'clistream', install: [{ name: 'slow', run: 'node slow.js' }] }, {
    'slow.js': "console.log('first line'); setTimeout(() => console.log('second line'), 3000);\n",
  });
  const child = spawn(process.execPath, [BIN, 'install', src, '--data-dir', svc.dataDir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let firstAt = 0;
  child.stdout.on('data', (d) => {
    out += d;
    if (!firstAt && out.includes('first line')) firstAt = Date.now();
  });
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  const endAt = Date.now();
  assert.equal(code, 0, out);
  assert.ok(firstAt > 0, out);
  assert.ok(endAt - firstAt >= 1500, `the first line came ${endAt - firstAt} ms before the end`);
});

test('link PATH installs by reference', () => {
  const src = fixture({ id: 'clilink' });
  const r = svc.cli(['link', src]);
  assert.equal(r.code, 0, r.stderr + r.stdout);
  assert.match(r.stdout, /^Linking clilink/m);
  assert.match(r.stdout, /^clilink 1\.0\.0 is installed\.$/m);
});

test('start, studios, stop', async () => {
  const start = svc.cli(['start', 'sketchpad']);
  assert.equal(start.code, 0, start.stderr + start.stdout);
  assert.match(start.stdout, new RegExp(`^sketchpad is running: http://sketchpad\\.localhost:${svc.port}/$`, 'm'));
  assert.equal((await l.studio('sketchpad')).state, 'running');

  const table = svc.cli(['studios']);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /^ID\s+VERSION\s+STATE\s+PORT\s+ORIGIN$/m);
  assert.match(table.stdout, /^sketchpad\s+1\.0\.0\s+running\s+\d+\s+http:\/\/sketchpad\.localhost:\d+\/$/m);
  assert.match(table.stdout, /^clipmaker\s+1\.0\.0\s+installed \(heavy\)\s+-\s/m);
  const json = svc.cli(['studios', '--json']);
  assert.equal(json.code, 0);
  const items = JSON.parse(json.stdout);
  assert.deepEqual(items.map((s: any) => s.id).sort(), ['clifail', 'clilink', 'clipmaker', 'clistream', 'sketchpad']);

  const stop = svc.cli(['stop', 'sketchpad']);
  assert.equal(stop.code, 0, stop.stderr);
  assert.match(stop.stdout, /^sketchpad is stopped\.$/m);
  assert.equal((await l.studio('sketchpad')).state, 'installed');
  const twice = svc.cli(['stop', 'sketchpad']);
  assert.equal(twice.code, 1);
  assert.match(twice.stderr, /not_running/);
  const unknown = svc.cli(['start', 'nosuch']);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /not_found/);
});

test('start of a studio that never gets ready exits 1', () => {
  const src = fixture({ id: 'clinever', env: { FIXTURE_MODE: 'never' } });
  assert.equal(svc.cli(['install', src]).code, 0);
  const r = svc.cli(['start', 'clinever']);
  assert.equal(r.code, 1, r.stdout);
  assert.match(r.stdout, /^clinever did not start: The studio did not answer/m);
});

test('every launcher command with no server running exits 1 with a clear message', () => {
  const dir = tempDir();
  for (const args of [['install', SKETCHPAD], ['link', SKETCHPAD], ['start', 'sketchpad'], ['stop', 'sketchpad'], ['studios']]) {
    const r = runCli([...args, '--data-dir', dir]);
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /No Backlot server is running on .*Start one with 'backlot serve'/, args.join(' '));
  }
  // A server file left by a process that is gone does not count as a running server.
  writeFileSync(join(dir, 'server.json'), JSON.stringify({ pid: 2 ** 22 + 12345, port: svc.port, url: svc.origin, started_at: new Date().toISOString() }));
  const stale = runCli(['studios', '--data-dir', dir]);
  assert.equal(stale.code, 1);
  assert.match(stale.stderr, /No Backlot server is running/);
});

test('each command mints a launcher credential for itself and revokes it when done', () => {
  const live = () => {
    const db = new Database(join(svc.dataDir, 'backlot.db'), { readonly: true });
    try {
      return (db.prepare('SELECT count(*) AS n, (SELECT count(*) FROM launcher_credentials) AS total FROM launcher_credentials WHERE revoked_at IS NULL').get() as { n: number; total: number });
    } finally {
      db.close();
    }
  };
  const before = live();
  assert.equal(svc.cli(['studios']).code, 0);
  assert.equal(svc.cli(['stop', 'sketchpad']).code, 1);
  const after = live();
  assert.equal(after.n, before.n, 'no credential is left live');
  assert.equal(after.total, before.total + 2, 'one per command');
});
