import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CommandSyntaxError, splitCommand } from '../../service/jobs/argv';

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
