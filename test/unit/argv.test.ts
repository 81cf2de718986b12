import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CommandSyntaxError, ownNode, splitCommand, withOwnNode } from '../../service/jobs/argv';

/** Manifest command text to argv (service/jobs/argv.ts): words, quotes, refused shell syntax. */

describe('splitCommand', () => {
  const ok: [string, string[]][] = [
    ['npm install', ['npm', 'install']],
    ['  npm   run\tbuild  ', ['npm', 'run', 'build']],
    ["python -c 'print(1); print(2)'", ['python', '-c', 'print(1); print(2)']],
    ['echo "a b" c', ['echo', 'a b', 'c']],
    ['echo "say \\"hi\\" \\\\ \\n"', ['echo', 'say "hi" \\ \\n']],
    ["echo 'it''s'", ['echo', 'its']],
    ['echo a\\ b', ['echo', 'a b']],
    ['echo \\|', ['echo', '|']],
    ['echo ""', ['echo', '']],
    ["serve --port '$PORT'", ['serve', '--port', '$PORT']],
    ['node server.js --port 7400', ['node', 'server.js', '--port', '7400']],
    ['a=b c', ['a=b', 'c']],
  ];
  for (const [text, argv] of ok) test(`${JSON.stringify(text)} -> ${JSON.stringify(argv)}`, () => assert.deepEqual(splitCommand(text), argv));

  const refused = [
    'npm install && npm run build',
    'cat x | grep y',
    'echo $HOME',
    'echo `id`',
    'run > out.txt',
    'a; b',
    'ls *.js',
    'cd ~',
    'echo (x)',
    'echo {a,b}',
    "echo 'open",
    'echo "open',
    'echo \\',
    '',
    '   ',
  ];
  for (const text of refused) {
    test(`${JSON.stringify(text)} is refused`, () => assert.throws(() => splitCommand(text), CommandSyntaxError));
  }
});

describe('withOwnNode: the program word `node` is Backlot’s own Node', () => {
  const plain = { execPath: '/opt/backlot/node', electron: false };
  const electron = { execPath: '/opt/Backlot/backlot', electron: true };
  const env = { PATH: '/empty', HOME: '/home/u' };
  const rows: { argv: string[]; node: typeof plain; argvOut: string[]; envOut: Record<string, string> }[] = [
    { argv: ['node', 'server.js', '--port', '7'], node: plain, argvOut: ['/opt/backlot/node', 'server.js', '--port', '7'], envOut: env },
    { argv: ['node.exe', 'x.js'], node: plain, argvOut: ['/opt/backlot/node', 'x.js'], envOut: env },
    {
      argv: ['node', 'server.js'],
      node: electron,
      argvOut: ['/opt/Backlot/backlot', 'server.js'],
      envOut: { ...env, ELECTRON_RUN_AS_NODE: '1' },
    },
    // Only the program word, and only exactly `node`.
    { argv: ['npm', 'install'], node: electron, argvOut: ['npm', 'install'], envOut: env },
    { argv: ['npx', 'node'], node: electron, argvOut: ['npx', 'node'], envOut: env },
    { argv: ['python3', 'node'], node: plain, argvOut: ['python3', 'node'], envOut: env },
    { argv: ['./node', 'x.js'], node: plain, argvOut: ['./node', 'x.js'], envOut: env },
    { argv: ['nodejs', 'x.js'], node: plain, argvOut: ['nodejs', 'x.js'], envOut: env },
    { argv: ['Node', 'x.js'], node: plain, argvOut: ['Node', 'x.js'], envOut: env },
  ];
  for (const row of rows) {
    test(`${JSON.stringify(row.argv)}${row.node.electron ? ' under Electron' : ''}`, () => {
      assert.deepEqual(withOwnNode(row.argv, env, row.node), { argv: row.argvOut, env: row.envOut });
    });
  }

  test('the environment given is not changed', () => {
    const given = { PATH: '' };
    withOwnNode(['node'], given, electron);
    assert.deepEqual(given, { PATH: '' });
  });

  test('ownNode: this process’s executable; Electron only when process.versions.electron is set', () => {
    assert.deepEqual(ownNode(), { execPath: process.execPath, electron: process.versions.electron !== undefined });
  });
});
