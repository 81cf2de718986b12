import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { upload } from './helpers/assets';
import { waitForJob } from './helpers/export';
import { client, send } from './helpers/http';
import { LauncherClient } from './helpers/launcher';
import { makeImage, makeVideo } from './helpers/media';
import { runCli } from './helpers/service';


/**
 * The desktop package, built offline and checked: electron-builder packs the
 * app for Linux (`--dir`) around a stand-in Electron (`electronDist`: a folder
 * holding an `electron` script; nothing is downloaded), with the project's own
 * electron-builder.yml. Then:
 * - the tree: app.asar holds the built app (dist/main, dist/service, the pages'
 *   bundles) and nothing else of the project (no TypeScript, tests, benches,
 *   tools, source maps, studio caches); app.asar.unpacked holds every native
 *   file (better-sqlite3, sharp and @img, ffmpeg and ffprobe once the project
 *   bundles them) and the example studios;
 * - packing leaves node_modules' better-sqlite3 (Node's build, which the tests
 *   use) untouched: no rebuild in place;
 * - the packaged service, extracted from the archive, runs under plain Node
 *   with PATH empty: it serves, installs and starts the shipped example
 *   studio, makes a thumbnail and exports a timeline.
 * better-sqlite3 in the packaged tree is Node's build (npmRebuild: false), so
 * plain Node can load it here; the desktop app loads build/electron's instead
 * (service/db/binding.ts).
 */

const ROOT = resolve(__dirname, '..', '..');
const work = mkdtempSync(join(tmpdir(), 'backlot-package-'));
const out = join(work, 'out');
const appTree = join(out, 'linux-unpacked');
const resources = join(appTree, 'resources');
const asarFile = join(resources, 'app.asar');
const NODE_SQLITE = join(ROOT, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; optionalDependencies?: Record<string, string> };

/**
 * ffmpeg and ffprobe ship inside the package once the project depends on
 * @ffmpeg-installer/<platform> and @ffprobe-installer/<platform>; from then on
 * the checks below are strict and the smoke run finds them with PATH empty and
 * no BACKLOT_FFMPEG/BACKLOT_FFPROBE. Until then the run borrows the machine's.
 */
const MEDIA_PACKAGES = [`@ffmpeg-installer/${process.platform}-${process.arch}`, `@ffprobe-installer/${process.platform}-${process.arch}`];
const mediaBundled = MEDIA_PACKAGES.every((name) => name in pkg.dependencies || name in (pkg.optionalDependencies ?? {}));

const asar = require('@electron/asar') as typeof import('@electron/asar');
let entries: string[] = [];
let sqliteBefore = '';

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
const du = (path: string): number => {
  const s = statSync(path);
  return s.isDirectory() ? readdirSync(path).reduce((sum, name) => sum + du(join(path, name)), 0) : s.size;
};
const MiB = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;

before(() => {
  sqliteBefore = sha256(NODE_SQLITE);
  // The stand-in Electron: what electron-builder copies and renames to the app's executable.
  const electronDist = join(work, 'electron-dist');
  mkdirSync(electronDist);
  writeFileSync(join(electronDist, 'electron'), '#!/bin/sh\necho "a stand-in for Electron"\n', { mode: 0o755 });
  const electronVersion = (JSON.parse(readFileSync(join(ROOT, 'node_modules', 'electron', 'package.json'), 'utf8')) as { version: string }).version;
  const run = spawnSync(
    process.execPath,
    [
      join(ROOT, 'node_modules', 'electron-builder', 'cli.js'),
      '--linux',
      'dir',
      `-c.electronDist=${electronDist}`,
      `-c.electronVersion=${electronVersion}`,
      `-c.directories.output=${out}`,
    ],
    { cwd: ROOT, encoding: 'utf8', timeout: 90_000, env: { ...process.env, ELECTRON_BUILDER_CACHE: join(work, 'cache') } },
  );
  assert.equal(run.status, 0, `electron-builder failed:\n${run.stdout}\n${run.stderr}`);
  entries = asar.listPackage(asarFile, { isPack: false }).map((e) => e.replace(/\\/g, '/'));
});

after(() => rmSync(work, { recursive: true, force: true }));

const inAsar = (path: string) => entries.includes(`/${path}`);
const unpackedFile = (path: string) => join(resources, 'app.asar.unpacked', path);

test('app.asar holds the built app: main, service, the pages', () => {
  for (const path of [
    'package.json',
    'dist/main/main.js',
    'dist/main/desktop.js',
    'dist/main/shell.js',
    'dist/main/preload.js',
    'dist/service/app.js',
    'dist/service/read-worker.js',
    'dist/service/db/open.js',
    'dist/renderer/launcher.js',
    'dist/renderer/launcher.css',
    'dist/renderer/editor.js',
    'dist/renderer/editor.css',
  ]) {
    assert.ok(inAsar(path), `${path} is in app.asar`);
  }
});

test('the example studios ship as real files (app.asar.unpacked): their own programs cannot read the archive', () => {
  for (const path of ['examples/studios/sketchpad/backlot.json', 'examples/studios/sketchpad/server.js', 'examples/studios/clipmaker/backlot.json']) {
    assert.ok(existsSync(unpackedFile(path)), `${path} is in app.asar.unpacked`);
  }
});

test('nothing else of the project ships: no TypeScript, tests, benches, tools, CLI, renderer sources, source maps, studio caches, Electron', () => {
  const ours = entries.filter((e) => !e.startsWith('/node_modules/'));
  const refused = ours.filter(
    (e) =>
      /\.(ts|map)$/.test(e) ||
      /^\/(dist\/(test|bench|tools|cli)|bin|renderer|test|bench|tools|cli|service|main|docs|build\/(?!electron))(\/|$)/.test(e) ||
      /^\/dist\/renderer\/[^/]+\//.test(e) ||
      /^\/examples\/studios\/[^/]+\/(node_modules|state|models)(\/|$)/.test(e) ||
      /^\/(README\.md|tsconfig\.json|electron-builder\.yml|package-lock\.json)$/.test(e),
  );
  assert.deepEqual(refused, []);
  assert.deepEqual(entries.filter((e) => /\.(ts|map)$/.test(e) && !e.endsWith('.d.ts')), [], 'no source maps or TypeScript in node_modules either');
  assert.equal(entries.some((e) => e.startsWith('/node_modules/electron/')), false);
  assert.equal(entries.some((e) => e.startsWith('/node_modules/better-sqlite3/deps/') || e.startsWith('/node_modules/better-sqlite3/src/')), false, "better-sqlite3's sources stay out");
});

test('every native file is unpacked beside the archive: better-sqlite3, sharp and its @img binaries', () => {
  const natives = entries.filter((e) => e.endsWith('.node') || /\/@img\/sharp-libvips-[^/]+\/lib\/[^/]+\.so/.test(e));
  assert.ok(natives.length >= 3, natives.join('\n'));
  for (const e of natives) {
    assert.ok(existsSync(unpackedFile(e.slice(1))), `${e} is in app.asar.unpacked`);
    assert.equal(asar.statFile(asarFile, e.slice(1)).unpacked, true, `${e} is marked unpacked`);
  }
  assert.ok(existsSync(unpackedFile('node_modules/better-sqlite3/build/Release/better_sqlite3.node')));
  assert.ok(readdirSync(unpackedFile('node_modules/@img')).some((name) => name.startsWith('sharp-')));
  // The Electron build (npm run rebuild:electron) ships when it was made; `npm run dist` always makes it.
  if (existsSync(join(ROOT, 'build', 'electron', 'better_sqlite3.node'))) {
    assert.ok(existsSync(unpackedFile('build/electron/better_sqlite3.node')));
  }
});

test('ffmpeg and ffprobe are unpacked when the project bundles them', { skip: !mediaBundled && `not bundled yet (${MEDIA_PACKAGES.join(', ')})` }, () => {
  for (const name of MEDIA_PACKAGES) {
    const dir = unpackedFile(join('node_modules', name));
    assert.ok(existsSync(dir), `${name} is in app.asar.unpacked`);
    const binaries = readdirSync(dir).filter((f) => /^(ffmpeg|ffprobe)(\.exe)?$/.test(f));
    assert.equal(binaries.length, 1, `${name} carries its binary`);
    assert.ok(statSync(join(dir, binaries[0]!)).mode & 0o111, `${binaries[0]} is executable`);
  }
});

test("packing left node_modules' better-sqlite3 (Node's build) untouched, and it still loads under Node", () => {
  assert.equal(sha256(NODE_SQLITE), sqliteBefore);
  const load = spawnSync(process.execPath, ['-e', "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()"], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(load.status, 0, load.stderr);
});

test('the size of the package', (t) => {
  const total = du(appTree);
  const archive = statSync(asarFile).size;
  const unpacked = du(join(resources, 'app.asar.unpacked'));
  t.diagnostic(`package (linux-unpacked, stand-in Electron): ${MiB(total)}; app.asar ${MiB(archive)}; app.asar.unpacked ${MiB(unpacked)}`);
  assert.ok(archive < 20 * 1024 * 1024, `app.asar is ${MiB(archive)}`);
  // ffmpeg and ffprobe are most of it (about 70 MiB each, static builds).
  assert.ok(unpacked < 250 * 1024 * 1024, `app.asar.unpacked is ${MiB(unpacked)}`);
});

test('the packaged service runs under plain Node with PATH empty: it serves, installs and starts the shipped studio, makes a thumbnail, exports', async () => {
  // The archive extracted beside its unpacked files, so every path resolves as in the app.
  const app = join(work, 'app');
  asar.extractAll(asarFile, app);
  const dataDir = join(work, 'data');
  const media = join(work, 'media');
  mkdirSync(media);
  // Nothing of the machine: studios run Backlot's own Node, media tools come from the package.
  const env: NodeJS.ProcessEnv = { PATH: '', HOME: work, BACKLOT_HOME: dataDir };
  if (!mediaBundled) {
    // Until the package carries ffmpeg and ffprobe, the machine's stand in.
    env.BACKLOT_FFMPEG = '/usr/bin/ffmpeg';
    env.BACKLOT_FFPROBE = '/usr/bin/ffprobe';
  }
  const child = spawn(process.execPath, [join(__dirname, 'helpers', 'packaged-serve.js'), app, dataDir], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  try {
    for (let i = 0; i < 500 && !/READY /.test(stdout) && child.exitCode === null; i++) await new Promise((r) => setTimeout(r, 20));
    const url = /READY (\S+)/.exec(stdout)?.[1];
    assert.ok(url, `the packaged service is ready\n${stdout}\n${stderr}`);
    const port = Number(new URL(url).port);
    assert.equal((await send(port, { method: 'GET', path: '/api/v1/openapi.json' })).status, 200);
    const page = await send(port, { method: 'GET', path: '/ui/launcher.js', headers: { 'Sec-Fetch-Site': 'same-origin' } });
    assert.equal(page.status, 200, 'the pages are served from the package');

    // The shipped example studio installs and starts.
    const launcher = new LauncherClient(port, runCli(['launcher-token', '--data-dir', dataDir]).stdout.trim());
    // From the package's own folder, as the launcher will offer it.
    const installing = await launcher.install(unpackedFile(join('examples', 'studios', 'sketchpad')));
    assert.equal(installing.studio.state, 'installed', `${JSON.stringify(installing.studio)}\n${stderr}`);
    const installed = installing.studio;
    assert.equal(installed.id, 'sketchpad');
    await launcher.startOk('sketchpad');
    const studioPage = await send(port, { method: 'GET', path: '/', headers: { Host: `sketchpad.localhost:${port}` } });
    assert.equal(studioPage.status, 200, studioPage.text);
    await launcher.stopOk('sketchpad');

    // A thumbnail (sharp) and an export (ffmpeg, ffprobe).
    assert.equal(runCli(['studio', 'add', 'alpha', '--data-dir', dataDir]).code, 0);
    const token = runCli(['token', 'create', '--studio', 'alpha', '--caps', 'assets,timeline,jobs', '--data-dir', dataDir]).stdout.trim();
    const image = await upload(port, token, readFileSync(makeImage(join(media, 'still.png'), { width: 640, height: 360 })), 'kind=image&filename=still.png');
    assert.equal(image.status, 201, image.body.toString());
    const thumb = await send(port, { method: 'GET', path: `/api/v1/assets/${image.json.id}/thumb`, token });
    assert.equal(thumb.status, 200, thumb.text);
    assert.equal(thumb.headers['content-type'], 'image/webp');
    const video = await upload(port, token, readFileSync(makeVideo(join(media, 'clip.mp4'), { seconds: 1 })), 'kind=video&filename=clip.mp4');
    assert.equal(video.status, 201, video.body.toString());
    const alpha = client(port, token);
    const seq = await alpha.post('/timeline', { name: 'packaged', target: { fps: 25, width: 320, height: 180 }, clips: [{ asset_id: video.json.id }] });
    assert.equal(seq.status, 201, seq.text);
    const started = await alpha.post(`/timeline/${seq.json.id}:export`, {});
    assert.equal(started.status, 202, started.text);
    const job = await waitForJob(alpha, started.json.id, 60_000);
    assert.equal(job.state, 'succeeded', JSON.stringify(job));
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode === null ? child.once('exit', r) : r(null)));
  }
});
