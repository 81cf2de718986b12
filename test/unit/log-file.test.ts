import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { logFilePath, needsRotation, openLogFile, rotationRenames, stampLines } from '../../service/core/log-file';

/** The rotating log file (service/core/log-file.ts): the pure decisions as tables, then the writer on a temp folder. */

describe('needsRotation', () => {
  const cases: Array<[number, number, number, boolean]> = [
    [0, 10, 100, false],
    [0, 500, 100, false], // an empty file takes even an oversized write
    [90, 10, 100, false],
    [90, 11, 100, true],
    [100, 1, 100, true],
    [5 * 1024 * 1024 - 1, 1, 5 * 1024 * 1024, false],
  ];
  for (const [size, incoming, limit, expected] of cases) {
    test(`${size} + ${incoming} of ${limit}: ${expected}`, () => assert.equal(needsRotation(size, incoming, limit), expected));
  }
});

describe('rotationRenames', () => {
  test('keep 3: .2 → .3, .1 → .2, the file → .1', () => {
    assert.deepEqual(rotationRenames('/d/backlot.log', 3), [
      ['/d/backlot.log.2', '/d/backlot.log.3'],
      ['/d/backlot.log.1', '/d/backlot.log.2'],
      ['/d/backlot.log', '/d/backlot.log.1'],
    ]);
  });
  test('keep 1 and keep 0', () => {
    assert.deepEqual(rotationRenames('f', 1), [['f', 'f.1']]);
    assert.deepEqual(rotationRenames('f', 0), []);
  });
});

describe('stampLines', () => {
  const S = 'T ';
  const cases: Array<[string, boolean, string, boolean]> = [
    ['a\n', true, 'T a\n', true],
    ['a\nb\n', true, 'T a\nT b\n', true],
    ['a', true, 'T a', false],
    ['rest\n', false, 'rest\n', true], // the end of a line begun earlier
    ['rest\nnext', false, 'rest\nT next', false],
    ['\n', true, 'T \n', true], // an empty line is still a line
    ['', true, '', true],
  ];
  for (const [text, atStart, out, endsLine] of cases) {
    test(JSON.stringify([text, atStart]), () => assert.deepEqual(stampLines(text, S, atStart), { text: out, atLineStart: endsLine }));
  }
});

test('logFilePath: DIR/logs/backlot.log', () => {
  assert.equal(logFilePath('/data'), join('/data', 'logs', 'backlot.log'));
});

test('the writer appends, rotates past the limit, keeps 3 old files and drops the oldest', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'backlot-log-'));
  try {
    const file = logFilePath(dir);
    const log = openLogFile(file, { limit: 100 });
    for (let i = 0; i < 20; i++) log.write(`line ${String(i).padStart(2, '0')} ${'x'.repeat(30)}\n`); // 39 bytes each
    await log.flush();
    // 20 lines at 2 per file (a third would pass 100 bytes): 10 files' worth; 4 kept.
    assert.equal(readFileSync(file, 'utf8').split('\n')[0]!.slice(0, 7), 'line 18');
    assert.equal(readFileSync(`${file}.1`, 'utf8').slice(0, 7), 'line 16');
    assert.equal(readFileSync(`${file}.2`, 'utf8').slice(0, 7), 'line 14');
    assert.equal(readFileSync(`${file}.3`, 'utf8').slice(0, 7), 'line 12');
    assert.equal(existsSync(`${file}.4`), false);
    for (const f of [file, `${file}.1`, `${file}.2`, `${file}.3`]) assert.ok(statSync(f).size <= 100, f);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    await log.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the writer continues an existing file, and rotates it when it is already full', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'backlot-log-'));
  try {
    const file = logFilePath(dir);
    const first = openLogFile(file, { limit: 100 });
    first.write('from the first run\n');
    await first.close();
    const second = openLogFile(file, { limit: 100 });
    second.write('from the second run\n');
    await second.flush();
    assert.equal(readFileSync(file, 'utf8'), 'from the first run\nfrom the second run\n');
    await second.close();
    writeFileSync(file, 'y'.repeat(100));
    const third = openLogFile(file, { limit: 100 });
    third.write('after a full file\n');
    await third.close();
    assert.equal(readFileSync(file, 'utf8'), 'after a full file\n');
    assert.equal(readFileSync(`${file}.1`, 'utf8'), 'y'.repeat(100));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('write never waits: it returns before the disk is touched; flushSync (at exit) writes the queue and the batch in flight', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'backlot-log-'));
  try {
    const file = logFilePath(dir);
    const log = openLogFile(file);
    log.write('in flight\n'); // the drain took it and waits to open the file
    assert.equal(existsSync(file) ? readFileSync(file, 'utf8') : '', '', 'nothing written synchronously');
    log.write('still queued\n');
    log.flushSync();
    assert.equal(readFileSync(file, 'utf8'), 'in flight\nstill queued\n');
    log.write('after the end\n');
    await log.flush();
    assert.equal(readFileSync(file, 'utf8'), 'in flight\nstill queued\n', 'nothing twice, nothing after');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('when the disk falls behind, lines past the queue limit are dropped and the drop is logged', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'backlot-log-'));
  try {
    const file = logFilePath(dir);
    const log = openLogFile(file, { maxQueued: 50 });
    log.write('a'.repeat(40) + '\n'); // taken at once by the drain, which now waits on the disk
    log.write('b'.repeat(40) + '\n'); // queued: 41 bytes
    log.write('c'.repeat(40) + '\n'); // 82 would pass 50: dropped
    await log.flush();
    log.write('d\n');
    await log.close();
    assert.equal(
      readFileSync(file, 'utf8'),
      `${'a'.repeat(40)}\n${'b'.repeat(40)}\n[log] 41 bytes of log dropped: the disk fell behind\nd\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
