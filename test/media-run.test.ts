import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ApiError } from '../service/core/errors';
import {
  bundledPackage,
  findOnPath,
  killAllChildren,
  liveChildren,
  probeMedia,
  requireTool,
  resolveMediaTools,
  resolveTool,
  runTool,
  toolPath,
  unpackedPath,
  type RunResult,
} from '../service/media';
import { groupMembers } from '../service/core/processes';
import { requireFfmpeg } from './helpers/media';
import { ROOT, tempDir } from './helpers/service';
import { alive, until } from './helpers/processes';

/**
 * Where the tools are found (docs/api.md "Media tools") and how runTool
 * runs them: process groups, timeouts, abort, the live registry, output caps
 * and line callbacks. Stand-in "tools" are small sh scripts given through
 * BACKLOT_FFMPEG / BACKLOT_FFPROBE in the options' env.
 */

let dir = '';
const at = (name: string) => path.join(dir, name);

before(() => {
  requireFfmpeg();
  dir = tempDir('backlot-media-run-');
});

after(async () => {
  await killAllChildren();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function script(name: string, body: string, mode = 0o755): string {
  const file = at(name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, mode);
  return file;
}

/** An env in which `ffmpeg` is the given script. */
const asFfmpeg = (file: string): NodeJS.ProcessEnv => ({ ...process.env, BACKLOT_FFMPEG: file });

describe('toolPath: override, then Backlot’s own copy, then ffmpeg-static, then PATH', () => {
  test('the real tools are found on this machine', () => {
    assert.ok(toolPath('ffmpeg'));
    assert.ok(toolPath('ffprobe'));
  });

  test('an override that exists wins over PATH', () => {
    const link = at('my-ffprobe');
    symlinkSync(toolPath('ffprobe')!, link);
    assert.equal(toolPath('ffprobe', { PATH: '/usr/bin:/bin', BACKLOT_FFPROBE: link }), link);
  });

  test('a relative override is taken from the working directory', () => {
    const fake = script('rel-ffmpeg', 'exit 0');
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      assert.equal(toolPath('ffmpeg', { BACKLOT_FFMPEG: './rel-ffmpeg' }), fake);
    } finally {
      process.chdir(cwd);
    }
  });

  const unavailable: { name: string; target: () => string }[] = [
    { name: 'a path where nothing is', target: () => at('no-such-binary') },
    { name: 'a directory', target: () => dir },
    { name: 'a file that is not executable', target: () => script('not-exec', 'exit 0', 0o644) },
  ];
  for (const row of unavailable) {
    test(`an override naming ${row.name}: unavailable, never falling through to PATH`, () => {
      const env = { PATH: process.env.PATH, BACKLOT_FFPROBE: row.target(), BACKLOT_FFMPEG: row.target() };
      assert.equal(toolPath('ffprobe', env), null);
      assert.equal(toolPath('ffmpeg', env), null);
      for (const tool of ['ffprobe', 'ffmpeg'] as const) {
        assert.throws(
          () => requireTool(tool, env),
          (err: unknown) =>
            err instanceof ApiError &&
            err.status === 501 &&
            err.code === 'unsupported' &&
            JSON.stringify(err.details) === JSON.stringify({ tool }) &&
            err.message.includes(tool === 'ffprobe' ? 'BACKLOT_FFPROBE' : 'BACKLOT_FFMPEG'),
        );
      }
    });
  }

  test('an empty override counts as unset', () => {
    // Compared with the same environment without the variable (the test's own may set it).
    assert.equal(toolPath('ffprobe', { PATH: process.env.PATH, BACKLOT_FFPROBE: '' }), toolPath('ffprobe', { PATH: process.env.PATH }));
    assert.equal(toolPath('ffmpeg', { PATH: process.env.PATH, BACKLOT_FFMPEG: '' }), toolPath('ffmpeg', { PATH: process.env.PATH }));
    assert.ok(toolPath('ffprobe', { PATH: process.env.PATH, BACKLOT_FFPROBE: '' }) && toolPath('ffmpeg', { PATH: process.env.PATH, BACKLOT_FFMPEG: '' }));
  });

  test('PATH: the first absolute entry holding an executable file; relative and empty entries are skipped', () => {
    const first = path.join(dir, 'bin1');
    const second = path.join(dir, 'bin2');
    mkdirSync(first);
    mkdirSync(second);
    writeFileSync(path.join(first, 'ffprobe'), 'not executable');
    script('bin2/ffprobe', 'exit 0');
    mkdirSync(at('ffprobe-dir'));
    assert.equal(findOnPath('ffprobe', { PATH: [first, second].join(path.delimiter) }), path.join(second, 'ffprobe'));
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      assert.equal(findOnPath('ffprobe', { PATH: ['bin2', '', '.'].join(path.delimiter) }), null);
    } finally {
      process.chdir(cwd);
    }
  });

  const own = (tool: 'ffmpeg' | 'ffprobe') => {
    const { name, file } = bundledPackage(tool);
    return path.join(ROOT, 'node_modules', name, file);
  };
  let ffmpegStatic: string | null = null;
  try {
    ffmpegStatic = require('ffmpeg-static') as string | null;
  } catch {
    ffmpegStatic = null;
  }

  test('ffprobe without PATH is Backlot’s own copy (the @ffprobe-installer package of this platform), and it runs', () => {
    assert.deepEqual(resolveTool('ffprobe', { PATH: dir }), { path: own('ffprobe'), source: 'bundled' });
    assert.deepEqual(resolveTool('ffprobe', { PATH: '' }), { path: own('ffprobe'), source: 'bundled' });
    const r = spawnSync(own('ffprobe'), ['-hide_banner', '-version'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  });

  test('ffprobe: Backlot’s own copy wins over PATH', () => {
    assert.deepEqual(resolveTool('ffprobe', { PATH: process.env.PATH }), { path: own('ffprobe'), source: 'bundled' });
  });

  test('ffmpeg: Backlot’s own copy first, before ffmpeg-static and PATH (one on PATH too), and it runs and encodes H.264 + AAC', () => {
    mkdirSync(at('path-bin'), { recursive: true });
    script('path-bin/ffmpeg', 'exit 0');
    for (const PATH of [dir, '', '/usr/bin', path.join(dir, 'path-bin'), process.env.PATH]) {
      assert.deepEqual(resolveTool('ffmpeg', { PATH }), { path: own('ffmpeg'), source: 'bundled' }, `PATH=${PATH}`);
    }
    assert.equal(toolPath('ffmpeg', { PATH: process.env.PATH }), own('ffmpeg'));
    // ffmpeg-static, where it installed, is not what is used while Backlot's own is there.
    if (ffmpegStatic) assert.notEqual(resolveTool('ffmpeg', { PATH: '' }).path, ffmpegStatic);
    const encoders = spawnSync(own('ffmpeg'), ['-hide_banner', '-encoders'], { encoding: 'utf8' });
    assert.equal(encoders.status, 0, encoders.stderr);
    assert.match(encoders.stdout, / libx264 /);
    assert.match(encoders.stdout, / aac /);
  });

  test('the override still wins over Backlot’s own copy (ffmpeg and ffprobe)', () => {
    const fake = script('override-ffmpeg', 'exit 0');
    assert.deepEqual(resolveTool('ffmpeg', { PATH: '', BACKLOT_FFMPEG: fake }), { path: fake, source: 'env' });
    assert.deepEqual(resolveTool('ffprobe', { PATH: '', BACKLOT_FFPROBE: fake }), { path: fake, source: 'env' });
  });

  test('resolveMediaTools: each tool’s path and where it came from; a bad override is `env` with no path', () => {
    const fake = script('diag-ffmpeg', 'exit 0');
    assert.deepEqual(resolveMediaTools({ PATH: dir, BACKLOT_FFMPEG: fake, BACKLOT_FFPROBE: at('none') }), {
      ffmpeg: { path: fake, source: 'env' },
      ffprobe: { path: null, source: 'env' },
    });
  });

  test('the package of each platform and the unpacked path inside a packaged app', () => {
    const rows: [string, NodeJS.Platform, string, { name: string; file: string }][] = [
      ['ffmpeg', 'linux', 'x64', { name: '@ffmpeg-installer/linux-x64', file: 'ffmpeg' }],
      ['ffprobe', 'linux', 'arm64', { name: '@ffprobe-installer/linux-arm64', file: 'ffprobe' }],
      ['ffmpeg', 'darwin', 'arm64', { name: '@ffmpeg-installer/darwin-arm64', file: 'ffmpeg' }],
      ['ffprobe', 'win32', 'x64', { name: '@ffprobe-installer/win32-x64', file: 'ffprobe.exe' }],
    ];
    for (const [tool, platform, arch, expected] of rows) assert.deepEqual(bundledPackage(tool as 'ffmpeg', platform, arch), expected);
    const inAsar = ['', 'opt', 'Backlot', 'resources', 'app.asar', 'node_modules', '@ffprobe-installer', 'linux-x64', 'ffprobe'].join(path.sep);
    assert.equal(unpackedPath(inAsar), inAsar.replace(`app.asar${path.sep}`, `app.asar.unpacked${path.sep}`));
    assert.equal(unpackedPath('/usr/bin/ffprobe'), '/usr/bin/ffprobe');
  });
});

describe('runTool', () => {
  test('runs the tool with the arguments as given and collects its output', async () => {
    const r = await runTool('ffmpeg', ['-hide_banner', '-version']);
    assert.deepEqual([r.code, r.signal, r.timedOut, r.aborted], [0, null, false, false]);
    assert.match(r.stdout, /^ffmpeg version /);
  });

  test('arguments reach the program untouched (no shell)', async () => {
    const echo = script('echo-args', 'for a in "$@"; do printf "%s\\n" "$a"; done');
    const args = ['$(touch pwned)', '; rm -rf /', "it's", '"quoted"', '*', '', 'ünï 🎬', '-'];
    const r = await runTool('ffmpeg', args, { env: asFfmpeg(echo), cwd: dir });
    assert.deepEqual(r.stdout.split('\n').slice(0, -1), args);
    assert.equal(spawnSync('ls', [dir]).stdout.toString().includes('pwned'), false);
  });

  test('a timeout ends the whole process group (the real ffmpeg)', async () => {
    const run = runTool('ffmpeg', ['-nostdin', '-f', 'lavfi', '-i', 'testsrc', '-f', 'null', '-'], { timeoutMs: 400 });
    await until(() => liveChildren().length > 0, 'ffmpeg to start');
    const pid = liveChildren()[0]!.pid;
    const r = await run;
    assert.equal(r.timedOut, true);
    assert.deepEqual(groupMembers(pid), []);
    assert.equal(alive(pid), false);
    assert.deepEqual(liveChildren(), []);
  });

  test('a group that ignores SIGTERM gets SIGKILL after the grace, children included', async () => {
    const stubborn = script('stubborn', `trap '' TERM\nsleep 60 &\necho $! > "${at('stubborn.pid')}"\nwait`);
    const r = await runTool('ffmpeg', [], { env: asFfmpeg(stubborn), timeoutMs: 500, graceMs: 300 });
    const child = Number(readFileSync(at('stubborn.pid'), 'utf8'));
    assert.deepEqual([r.timedOut, r.signal], [true, 'SIGKILL']);
    assert.equal(alive(child), false, 'the background sleep survived');
  });

  // The timeout: a leftover that were not ended would hold the output pipe (and the run) for its two minutes.
  test('processes a tool leaves behind when it exits by itself are ended too', { timeout: 30_000 }, async () => {
    const leaver = script('leaver', `sleep 120 &\necho $! > "${at('leaver.pid')}"\nexit 0`);
    const r = await runTool('ffmpeg', [], { env: asFfmpeg(leaver) });
    assert.equal(r.code, 0);
    assert.equal(alive(Number(readFileSync(at('leaver.pid'), 'utf8'))), false);
  });

  test('an AbortSignal ends the group; an already aborted one starts nothing', async () => {
    const controller = new AbortController();
    const run = runTool('ffmpeg', ['-nostdin', '-f', 'lavfi', '-i', 'testsrc', '-f', 'null', '-'], { signal: controller.signal });
    await until(() => liveChildren().length > 0, 'ffmpeg to start');
    const pid = liveChildren()[0]!.pid;
    controller.abort();
    const r = await run;
    assert.deepEqual([r.aborted, r.timedOut], [true, false]);
    assert.deepEqual(groupMembers(pid), []);
    const before = liveChildren().length;
    const never = await runTool('ffmpeg', ['-version'], { signal: AbortSignal.abort() });
    assert.deepEqual([never.aborted, never.code, liveChildren().length], [true, null, before]);
  });

  test('liveChildren lists the running children; killAllChildren ends them all (service shutdown)', async () => {
    const args = ['-nostdin', '-f', 'lavfi', '-i', 'testsrc', '-f', 'null', '-'];
    const runs = [runTool('ffmpeg', args), runTool('ffmpeg', args)];
    await until(() => liveChildren().length === 2, 'two children');
    const listed = liveChildren();
    assert.deepEqual(listed.map((c) => [c.tool, c.argv]), [
      ['ffmpeg', [toolPath('ffmpeg'), ...args]],
      ['ffmpeg', [toolPath('ffmpeg'), ...args]],
    ]);
    await killAllChildren();
    const results: RunResult[] = await Promise.all(runs);
    assert.deepEqual(results.map((r) => r.aborted), [true, true]);
    assert.deepEqual(liveChildren(), []);
    for (const { pid } of listed) assert.deepEqual(groupMembers(pid), []);
  });

  test('output over the cap is cut and flagged', async () => {
    const loud = script('loud', 'head -c 100000 /dev/zero | tr "\\0" x\nhead -c 50000 /dev/zero | tr "\\0" y >&2');
    const r = await runTool('ffmpeg', [], { env: asFfmpeg(loud), maxStdoutBytes: 1000, maxStderrBytes: 10 });
    assert.deepEqual([r.stdout, r.stdoutTruncated], ['x'.repeat(1000), true]);
    assert.deepEqual([r.stderr, r.stderrTruncated], ['y'.repeat(10), true]);
  });

  test('line callbacks: \\n, \\r\\n and a lone \\r each end a line, split or not across writes', async () => {
    const talker = script('talker', 'printf "one\\r\\ntwo\\rthr" >&2\nsleep 0.2\nprintf "ee\\r" >&2\nsleep 0.2\nprintf "\\nfour\\n\\nfive" >&2\nprintf "out1\\nout2"');
    const errLines: string[] = [];
    const outLines: string[] = [];
    await runTool('ffmpeg', [], { env: asFfmpeg(talker), onStderrLine: (l) => errLines.push(l), onStdoutLine: (l) => outLines.push(l) });
    assert.deepEqual(errLines, ['one', 'two', 'three', 'four', '', 'five']);
    assert.deepEqual(outLines, ['out1', 'out2']);
  });

  test('a throwing line callback does not break the run', async () => {
    const r = await runTool('ffmpeg', ['-version'], { onStdoutLine: () => { throw new Error('boom'); } });
    assert.equal(r.code, 0);
  });

  test('a tool that cannot start rejects with the reason', async () => {
    const broken = script('broken', 'exit 0');
    writeFileSync(broken, '#!/nonexistent/interpreter\n');
    await assert.rejects(runTool('ffmpeg', [], { env: asFfmpeg(broken) }), /Could not start ffmpeg/);
    assert.deepEqual(liveChildren(), []);
  });

  test('an unavailable tool rejects with the 501 ApiError', async () => {
    await assert.rejects(runTool('ffprobe', [], { env: { BACKLOT_FFPROBE: at('none') } }), (err: unknown) => err instanceof ApiError && err.status === 501);
  });

  test('BACKLOT_MEDIA_LOG writes the exact argument list to stderr', () => {
    const code = `require(${JSON.stringify(path.join(ROOT, 'dist/service/media'))}).runTool('ffmpeg', ['-hide_banner', '-version', 'a b']).then(() => {})`;
    const logged = spawnSync(process.execPath, ['-e', code], { env: { ...process.env, BACKLOT_MEDIA_LOG: '1' }, encoding: 'utf8' });
    assert.ok(logged.stderr.includes(`media: run ${JSON.stringify([toolPath('ffmpeg'), '-hide_banner', '-version', 'a b'])}\n`), logged.stderr);
    const quiet = spawnSync(process.execPath, ['-e', code], { env: { ...process.env, BACKLOT_MEDIA_LOG: '' }, encoding: 'utf8' });
    assert.equal(quiet.stderr, '');
  });
});

describe('probeMedia: its own limits', () => {
  test('a probe that hangs times out and leaves nothing running', async () => {
    const hang = script('hang-probe', `sleep 60 &\necho $! > "${at('hang.pid')}"\nwait`);
    await assert.rejects(
      probeMedia(at('whatever.mp4'), { env: { ...process.env, BACKLOT_FFPROBE: hang }, timeoutMs: 300 }),
      /^ProbeError: ffprobe timed out after 0.3 s\.$/,
    );
    assert.equal(alive(Number(readFileSync(at('hang.pid'), 'utf8'))), false);
  });

  test('output over the cap is a ProbeError, not a parse of half a document', async () => {
    const flood = script('flood-probe', 'head -c 5000000 /dev/zero | tr "\\0" " "');
    await assert.rejects(probeMedia(at('x.mp4'), { env: { ...process.env, BACKLOT_FFPROBE: flood } }), /larger than 4194304 bytes/);
  });

  test('output that is not JSON is a ProbeError', async () => {
    const liar = script('liar-probe', 'echo "this is not json"');
    await assert.rejects(probeMedia(at('x.mp4'), { env: { ...process.env, BACKLOT_FFPROBE: liar } }), /did not answer with JSON/);
  });

  test('many probes at once all answer (at most four run at a time)', async () => {
    const counter = at('concurrency');
    const slow = script('slow-probe', `echo x >> "${counter}"\nls "${dir}"/running-* 2>/dev/null | wc -l >> "${counter}.max"\ntouch "${dir}/running-$$"\nsleep 0.3\nrm "${dir}/running-$$"\necho '{"format":{"format_name":"wav"},"streams":[]}'`);
    const probes = await Promise.all(
      Array.from({ length: 10 }, () => probeMedia(at('x.wav'), { env: { ...process.env, BACKLOT_FFPROBE: slow } })),
    );
    assert.equal(probes.length, 10);
    assert.ok(probes.every((p) => p.format === 'wav' && p.video === null));
    const seen = readFileSync(`${counter}.max`, 'utf8').trim().split('\n').map(Number);
    assert.ok(Math.max(...seen) <= 3, `a probe saw ${Math.max(...seen)} others running`);
  });
});
