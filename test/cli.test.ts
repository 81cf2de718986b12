import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { BIN, runCli, startService, tempDir } from './helpers/service';
import { send } from './helpers/http';

/** bin/backlot as README.md "The CLI" names it: commands, flags, output, exit codes. */

describe('help and bad arguments', () => {
  for (const args of [['--help'], ['serve', '--help'], ['studio', 'add', '--help'], ['studio', 'set', '--help'], ['token', 'create', '--help'], ['token', 'revoke', '--help']]) {
    test(`${args.join(' ')} prints usage and exits 0`, () => {
      const r = runCli(args);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /Usage: backlot/);
    });
  }

  const bad: [string, string[], RegExp][] = [
    ['no command', [], /Usage/],
    ['an unknown command', ['frobnicate'], /Unknown command/],
    ['an unknown flag', ['serve', '--bogus'], /bogus/],
    ['a port that is not a number', ['serve', '--port', 'abc'], /--port/],
    ['a port over 65535', ['serve', '--port', '70000'], /65535/],
    ['a body limit of zero', ['serve', '--body-limit', '0'], /--body-limit/],
    ['studio add without an id', ['studio', 'add'], /argument/],
    ['a studio id that breaks the pattern', ['studio', 'add', 'Bad_Id'], /must match/],
    ['a one-letter studio id', ['studio', 'add', 'a'], /must match/],
    ['studio set with nothing to change', ['studio', 'set', 'x'], /Nothing to change/],
    ['a negative quota', ['studio', 'add', 'ok-id', '--quota-records', '-1'], /quota-records/],
    ['token create without --studio', ['token', 'create', '--caps', 'kv'], /--studio/],
    ['token create without --caps', ['token', 'create', '--studio', 'x'], /--caps/],
    ['an unknown capability', ['token', 'create', '--studio', 'x', '--caps', 'kv,root'], /root/],
    ['an empty capability list', ['token', 'create', '--studio', 'x', '--caps', ','], /at least one capability/],
    ['token revoke without a token', ['token', 'revoke'], /argument/],
    ['an unknown studio subcommand', ['studio', 'remove', 'x'], /Unknown studio command/],
  ];
  for (const [name, args, message] of bad) {
    test(`${name}: exit 2 with a message`, () => {
      const r = runCli([...args, '--data-dir', tempDir()]);
      assert.equal(r.code, 2, `${r.stdout}${r.stderr}`);
      assert.match(r.stderr + r.stdout, message);
    });
  }
});

describe('studio and token administration', () => {
  test('studio add prints id, name and folders, and creates the folders', () => {
    const dir = tempDir();
    const r = runCli(['studio', 'add', 'painter', '--name', 'The Painter', '--data-dir', dir]);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(out).sort(), ['data_dir', 'id', 'name', 'stage_dir']);
    assert.equal(out.id, 'painter');
    assert.equal(out.name, 'The Painter');
    assert.equal(out.stage_dir, join(dir, 'studios', 'painter', 'stage'));
    assert.equal(out.data_dir, join(dir, 'studios', 'painter', 'data'));
    assert.ok(statSync(out.stage_dir).isDirectory());
    assert.ok(statSync(out.data_dir).isDirectory());
    const named = JSON.parse(runCli(['studio', 'add', 'plain', '--data-dir', dir]).stdout);
    assert.equal(named.name, 'plain', 'the name defaults to the id');
  });

  test('a taken id is exit 1 with id_taken', () => {
    const dir = tempDir();
    assert.equal(runCli(['studio', 'add', 'dup', '--data-dir', dir]).code, 0);
    const r = runCli(['studio', 'add', 'dup', '--data-dir', dir]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /id_taken/);
  });

  test('studio set of an unknown studio is exit 1', () => {
    const r = runCli(['studio', 'set', 'ghost', '--quota-records', '5', '--data-dir', tempDir()]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /ghost/);
  });

  test('token create prints only a high-entropy token; only its hash is stored', () => {
    const dir = tempDir();
    runCli(['studio', 'add', 'keeper', '--data-dir', dir]);
    const r = runCli(['token', 'create', '--studio', 'keeper', '--caps', 'kv,records', '--data-dir', dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^\S+\n$/);
    const token = r.stdout.trim();
    assert.ok(Buffer.from(token.replace(/^blt_/, ''), 'base64url').length >= 32, 'at least 32 random bytes');
    for (const file of readdirSync(dir).filter((f) => f.startsWith('backlot.db'))) {
      assert.equal(readFileSync(join(dir, file)).includes(token), false, `${file} holds the token in clear`);
    }
    const second = runCli(['token', 'create', '--studio', 'keeper', '--caps', 'kv', '--data-dir', dir]).stdout.trim();
    assert.notEqual(second, token);
  });

  test('token create for an unknown studio is exit 1', () => {
    const r = runCli(['token', 'create', '--studio', 'ghost', '--caps', 'kv', '--data-dir', tempDir()]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /ghost/);
  });

  test('token revoke of an unknown or already revoked token is exit 1', () => {
    const dir = tempDir();
    runCli(['studio', 'add', 'rev', '--data-dir', dir]);
    const token = runCli(['token', 'create', '--studio', 'rev', '--caps', 'kv', '--data-dir', dir]).stdout.trim();
    assert.equal(runCli(['token', 'revoke', token, '--data-dir', dir]).code, 0);
    assert.equal(runCli(['token', 'revoke', token, '--data-dir', dir]).code, 1);
    assert.equal(runCli(['token', 'revoke', 'blt_unknown', '--data-dir', dir]).code, 1);
  });

  test('a data dir that cannot be made, or is a file, is a clear error and exit 1', () => {
    const file = join(tempDir(), 'plain-file');
    writeFileSync(file, '');
    for (const dir of [file, join(file, 'below'), '/proc/backlot-cannot-be-here']) {
      const r = runCli(['studio', 'add', 'nowhere', '--data-dir', dir]);
      assert.equal(r.code, 1, `${dir}: ${r.stderr}`);
      assert.match(r.stderr, /Cannot use the data dir/);
    }
  });

  test('BACKLOT_HOME is the default data dir', () => {
    const home = tempDir();
    const r = runCli(['studio', 'add', 'homed'], { BACKLOT_HOME: home });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(existsSync(join(home, 'backlot.db')));
    assert.ok(existsSync(join(home, 'studios', 'homed', 'stage')));
  });
});

describe('serve', () => {
  test('prints the ready line and stops on SIGINT with exit 0 within 5 s', async () => {
    const svc = await startService();
    const token = svc.studio('alpha', ['kv']);
    // a request in flight on a keep-alive connection must not hold the exit up
    assert.equal((await send(svc.port, { path: '/api/v1/sessions', token })).status, 200);
    const started = Date.now();
    const code = await svc.stop('SIGINT');
    assert.equal(code, 0);
    assert.ok(Date.now() - started < 5000);
  });

  test('a SIGINT sent the moment the ready line is read still stops cleanly (handlers come first)', async () => {
    for (let round = 0; round < 3; round++) {
      const dir = tempDir();
      const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data-dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (d) => (stderr += d));
      child.stdout!.on('data', (d: Buffer) => {
        if (/http:\/\/127\.0\.0\.1:\d+/.test(String(d))) child.kill('SIGINT');
      });
      const code = await new Promise((r) => child.once('exit', (c, signal) => r(signal ?? c)));
      assert.equal(code, 0, `round ${round}: ended by ${String(code)}\n${stderr}`);
      assert.match(stderr, /SIGINT: stopping/);
      assert.equal(existsSync(join(dir, 'server.json')), false, 'the server file is removed by the clean stop');
    }
  });

  test('stops on SIGTERM with exit 0 and keeps its data for the next start', async () => {
    const dir = tempDir();
    const first = await startService({ dataDir: dir });
    const token = first.studio('keep', ['kv']);
    const put = await send(first.port, { method: 'PUT', path: '/api/v1/kv/ns/k', token, body: { kept: true } });
    assert.equal(put.status, 200, put.text);
    first.child.kill('SIGTERM');
    const code = await new Promise((r) => first.child.once('exit', r));
    assert.equal(code, 0);
    const second = await startService({ dataDir: dir });
    try {
      const res = await send(second.port, { path: '/api/v1/kv/ns/k', token });
      assert.deepEqual(res.json.value, { kept: true });
    } finally {
      await second.stop();
    }
  });

  test('a port in use is a clear error and exit 1', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    const child = spawn(process.execPath, [BIN, 'serve', '--port', String(port), '--data-dir', tempDir()]);
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise((r) => child.once('exit', r));
    blocker.close();
    assert.equal(code, 1);
    assert.match(stderr, new RegExp(`Port ${port}.*in use`));
  });
});
