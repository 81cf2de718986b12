import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ApiError } from '../service/core/errors';
import { checkContained, commandArgv, parseManifest } from '../service/launcher/manifest';
import { CLIPMAKER, SKETCHPAD } from './helpers/launcher';

/**
 * The studio manifest backlot.json (docs/studios.md "The manifest, `backlot.json`") as unit
 * tables: every bad member is 400 `bad_request` naming it in
 * `details.member`; shell syntax in a `run` is 400 naming the command; a
 * command word, `download.to` or URL scheme that leaves the app folder is 422
 * `blocked` naming the member.
 */

const base = { id: 'fixture', name: 'Fixture', version: '1.0.0', capabilities: ['kv'], start: { run: 'node server.js --port {port}' } };
const sha = 'a'.repeat(64);
const APP = '/srv/backlot/studios/fixture/app';

function refusal(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ApiError, `not an ApiError: ${String(err)}`);
    return err;
  }
  assert.fail('accepted');
}

describe('parseManifest: a bad member is 400 naming it', () => {
  const rows: [string, unknown, string][] = [
    ['not JSON', 'not json {', 'manifest'],
    ['an array', [], 'manifest'],
    ['no id', { ...base, id: undefined }, 'manifest.id'],
    ['an id that is no host name', { ...base, id: 'Bad_Id' }, 'manifest.id'],
    ['an id too long', { ...base, id: `a${'b'.repeat(40)}` }, 'manifest.id'],
    ['no name', { ...base, name: undefined }, 'manifest.name'],
    ['an empty name', { ...base, name: '' }, 'manifest.name'],
    ['a version that is a number', { ...base, version: 1 }, 'manifest.version'],
    ['capabilities not a list', { ...base, capabilities: 'kv' }, 'manifest.capabilities'],
    ['an unknown capability', { ...base, capabilities: ['kv', 'root'] }, 'manifest.capabilities.1'],
    ['a repeated capability', { ...base, capabilities: ['kv', 'kv'] }, 'manifest.capabilities'],
    ['heavy not a boolean', { ...base, heavy: 'yes' }, 'manifest.heavy'],
    ['install not a list', { ...base, install: { name: 'a', run: 'x' } }, 'manifest.install'],
    ['a step without run', { ...base, install: [{ name: 'a' }] }, 'manifest.install.0.run'],
    ['a step with an empty name', { ...base, install: [{ name: '', run: 'x' }] }, 'manifest.install.0.name'],
    ['a step with an unknown member', { ...base, install: [{ name: 'a', run: 'x', shell: true }] }, 'manifest.install.0.shell'],
    ['a bad build step', { ...base, build: [{ name: 'a', run: 'x' }, { name: 'b', run: 7 }] }, 'manifest.build.1.run'],
    ['a download sha256 that is not 64 hex', { ...base, download: [{ url: 'file:x', sha256: 'zz', to: 'a' }] }, 'manifest.download.0.sha256'],
    ['a download without to', { ...base, download: [{ url: 'file:x', sha256: sha }] }, 'manifest.download.0.to'],
    ['a download with an empty url', { ...base, download: [{ url: '', sha256: sha, to: 'a' }] }, 'manifest.download.0.url'],
    ['no start', { ...base, start: undefined }, 'manifest.start'],
    ['a start without run', { ...base, start: { port: 5000 } }, 'manifest.start.run'],
    ['a start port below 1024', { ...base, start: { run: 'x', port: 80 } }, 'manifest.start.port'],
    ['a start port that is not whole', { ...base, start: { run: 'x', port: 5000.5 } }, 'manifest.start.port'],
    ['a ready_path that is not a path', { ...base, start: { run: 'x', ready_path: 'ready' } }, 'manifest.start.ready_path'],
    ['a typo in start', { ...base, start: { run: 'x', prt: 5000 } }, 'manifest.start.prt'],
    ['a bad collection name', { ...base, collections: { '1bad': { indexes: ['a'] } } }, 'manifest.collections.1bad'],
    ['indexes not a list', { ...base, collections: { notes: { indexes: 'a' } } }, 'manifest.collections.notes.indexes'],
    ['env setting PORT', { ...base, env: { PORT: '1' } }, 'manifest.env.PORT'],
    ['env setting a BACKLOT_ variable', { ...base, env: { BACKLOT_TOKEN: 'x' } }, 'manifest.env.BACKLOT_TOKEN'],
    ['an env name that is no variable name', { ...base, env: { 'A-B': '1' } }, 'manifest.env.A-B'],
    ['an env value that is not a string', { ...base, env: { A: 1 } }, 'manifest.env.A'],
    ['a typo at the top', { ...base, instal: [] }, 'manifest.instal'],
  ];
  for (const [name, manifest, member] of rows) {
    test(name, () => {
      const err = refusal(() => parseManifest(typeof manifest === 'string' ? manifest : JSON.stringify(manifest)));
      assert.equal(err.status, 400, err.message);
      assert.equal(err.code, 'bad_request');
      assert.equal(err.details.member, member, err.message);
      assert.match(err.message, /backlot\.json/);
    });
  }
});

describe('parseManifest: shell syntax in a command is 400 naming the command', () => {
  const rows: [string, Record<string, unknown>, string][] = [
    ['a pipe in an install step', { install: [{ name: 'a', run: 'node tool.js | cat' }] }, 'manifest.install.0.run'],
    ['&& in a build step', { build: [{ name: 'a', run: 'true' }, { name: 'b', run: 'npm ci && npm run build' }] }, 'manifest.build.1.run'],
    ['a redirect in the start command', { start: { run: 'node server.js --port {port} > log.txt' } }, 'manifest.start.run'],
    ['a variable', { install: [{ name: 'a', run: 'echo $HOME' }] }, 'manifest.install.0.run'],
    ['a command substitution', { install: [{ name: 'a', run: 'echo `id`' }] }, 'manifest.install.0.run'],
    ['a glob', { install: [{ name: 'a', run: 'rm *.tmp' }] }, 'manifest.install.0.run'],
    ['an unquoted ~', { install: [{ name: 'a', run: 'node ~/x.js' }] }, 'manifest.install.0.run'],
    ['a ;', { install: [{ name: 'a', run: 'true; rm -rf x' }] }, 'manifest.install.0.run'],
    ['an unterminated quote', { install: [{ name: 'a', run: "node 'tool.js" }] }, 'manifest.install.0.run'],
    ['braces other than {port}', { start: { run: 'node server.js {host}' } }, 'manifest.start.run'],
    ['an empty command', { install: [{ name: 'a', run: '   ' }] }, 'manifest.install.0.run'],
    ['{port} in a step (only the start command has a port)', { install: [{ name: 'a', run: 'node tool.js {port}' }] }, 'manifest.install.0.run'],
  ];
  for (const [name, patch, member] of rows) {
    test(name, () => {
      const err = refusal(() => parseManifest(JSON.stringify({ ...base, ...patch })));
      assert.equal(err.status, 400, err.message);
      assert.equal(err.code, 'bad_request');
      assert.equal(err.details.member, member, err.message);
    });
  }
});

describe('parseManifest: what is accepted', () => {
  test('the example studios', () => {
    for (const dir of [SKETCHPAD, CLIPMAKER]) {
      const m = parseManifest(readFileSync(join(dir, 'backlot.json'), 'utf8'));
      assert.equal(typeof m.id, 'string');
      checkContained(m, join('/tmp', m.id, 'app'));
    }
  });

  test('a full manifest; quoted operators are literal; {port} is substituted; sha256 is lowercased', () => {
    const m = parseManifest(
      JSON.stringify({
        ...base,
        description: 'd',
        heavy: true,
        install: [{ name: 'print', run: `node tool.js print 'a|b' "c d" e\\;f` }],
        build: [{ name: 'b', run: 'node tool.js print built' }],
        download: [{ url: 'https://example.com/x.bin', sha256: 'A'.repeat(64), to: 'models/x.bin' }],
        start: { run: 'node server.js --port {port}', port: 5000, ready_path: '/health?x=1' },
        collections: { notes: { indexes: ['title', 'n'] } },
        env: { MODE: 'test', _X1: '' },
      }),
    );
    assert.deepEqual(commandArgv(m.install![0]!.run), ['node', 'tool.js', 'print', 'a|b', 'c d', 'e;f']);
    assert.deepEqual(commandArgv(m.start.run, 4321), ['node', 'server.js', '--port', '4321']);
    assert.equal(m.download![0]!.sha256, 'a'.repeat(64));
    checkContained(m, APP);
  });
});

describe('checkContained: anything that leaves the app folder is 422 blocked', () => {
  const rows: [string, Record<string, unknown>, string][] = [
    ['a step running ../', { install: [{ name: 'a', run: 'node ../evil.js' }] }, 'manifest.install.0.run'],
    ['a step naming an absolute path', { install: [{ name: 'a', run: 'node tool.js touch /tmp/owned' }] }, 'manifest.install.0.run'],
    ['an absolute program', { build: [{ name: 'a', run: '/bin/rm -rf data' }] }, 'manifest.build.0.run'],
    ['a quoted ~ path', { install: [{ name: 'a', run: "node '~/.ssh/x.js'" }] }, 'manifest.install.0.run'],
    ['a .. that climbs out through a subfolder', { install: [{ name: 'a', run: 'node sub/../../x.js' }] }, 'manifest.install.0.run'],
    ['an option value with ..', { start: { run: 'node --require=../hook.js server.js --port {port}' } }, 'manifest.start.run'],
    ['an absolute start script', { start: { run: 'node /opt/server.js --port {port}' } }, 'manifest.start.run'],
    ['a download to ..', { download: [{ url: 'file:x', sha256: sha, to: '../x.bin' }] }, 'manifest.download.0.to'],
    ['a download to an absolute path', { download: [{ url: 'file:x', sha256: sha, to: '/tmp/x.bin' }] }, 'manifest.download.0.to'],
    ['a download to ~', { download: [{ url: 'file:x', sha256: sha, to: '~/x.bin' }] }, 'manifest.download.0.to'],
    ['a download climbing out of a subfolder', { download: [{ url: 'file:x', sha256: sha, to: 'models/../../x.bin' }] }, 'manifest.download.0.to'],
    ['a download onto the app folder itself', { download: [{ url: 'file:x', sha256: sha, to: 'models/..' }] }, 'manifest.download.0.to'],
    [
      'the second download to ..',
      { download: [{ url: 'file:x', sha256: sha, to: 'ok.bin' }, { url: 'file:y', sha256: sha, to: '../y.bin' }] },
      'manifest.download.1.to',
    ],
    ['an ftp URL', { download: [{ url: 'ftp://example.com/x.bin', sha256: sha, to: 'x.bin' }] }, 'manifest.download.0.url'],
    ['a data URL', { download: [{ url: 'data:text/plain,hi', sha256: sha, to: 'x.bin' }] }, 'manifest.download.0.url'],
    ['a javascript URL', { download: [{ url: 'javascript:alert(1)', sha256: sha, to: 'x.bin' }] }, 'manifest.download.0.url'],
    ['a URL without a scheme', { download: [{ url: 'models/x.bin', sha256: sha, to: 'x.bin' }] }, 'manifest.download.0.url'],
  ];
  for (const [name, patch, member] of rows) {
    test(name, () => {
      const m = parseManifest(JSON.stringify({ ...base, ...patch }));
      const err = refusal(() => checkContained(m, APP));
      assert.equal(err.status, 422, err.message);
      assert.equal(err.code, 'blocked');
      assert.equal(err.details.member, member, err.message);
    });
  }

  test('paths that stay inside pass, and every allowed scheme', () => {
    const m = parseManifest(
      JSON.stringify({
        ...base,
        install: [{ name: 'a', run: 'node ./scripts/../tool.js print ok --out=sub/x' }],
        download: [
          { url: 'http://127.0.0.1:1/a', sha256: sha, to: 'a.bin' },
          { url: 'HTTPS://example.com/b', sha256: sha, to: 'models/b.bin' },
          { url: 'file:media/c.wav', sha256: sha, to: 'models/deep/c.wav' },
        ],
      }),
    );
    checkContained(m, APP);
  });
});
