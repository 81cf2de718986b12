import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  DownloadUrlError,
  fetchDownload,
  partialPath,
  removePartial,
  verifyFile,
  type DownloadContext,
  type DownloadSpec,
} from '../service/launcher/download';
import { tempDir } from './helpers/service';

/**
 * The download step of studio installs (docs/studios.md "Downloads"), against a
 * real HTTP server on 127.0.0.1 written here and real files in temp folders.
 */

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const base = tempDir('backlot-download-');
const body = randomBytes(3 * 65536 + 123);
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const bodySha = sha(body);

const routes = new Map<string, Handler>();
const seen: { path: string; range: string | undefined; userAgent: string | undefined }[] = [];
const sockets = new Set<Socket>();
const server = http.createServer((req, res) => {
  seen.push({ path: req.url ?? '', range: req.headers.range, userAgent: req.headers['user-agent'] });
  const handler = routes.get(req.url ?? '');
  if (handler) handler(req, res);
  else res.writeHead(404).end('not here');
});
server.on('connection', (socket) => {
  sockets.add(socket);
  socket.on('close', () => sockets.delete(socket));
});
let origin = '';

before(async () => {
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
after(async () => {
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
  rmSync(base, { recursive: true, force: true });
});

interface ServeOptions {
  ranges?: boolean;
  /** Sends this many bytes of the answer, then cuts the connection. */
  cutAfter?: number;
  /** Sends this many bytes of the answer, then nothing, the connection left open. */
  stallAfter?: number;
  /** No Content-Length (chunked). */
  chunked?: boolean;
  /** Sends in ten pieces this far apart. */
  paceMs?: number;
}

function serveBytes(bytes: Buffer, options: ServeOptions = {}): Handler {
  return (req, res) => {
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    let start = 0;
    if (options.ranges && range) {
      start = Number(range[1]);
      if (start >= bytes.length) {
        res.writeHead(416, { 'Content-Range': `bytes */${bytes.length}` }).end();
        return;
      }
      res.writeHead(206, { 'Content-Length': bytes.length - start, 'Content-Range': `bytes ${start}-${bytes.length - 1}/${bytes.length}` });
    } else {
      res.writeHead(200, options.chunked ? {} : { 'Content-Length': bytes.length });
    }
    const rest = bytes.subarray(start);
    if (options.cutAfter !== undefined) {
      res.write(rest.subarray(0, options.cutAfter), () => setTimeout(() => res.socket?.destroy(), 50));
    } else if (options.stallAfter !== undefined) {
      res.write(rest.subarray(0, options.stallAfter));
    } else if (options.paceMs !== undefined) {
      const piece = Math.ceil(rest.length / 10);
      const send = (at: number) => {
        if (at >= rest.length) return void res.end();
        res.write(rest.subarray(at, at + piece));
        setTimeout(() => send(at + piece), options.paceMs);
      };
      send(0);
    } else {
      res.end(rest);
    }
  };
}

let count = 0;
/** A fresh app folder and source folder, and a context that records what it is told. */
function setup(extra: Partial<DownloadContext> = {}) {
  const root = join(base, `case-${++count}`);
  const appDir = join(root, 'app');
  const sourceDir = join(root, 'source');
  mkdirSync(appDir, { recursive: true });
  mkdirSync(sourceDir, { recursive: true });
  const progress: [number, number][] = [];
  const logs: string[] = [];
  const controller = new AbortController();
  const ctx: DownloadContext = {
    appDir,
    sourceDir,
    signal: controller.signal,
    progress: (bytes, total) => progress.push([bytes, total]),
    log: (lines) => logs.push(...lines),
    stallMs: 2000,
    ...extra,
  };
  return { root, appDir, sourceDir, ctx, progress, logs, controller };
}

const route = (path: string, handler: Handler) => {
  routes.set(path, handler);
  return `${origin}${path}`;
};
const requestsTo = (path: string) => seen.filter((r) => r.path === path);
const openFds = () => readdirSync('/proc/self/fd').length;

function assertMonotonic(progress: [number, number][], size: number): void {
  assert.ok(progress.length > 0);
  for (let i = 1; i < progress.length; i++) assert.ok(progress[i]![0] >= progress[i - 1]![0], `progress went back: ${JSON.stringify(progress)}`);
  assert.deepEqual(progress[progress.length - 1], [size, size]);
}

describe('http downloads', () => {
  test('a plain download lands at its target with the right bytes', async () => {
    const { appDir, ctx, progress } = setup();
    const url = route('/plain', serveBytes(body, { paceMs: 30 }));
    const got = await fetchDownload({ url, sha256: bodySha, to: 'models/weights.bin' }, ctx);
    const target = join(appDir, 'models', 'weights.bin');
    assert.equal(got.path, target);
    assert.equal(got.size, body.length);
    assert.equal(got.resumed, false);
    assert.equal(got.mtimeMs, statSync(target).mtimeMs);
    assert.deepEqual(readFileSync(target), body);
    assert.equal(existsSync(partialPath(target)), false);
    assert.equal(requestsTo('/plain')[0]?.userAgent, 'Backlot');
    assert.equal(requestsTo('/plain')[0]?.range, undefined);
    assertMonotonic(progress, body.length);
    assert.ok(progress.length >= 2, 'reports progress while it runs');
    assert.ok(progress.every(([, total]) => total === body.length));
    assert.equal(await verifyFile(target, bodySha), true);
    assert.equal(await verifyFile(target, sha(Buffer.from('other'))), false);
    assert.equal(await verifyFile(join(appDir, 'missing.bin'), bodySha), false);
  });

  test('an unknown length (chunked) reports total 0 until the end', async () => {
    const { ctx, progress } = setup();
    const url = route('/chunked', serveBytes(body, { chunked: true, paceMs: 20 }));
    const got = await fetchDownload({ url, sha256: bodySha, to: 'a.bin' }, ctx);
    assert.equal(got.size, body.length);
    assert.ok(progress.slice(0, -1).every(([, total]) => total === 0));
    assertMonotonic(progress, body.length);
  });

  test('a cut connection keeps the partial; the next attempt resumes with Range', async () => {
    const { appDir, ctx, logs } = setup();
    const cut = 100_000;
    const spec: DownloadSpec = { url: route('/cut', serveBytes(body, { cutAfter: cut })), sha256: bodySha, to: 'x.bin' };
    await assert.rejects(fetchDownload(spec, ctx), (err: Error) => {
      assert.equal(err.message, `download of x.bin failed: the connection broke; the ${cut} bytes received are kept and the next attempt resumes`);
      return true;
    });
    const target = join(appDir, 'x.bin');
    assert.equal(statSync(partialPath(target)).size, cut);
    assert.equal(existsSync(target), false);

    routes.set('/cut', serveBytes(body, { ranges: true }));
    const got = await fetchDownload(spec, ctx);
    assert.equal(requestsTo('/cut').at(-1)?.range, `bytes=${cut}-`);
    assert.equal(got.resumed, true);
    assert.deepEqual(readFileSync(target), body);
    assert.ok(logs.includes(`resuming at ${cut} bytes`), logs.join('\n'));
    assert.equal(existsSync(partialPath(target)), false);
  });

  test('a server that ignores Range (200) restarts from 0', async () => {
    const { appDir, ctx, logs, progress } = setup();
    const target = join(appDir, 'y.bin');
    writeFileSync(partialPath(target), randomBytes(5000)); // not even the right bytes
    const url = route('/norange', serveBytes(body));
    const got = await fetchDownload({ url, sha256: bodySha, to: 'y.bin' }, ctx);
    assert.equal(requestsTo('/norange').at(-1)?.range, 'bytes=5000-');
    assert.equal(got.resumed, false);
    assert.deepEqual(readFileSync(target), body);
    assert.ok(logs.some((line) => /restarting from 0/.test(line)));
    assertMonotonic(progress, body.length);
  });

  test('416 on a whole partial: the partial is verified and becomes the file', async () => {
    const { appDir, ctx, logs } = setup();
    const target = join(appDir, 'whole.bin');
    writeFileSync(partialPath(target), body);
    const url = route('/whole', serveBytes(body, { ranges: true }));
    const got = await fetchDownload({ url, sha256: bodySha, to: 'whole.bin' }, ctx);
    assert.equal(requestsTo('/whole').length, 1);
    assert.equal(requestsTo('/whole')[0]?.range, `bytes=${body.length}-`);
    assert.equal(got.resumed, true);
    assert.deepEqual(readFileSync(target), body);
    assert.ok(logs.some((line) => /HTTP 416/.test(line)));
  });

  test('416 on a partial that does not match restarts from 0', async () => {
    const { appDir, ctx } = setup();
    const target = join(appDir, 'long.bin');
    writeFileSync(partialPath(target), Buffer.concat([body, Buffer.from('junk')]));
    const url = route('/long', serveBytes(body, { ranges: true }));
    await fetchDownload({ url, sha256: bodySha, to: 'long.bin' }, ctx);
    assert.deepEqual(requestsTo('/long').map((r) => r.range), [`bytes=${body.length + 4}-`, undefined]);
    assert.deepEqual(readFileSync(target), body);
  });

  test('wrong bytes: sha256 mismatch deletes the partial and fails', async () => {
    const { appDir, ctx } = setup();
    const wrong = randomBytes(1000);
    const url = route('/wrong', serveBytes(wrong));
    await assert.rejects(fetchDownload({ url, sha256: bodySha, to: 'w/z.bin' }, ctx), {
      message: `sha256 mismatch for w/z.bin: expected ${bodySha}, got ${sha(wrong)}`,
    });
    assert.deepEqual(readdirSync(join(appDir, 'w')), []);
  });

  test('a stall fails with a clear message and keeps the partial', async () => {
    const { appDir, ctx } = setup({ stallMs: 300 });
    const url = route('/stall', serveBytes(body, { stallAfter: 4096 }));
    const started = performance.now();
    await assert.rejects(fetchDownload({ url, sha256: bodySha, to: 's.bin' }, ctx), {
      message: /^download of s\.bin failed: stalled: no data for 0\.3 s; the 4096 bytes received are kept/,
    });
    assert.ok(performance.now() - started < 2000);
    assert.equal(statSync(partialPath(join(appDir, 's.bin'))).size, 4096);
  });

  test('a stall before any byte keeps no empty partial', async () => {
    const { appDir, ctx } = setup({ stallMs: 200 });
    const url = route('/silent', () => {});
    await assert.rejects(fetchDownload({ url, sha256: bodySha, to: 'q.bin' }, ctx), { message: /stalled/ });
    assert.deepEqual(readdirSync(appDir), []);
  });

  test('abort stops promptly with AbortError, leaves no fd open, and removePartial removes the partial', async () => {
    const { appDir, ctx, controller } = setup();
    const url = route('/abort', serveBytes(body, { stallAfter: 8192 }));
    const before = openFds();
    let abortedAt = 0;
    ctx.progress = () => {
      abortedAt = performance.now();
      controller.abort();
    };
    await assert.rejects(fetchDownload({ url, sha256: bodySha, to: 'a.bin' }, ctx), { name: 'AbortError' });
    assert.ok(abortedAt > 0);
    assert.ok(performance.now() - abortedAt < 500, 'stops promptly');
    for (let i = 0; i < 50 && (sockets.size > 0 || openFds() > before); i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(sockets.size, 0, 'the connection is closed');
    assert.ok(openFds() <= before, `fds before ${before}, after ${openFds()}`);
    const target = join(appDir, 'a.bin');
    assert.equal(existsSync(partialPath(target)), true);
    await removePartial(target);
    assert.deepEqual(readdirSync(appDir), []);
    await removePartial(target); // a second time is fine
  });

  test('an abort before the start throws AbortError and writes nothing', async () => {
    const { appDir, ctx, controller } = setup();
    controller.abort();
    await assert.rejects(fetchDownload({ url: route('/never', serveBytes(body)), sha256: bodySha, to: 'n.bin' }, ctx), { name: 'AbortError' });
    assert.deepEqual(readdirSync(appDir), []);
    assert.equal(requestsTo('/never').length, 0);
  });

  test('HTTP 404 fails naming the status', async () => {
    const { appDir, ctx } = setup();
    await assert.rejects(fetchDownload({ url: `${origin}/nothing-here`, sha256: bodySha, to: 'm.bin' }, ctx), {
      message: 'download of m.bin failed: HTTP 404 Not Found',
    });
    assert.deepEqual(readdirSync(appDir), []);
  });

  test('a Content-Length above 64 GiB is refused', async () => {
    const { ctx } = setup();
    const url = route('/huge', (_req, res) => {
      res.writeHead(200, { 'Content-Length': String(65 * 2 ** 30) });
      res.flushHeaders();
    });
    await assert.rejects(fetchDownload({ url, sha256: bodySha, to: 'h.bin' }, ctx), { message: /more than the 64 GiB limit/ });
  });
});

describe('redirects', () => {
  before(() => {
    for (let n = 1; n <= 6; n++) route(`/r/${n}`, (_req, res) => res.writeHead(302, { Location: `/r/${n - 1}` }).end());
    route('/r/0', serveBytes(body, { ranges: true }));
    route('/to-ftp', (_req, res) => res.writeHead(301, { Location: 'ftp://127.0.0.1/x' }).end());
    route('/to-file', (_req, res) => res.writeHead(307, { Location: 'file:///etc/passwd' }).end());
  });

  test('five redirects are followed', async () => {
    const { ctx, logs } = setup();
    const got = await fetchDownload({ url: `${origin}/r/5`, sha256: bodySha, to: 'r.bin' }, ctx);
    assert.equal(got.size, body.length);
    assert.equal(logs.filter((line) => line.startsWith('redirected')).length, 5);
  });

  test('a sixth is refused', async () => {
    const { appDir, ctx } = setup();
    await assert.rejects(fetchDownload({ url: `${origin}/r/6`, sha256: bodySha, to: 'r.bin' }, ctx), {
      message: 'download of r.bin failed: more than 5 redirects',
    });
    assert.deepEqual(readdirSync(appDir), []);
  });

  for (const [path, scheme] of [['/to-ftp', 'ftp:'], ['/to-file', 'file:']]) {
    test(`a redirect to ${scheme} is refused`, async () => {
      const { appDir, ctx } = setup();
      await assert.rejects(fetchDownload({ url: `${origin}${path}`, sha256: bodySha, to: 'f.bin' }, ctx), (err: Error) => {
        assert.ok(err instanceof DownloadUrlError);
        assert.equal(err.member, 'url');
        assert.equal(err.reason, 'scheme');
        assert.match(err.message, new RegExp(`redirects to a ${scheme} URL`));
        return true;
      });
      assert.deepEqual(readdirSync(appDir), []);
    });
  }
});

describe('file: URLs', () => {
  test('a relative file: URL copies from the source folder', async () => {
    const { appDir, sourceDir, ctx, progress } = setup();
    mkdirSync(join(sourceDir, 'assets'));
    writeFileSync(join(sourceDir, 'assets', 'my file.bin'), body);
    const got = await fetchDownload({ url: 'file:assets/my%20file.bin', sha256: bodySha, to: 'copied/one.bin' }, ctx);
    assert.deepEqual(readFileSync(join(appDir, 'copied', 'one.bin')), body);
    assert.equal(got.size, body.length);
    assertMonotonic(progress, body.length);
  });

  test('an absolute file: URL copies, and replaces an old partial', async () => {
    const { root, appDir, ctx } = setup();
    writeFileSync(join(root, 'elsewhere.bin'), body);
    writeFileSync(partialPath(join(appDir, 'two.bin')), randomBytes(body.length + 10));
    await fetchDownload({ url: `file://${join(root, 'elsewhere.bin')}`, sha256: bodySha, to: 'two.bin' }, ctx);
    assert.deepEqual(readFileSync(join(appDir, 'two.bin')), body);
  });

  test('a missing file fails and leaves nothing', async () => {
    const { appDir, ctx } = setup();
    await assert.rejects(fetchDownload({ url: 'file:nope.bin', sha256: bodySha, to: 'n.bin' }, ctx), { message: /^download of n\.bin failed: ENOENT/ });
    assert.deepEqual(readdirSync(appDir), []);
  });

  test('a relative file: URL escaping the source folder is refused', async () => {
    const { root, appDir, sourceDir, ctx } = setup();
    writeFileSync(join(root, 'secret.bin'), body);
    await assert.rejects(fetchDownload({ url: 'file:../secret.bin', sha256: bodySha, to: 'e.bin' }, ctx), { name: 'DownloadUrlError', reason: 'escapes' });
    symlinkSync(join(root, 'secret.bin'), join(sourceDir, 'link.bin'));
    await assert.rejects(fetchDownload({ url: 'file:link.bin', sha256: bodySha, to: 'e.bin' }, ctx), { name: 'DownloadUrlError', reason: 'symlink' });
    assert.deepEqual(readdirSync(appDir), []);
  });

  test('other schemes are refused before anything runs', async () => {
    const { appDir, ctx } = setup();
    for (const url of ['ftp://127.0.0.1/x', 'data:,hello', 'javascript:alert(1)', 'x.bin']) {
      await assert.rejects(fetchDownload({ url, sha256: bodySha, to: 'o.bin' }, ctx), { name: 'DownloadUrlError', member: 'url', reason: 'scheme' });
    }
    assert.deepEqual(readdirSync(appDir), []);
  });
});

describe('where a download may land', () => {
  test('absolute, .., and symlinked targets are refused and nothing is written outside', async () => {
    const { root, appDir, ctx } = setup();
    const outside = join(root, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'victim.bin'), 'keep me');
    symlinkSync(outside, join(appDir, 'link'));
    symlinkSync(join(outside, 'victim.bin'), join(appDir, 'file-link.bin'));
    symlinkSync(join(outside, 'victim.bin'), join(appDir, 'p.bin.part'));
    symlinkSync(join(outside, 'new.bin'), join(appDir, 'dangling.bin.part'));
    mkdirSync(join(appDir, 'real'));
    symlinkSync(outside, join(appDir, 'real', 'deeper'));
    const url = route('/land', serveBytes(body));
    const rows: [string, string][] = [
      [join(outside, 'abs.bin'), 'absolute'],
      ['../outside/dots.bin', 'escapes'],
      ['real/../../outside/dots.bin', 'escapes'],
      ['link/through.bin', 'symlink'],
      ['link/sub/through.bin', 'symlink'],
      ['real/deeper/x.bin', 'symlink'],
      ['file-link.bin', 'symlink'],
      ['p.bin', 'symlink'],
      ['dangling.bin', 'symlink'],
    ];
    for (const [to, reason] of rows) {
      await assert.rejects(fetchDownload({ url, sha256: bodySha, to }, ctx), { name: 'DownloadUrlError', member: 'to', reason }, to);
    }
    assert.deepEqual(readdirSync(outside), ['victim.bin']);
    assert.equal(readFileSync(join(outside, 'victim.bin'), 'utf8'), 'keep me');
    assert.equal(requestsTo('/land').length, 0, 'refused before any request');
  });

  test('an app folder that is itself a symlink is refused', async () => {
    const { root, ctx } = setup();
    symlinkSync(ctx.appDir, join(root, 'app-link'));
    await assert.rejects(fetchDownload({ url: route('/appl', serveBytes(body)), sha256: bodySha, to: 'x.bin' }, { ...ctx, appDir: join(root, 'app-link') }), {
      name: 'DownloadUrlError',
      reason: 'symlink',
    });
  });
});
