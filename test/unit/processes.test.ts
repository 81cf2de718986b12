import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, test } from 'node:test';
import { endGroup, endSteps, groupAlive, groupMembers, spawnOptions, startGroup, taskkillPath } from '../../service/core/processes';

/**
 * The one way the service starts and ends a child (service/core/processes.ts):
 * the spawn options and the end commands of each platform as tables (Windows
 * cannot run here, its commands are checked as data), and the POSIX end
 * protocol against real processes.
 */

describe('spawnOptions', () => {
  const rows: [NodeJS.Platform, { detached: boolean; windowsHide: true; shell: false }][] = [
    ['linux', { detached: true, windowsHide: true, shell: false }],
    ['darwin', { detached: true, windowsHide: true, shell: false }],
    // No detached on Windows: it would give each child a console window of its own.
    ['win32', { detached: false, windowsHide: true, shell: false }],
  ];
  for (const [platform, expected] of rows) {
    test(platform, () => assert.deepEqual(spawnOptions(platform), expected));
  }
});

describe('endSteps', () => {
  const rows: { platform: NodeJS.Platform; env: NodeJS.ProcessEnv; graceful: unknown; force: unknown }[] = [
    {
      platform: 'linux',
      env: {},
      graceful: { kind: 'signal', pid: -4242, signal: 'SIGTERM' },
      force: { kind: 'signal', pid: -4242, signal: 'SIGKILL' },
    },
    {
      platform: 'darwin',
      env: {},
      graceful: { kind: 'signal', pid: -4242, signal: 'SIGTERM' },
      force: { kind: 'signal', pid: -4242, signal: 'SIGKILL' },
    },
    {
      platform: 'win32',
      env: { SystemRoot: 'D:\\Win' },
      graceful: { kind: 'exec', file: 'D:\\Win\\System32\\taskkill.exe', args: ['/T', '/PID', '4242'] },
      force: { kind: 'exec', file: 'D:\\Win\\System32\\taskkill.exe', args: ['/T', '/F', '/PID', '4242'] },
    },
    {
      // No SystemRoot in the environment (a child's clean one): the default folder, never a bare name looked up on PATH.
      platform: 'win32',
      env: {},
      graceful: { kind: 'exec', file: 'C:\\Windows\\System32\\taskkill.exe', args: ['/T', '/PID', '4242'] },
      force: { kind: 'exec', file: 'C:\\Windows\\System32\\taskkill.exe', args: ['/T', '/F', '/PID', '4242'] },
    },
  ];
  for (const row of rows) {
    test(`${row.platform} ${JSON.stringify(row.env)}`, () => {
      assert.deepEqual(endSteps(4242, row.platform, row.env), { graceful: row.graceful, force: row.force });
    });
  }

  test('taskkillPath takes SYSTEMROOT and windir too', () => {
    assert.equal(taskkillPath({ SYSTEMROOT: 'E:\\W' }), 'E:\\W\\System32\\taskkill.exe');
    assert.equal(taskkillPath({ windir: 'F:\\W' }), 'F:\\W\\System32\\taskkill.exe');
  });
});

describe('startGroup and endGroup (POSIX)', { skip: process.platform === 'win32' }, () => {
  test('a child leads its own group; endGroup ends it and what it started, and resolves once none is alive', async () => {
    const script = "const {spawn}=require('node:child_process');spawn(process.execPath,['-e','setInterval(()=>{},1e6)'],{stdio:'ignore'});console.log('up');setInterval(()=>{},1e6);";
    const child = startGroup(process.execPath, ['-e', script]);
    await new Promise((r) => child.stdout.once('data', r));
    const pid = child.pid!;
    assert.ok(groupAlive(pid));
    if (process.platform === 'linux') assert.equal(groupMembers(pid).length, 2);
    await endGroup(pid, 500);
    assert.equal(groupAlive(pid), false);
  });

  test('a group that ignores SIGTERM is killed after the grace', async () => {
    const child = startGroup(process.execPath, ['-e', "process.on('SIGTERM',()=>{});console.log('up');setInterval(()=>{},1e6)"]);
    await new Promise((r) => child.stdout.once('data', r));
    const began = Date.now();
    await endGroup(child.pid!, 300);
    assert.equal(groupAlive(child.pid!), false);
    assert.ok(Date.now() - began >= 300, 'waited for the grace first');
  });

  test('ending a group that is gone returns at once', async () => {
    const child = spawn(process.execPath, ['-e', '0'], { detached: true, stdio: 'ignore' });
    await new Promise((r) => child.once('exit', r));
    const began = Date.now();
    await endGroup(child.pid!, 10_000);
    assert.equal(groupAlive(child.pid!), false);
    assert.ok(Date.now() - began < 1000, 'no grace waited for');
  });
});
