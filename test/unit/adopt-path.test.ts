import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { checkAdoptPath, openChecked, type AdoptRoot } from '../../service/assets/adopt-path';
import { tempDir } from '../helpers/service';

/** Which paths adopt may take (docs/api.md "Adopt `POST /assets:adopt`"), against real files. */

const base = tempDir('backlot-adopt-path-');
const stage = join(base, 'studio', 'stage');
const data = join(base, 'studio', 'data');
const outside = join(base, 'outside');
for (const dir of [stage, data, outside, join(stage, 'sub'), join(stage, 'dir')]) mkdirSync(dir, { recursive: true });
writeFileSync(join(stage, 'a.txt'), 'a');
writeFileSync(join(stage, 'sub', 'b.txt'), 'b');
writeFileSync(join(data, 'c.txt'), 'c');
writeFileSync(join(outside, 'secret.txt'), 'secret');
symlinkSync(outside, join(stage, 'link-dir'));
symlinkSync(join(outside, 'secret.txt'), join(stage, 'link-file'));
symlinkSync(join(stage, 'a.txt'), join(stage, 'link-inside'));
execFileSync('mkfifo', [join(stage, 'fifo')]);
const roots: AdoptRoot[] = [
  { kind: 'stage', dir: stage },
  { kind: 'data', dir: data },
];
after(() => rmSync(base, { recursive: true, force: true }));

const err = (status: number, code: string) => ({ name: 'ApiError', status, code });

describe('checkAdoptPath', () => {
  const rows: { name: string; path: string; expect: { root: string } | { status: number; code: string } }[] = [
    { name: 'a stage file', path: join(stage, 'a.txt'), expect: { root: 'stage' } },
    { name: 'a file in a stage subfolder', path: join(stage, 'sub', 'b.txt'), expect: { root: 'stage' } },
    { name: 'a data file', path: join(data, 'c.txt'), expect: { root: 'data' } },
    { name: '.. that stays inside', path: `${stage}/sub/../a.txt`, expect: { root: 'stage' } },
    { name: 'relative path', path: 'stage/a.txt', expect: err(400, 'bad_request') },
    { name: 'NUL in the path', path: `${stage}/a\0.txt`, expect: err(400, 'bad_request') },
    { name: '.. segments out of the stage', path: `${stage}/../../outside/secret.txt`, expect: err(422, 'outside_roots') },
    { name: '.. into a sibling studio folder', path: `${stage}/../data/../../studio2/x`, expect: err(422, 'outside_roots') },
    { name: '/proc/self/environ', path: '/proc/self/environ', expect: err(422, 'outside_roots') },
    { name: '/proc/self/root + stage path', path: `/proc/self/root${stage}/a.txt`, expect: err(422, 'outside_roots') },
    { name: '/etc/passwd', path: '/etc/passwd', expect: err(422, 'outside_roots') },
    { name: 'the stage folder itself', path: stage, expect: err(422, 'outside_roots') },
    { name: 'a prefix look-alike (stage2)', path: `${stage}2/a.txt`, expect: err(422, 'outside_roots') },
    { name: 'a symlink in the middle', path: join(stage, 'link-dir', 'secret.txt'), expect: err(422, 'outside_roots') },
    { name: 'a symlink as the last component', path: join(stage, 'link-file'), expect: err(422, 'outside_roots') },
    { name: 'a symlink to a file inside the stage', path: join(stage, 'link-inside'), expect: err(422, 'outside_roots') },
    { name: 'a directory', path: join(stage, 'dir'), expect: err(422, 'not_a_file') },
    { name: 'a FIFO', path: join(stage, 'fifo'), expect: err(422, 'not_a_file') },
    { name: 'a missing file', path: join(stage, 'nope.txt'), expect: err(404, 'not_found') },
    { name: 'a file used as a folder', path: join(stage, 'a.txt', 'x'), expect: err(404, 'not_found') },
    { name: '.. after a symlinked folder', path: `${stage}/link-dir/../a.txt`, expect: err(422, 'outside_roots') },
    { name: '.. after a missing folder', path: `${stage}/missing/../a.txt`, expect: err(404, 'not_found') },
    { name: '.. after a file', path: `${stage}/a.txt/../a.txt`, expect: err(404, 'not_found') },
    { name: 'a file written as a folder (trailing slash)', path: `${stage}/a.txt/`, expect: err(422, 'not_a_file') },
    { name: 'out and back into the stage', path: `${stage}/../stage/a.txt`, expect: err(422, 'outside_roots') },
  ];
  for (const row of rows) {
    test(row.name, () => {
      if ('root' in row.expect) assert.equal(checkAdoptPath(row.path, roots).root, row.expect.root);
      else assert.throws(() => checkAdoptPath(row.path, roots), row.expect);
    });
  }

  test('a stage folder that is itself a symlink is refused under either name', () => {
    const moved = join(base, 'moved-stage');
    mkdirSync(moved);
    writeFileSync(join(moved, 'm.txt'), 'm');
    const linkedStage = join(base, 'studio-b-stage');
    symlinkSync(moved, linkedStage);
    const r: AdoptRoot[] = [{ kind: 'stage', dir: linkedStage }];
    assert.throws(() => checkAdoptPath(join(linkedStage, 'm.txt'), r), err(422, 'outside_roots'));
    assert.throws(() => checkAdoptPath(join(moved, 'm.txt'), r), err(422, 'outside_roots'));
  });
});

describe('openChecked: the file may not change between check and open', () => {
  test('the checked file opens and is the same file', async () => {
    const checked = checkAdoptPath(join(stage, 'a.txt'), roots);
    const { handle, stat } = await openChecked(checked);
    assert.equal(stat.ino, checked.stat.ino);
    await handle.close();
  });

  test('a file replaced by a symlink after the check is refused (O_NOFOLLOW)', async () => {
    const path = join(stage, 'swap1.txt');
    writeFileSync(path, 'x');
    const checked = checkAdoptPath(path, roots);
    unlinkSync(path);
    symlinkSync(join(outside, 'secret.txt'), path);
    await assert.rejects(openChecked(checked), err(422, 'outside_roots'));
  });

  test('a file replaced by another file after the check is refused (dev/ino differ)', async () => {
    const path = join(stage, 'swap2.txt');
    writeFileSync(path, 'x');
    const checked = checkAdoptPath(path, roots);
    writeFileSync(join(stage, 'other.txt'), 'y');
    renameSync(join(stage, 'other.txt'), path);
    await assert.rejects(openChecked(checked), err(409, 'conflict'));
  });

  test('a folder of the path replaced by a symlink after the check is refused', async () => {
    mkdirSync(join(stage, 'swapdir'));
    writeFileSync(join(stage, 'swapdir', 'f.txt'), 'f');
    writeFileSync(join(outside, 'f.txt'), 'outside');
    const checked = checkAdoptPath(join(stage, 'swapdir', 'f.txt'), roots);
    renameSync(join(stage, 'swapdir'), join(stage, 'swapdir-old'));
    symlinkSync(outside, join(stage, 'swapdir'));
    await assert.rejects(openChecked(checked), err(409, 'conflict'));
  });

  test('a file removed after the check is 404', async () => {
    const path = join(stage, 'gone.txt');
    writeFileSync(path, 'x');
    const checked = checkAdoptPath(path, roots);
    unlinkSync(path);
    await assert.rejects(openChecked(checked), err(404, 'not_found'));
  });
});
