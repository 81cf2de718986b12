import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { assertError } from './helpers/scenario';
import { tempDir, type TestService } from './helpers/service';
import { fixture, startLauncher, type LauncherClient } from './helpers/launcher';

/**
 * "Inside the studio's folder" is decided on real paths (docs/security.md,
 * Studios, Paths): every symbolic link on the way is followed as the kernel
 * follows it, so a chain through `a -> .` or a folder link cannot pass where a
 * plain link out is refused. The install copy, the manifest's command words
 * and download `to`, and link's data-folder check; links that really stay
 * inside are still copied as they are.
 */

let svc: TestService;
let l: LauncherClient;
before(async () => {
  ({ svc, l } = await startLauncher());
});
after(async () => {
  await svc.stop();
});

const appDir = (id: string) => join(svc.dataDir, 'studios', id, 'app');
/** `a/a/.../a/../../...` climbing `n` levels: lexically the folder itself, really `n` levels above it through `a -> .`. */
const climb = (n: number) => `${'a/'.repeat(n)}${'../'.repeat(n)}`;
const DEEP = 40;

/** Installs (202) and waits: the install job failed with `blocked` naming the link, and nothing is installed. */
async function assertCopyRefused(src: string, id: string, link: string): Promise<void> {
  const res = await l.post('/launcher/studios:install', { source: src });
  assert.equal(res.status, 202, res.text);
  const studio = await l.waitState(id, ['installed', 'failed']);
  assert.equal(studio.state, 'failed', `${link}: ${JSON.stringify(studio)}`);
  assert.equal(studio.installed, false);
  const job = await l.job(res.json.id);
  assert.equal(job.state, 'failed');
  assert.match(job.last_error, /points outside/, job.last_error);
  assert.ok(job.last_error.includes(link), `names ${link}: ${job.last_error}`);
  assert.equal(existsSync(appDir(id)), false, 'no app folder');
}

describe('the install copy follows links as the kernel does', () => {
  test('a chain through `a -> .` that lexically stays inside but really reaches /etc/passwd fails the copy', async () => {
    const src = fixture({ id: 'chaincopy' });
    symlinkSync('.', join(src, 'a'));
    symlinkSync(`${climb(DEEP)}etc/passwd`, join(src, 'p'));
    await assertCopyRefused(src, 'chaincopy', 'p');
  });

  test('a chain through a folder link (`d -> ../..`, `p -> d/etc/passwd`) and a link to a folder outside fail the copy', async () => {
    // Deeper inside, so that the folder link's own text could look harmless to a reader.
    const outside = tempDir('backlot-outside-');
    writeFileSync(join(outside, 'secret.txt'), 'secret');
    for (const [id, links, named] of [
      ['dirchain', [['sub/d', '../..'], ['sub/p', 'd/etc/passwd']], 'sub/'],
      ['outdir', [['out', outside]], 'out'],
      ['reloutdir', [['out', `../../../../../../../../../../..${outside}`]], 'out'],
      ['viadir', [['sub/d', `${'x/'.repeat(3)}${'../'.repeat(3)}`], ['sub/x', '.'], ['sub/q', 'd/../../../../../../../../../etc/passwd']], 'sub/'],
    ] as const) {
      const src = fixture({ id });
      mkdirSync(join(src, 'sub'), { recursive: true });
      for (const [name, target] of links) symlinkSync(target, join(src, name));
      await assertCopyRefused(src, id, named);
    }
  });

  test('a link that leaves the folder and comes back (by its name, or an absolute path into it) fails: from the copy it would lead to the source', async () => {
    const back = fixture({ id: 'backbyname' });
    symlinkSync(`../${basename(back)}/tool.js`, join(back, 'again.js'));
    await assertCopyRefused(back, 'backbyname', 'again.js');
    const abs = fixture({ id: 'backbyabs' });
    symlinkSync(join(abs, 'tool.js'), join(abs, 'again.js'));
    await assertCopyRefused(abs, 'backbyabs', 'again.js');
  });

  test('links that really stay inside are copied as they are (node_modules/.bin, through other links, dangling)', async () => {
    const src = fixture({ id: 'keptlinks' }, { 'node_modules/pkg/bin.js': 'console.log(1)', 'sub/file.txt': 'in sub' });
    mkdirSync(join(src, 'node_modules', '.bin'), { recursive: true });
    const links: [string, string][] = [
      ['node_modules/.bin/tool', '../pkg/bin.js'],
      ['a', '.'],
      ['viaa', 'a/a/a/tool.js'],
      ['b', 'sub'],
      ['k', 'b/../tool.js'],
      ['sub/up', '../tool.js'],
      ['sub/self', '../a/sub/file.txt'],
      ['dangling', 'not-there.txt'],
    ];
    for (const [name, target] of links) symlinkSync(target, join(src, name));
    await l.installOk(src);
    for (const [name, target] of links) {
      const copy = join(appDir('keptlinks'), name);
      assert.ok(lstatSync(copy).isSymbolicLink(), name);
      assert.equal(readlinkSync(copy), target, name);
    }
    await l.uninstall('keptlinks');
  });
});

describe("the manifest's paths are judged through the folder's links (422 blocked before anything runs)", () => {
  const cases: [string, (src: string) => Record<string, unknown>, string][] = [
    ['a start command word through `a -> .`', () => ({ start: { run: `node ${climb(DEEP)}tmp/escape.js --port {port}` } }), 'manifest.start.run'],
    ['an install step word through a folder link', () => ({ install: [{ name: 'x', run: 'node up/etc/passwd' }] }), 'manifest.install.0.run'],
    ['an option value through `a -> .`', () => ({ build: [{ name: 'x', run: `node tool.js --out=${climb(DEEP)}tmp/x` }] }), 'manifest.build.0.run'],
    ['a download `to` through a folder link', () => ({ download: [{ url: 'file:tool.js', sha256: 'a'.repeat(64), to: 'up/x.bin' }] }), 'manifest.download.0.to'],
    ['a download `to` through `a -> .`', () => ({ download: [{ url: 'file:tool.js', sha256: 'a'.repeat(64), to: `${climb(DEEP)}tmp/x.bin` }] }), 'manifest.download.0.to'],
  ];
  for (const [name, patch, member] of cases) {
    for (const mode of ['install', 'link'] as const) {
      test(`:${mode}: ${name}`, async () => {
        const id = `m${mode}${member.replace(/[^a-z0-9]/g, '').slice(-12)}${name.length}`;
        const src = fixture({});
        const manifest = { id, ...patch(src) };
        writeFileSync(join(src, 'backlot.json'), JSON.stringify({ name: 'Fixture', version: '1.0.0', capabilities: ['kv'], start: { run: 'node server.js --port {port}' }, ...manifest }));
        symlinkSync('.', join(src, 'a'));
        symlinkSync('../..', join(src, 'up'));
        assertError(await l.post(`/launcher/studios:${mode}`, { source: src }), 422, 'blocked', { member });
        assert.equal(await l.studio(id), null, 'nothing registered');
      });
    }
  }

  test('words that stay inside through links still pass (:link runs them)', async () => {
    const src = fixture({ id: 'linkedok', start: { run: 'node a/a/b/../server.js --port {port}' } });
    symlinkSync('.', join(src, 'a'));
    mkdirSync(join(src, 'b'));
    await l.installOk(src, true);
    await l.uninstall('linkedok');
  });
});

test("link: a folder inside the data dir is refused when the data dir is named through a symbolic link", async () => {
  const base = tempDir('backlot-datalink-');
  const real = join(base, 'real');
  mkdirSync(real);
  const viaLink = join(base, 'via');
  symlinkSync(real, viaLink);
  const other = await startLauncher({ dataDir: viaLink });
  try {
    const inside = join(real, 'mine');
    mkdirSync(inside);
    writeFileSync(join(inside, 'backlot.json'), JSON.stringify({ name: 'Fixture', version: '1.0.0', capabilities: ['kv'], id: 'indatareal', start: { run: 'node server.js --port {port}' } }));
    assertError(await other.l.post('/launcher/studios:link', { source: inside }), 422, 'not_linkable');
    assertError(await other.l.post('/launcher/studios:link', { source: real }), 422, 'not_linkable');
    assert.equal(await other.l.studio('indatareal'), null);
  } finally {
    await other.svc.stop();
    rmSync(base, { recursive: true, force: true });
  }
});
