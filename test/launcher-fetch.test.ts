import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type TestService } from './helpers/service';
import { openSse } from './helpers/sse';
import { fixture, startLauncher, type LauncherClient } from './helpers/launcher';

/**
 * Downloads of an install over local HTTP (docs/studios.md "Downloads"), served by a
 * server in this test: the sha256 check, a mismatch that deletes the file and
 * fails the download job, a connection cut mid-file that the next attempt
 * resumes with Range, and a cancel that removes the partial file.
 */

let svc: TestService;
let l: LauncherClient;
const body = randomBytes(256 * 1024 + 17);
const bodySha = createHash('sha256').update(body).digest('hex');
const seen: { path: string; range: string | undefined }[] = [];
let cutsLeft = 0;

const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
  seen.push({ path: req.url ?? '', range: req.headers.range });
  const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
  const start = range ? Number(range[1]) : 0;
  if (req.url === '/slow') {
    res.writeHead(200, { 'Content-Length': body.length });
    res.write(body.subarray(0, 1000));
    return; // never finishes
  }
  if (range) {
    res.writeHead(206, { 'Content-Length': body.length - start, 'Content-Range': `bytes ${start}-${body.length - 1}/${body.length}` });
  } else {
    res.writeHead(200, { 'Content-Length': body.length });
  }
  if (req.url === '/cut' && cutsLeft > 0) {
    cutsLeft--;
    res.write(body.subarray(start, start + 100_000), () => setTimeout(() => res.socket?.destroy(), 50));
    return;
  }
  res.end(body.subarray(start));
});
let origin = '';

before(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  ({ svc, l } = await startLauncher());
});
after(async () => {
  server.closeAllConnections();
  server.close();
  await svc.stop();
});

const target = (id: string) => join(svc.dataDir, 'studios', id, 'app', 'models', 'blob.bin');
const download = (path: string, sha = bodySha) => ({ download: [{ url: `${origin}${path}`, sha256: sha, to: 'models/blob.bin' }] });
const downloadJob = async (id: string) => (await l.jobsOf(id)).find((j) => j.kind === 'download');

test('an http download lands at its `to` once its sha256 matches; progress counts bytes', async () => {
  await l.installOk(fixture({ id: 'httpok', ...download('/ok') }));
  assert.deepEqual(readFileSync(target('httpok')), body);
  assert.equal(existsSync(`${target('httpok')}.part`), false);
  const job = await downloadJob('httpok');
  assert.equal(job.state, 'succeeded');
  assert.equal(job.progress_num, body.length);
  assert.equal(job.progress_den, body.length);
  const text = await l.logText(job.id);
  assert.ok(text.some((t) => t.includes(`models/blob.bin: ${body.length} bytes, sha256 ok`)), text.join('\n'));
});

test('a sha256 mismatch fails the download job, deletes the file, and the studio is failed', async () => {
  const { studio } = await l.install(fixture({ id: 'httpbad', ...download('/ok', 'b'.repeat(64)) }));
  assert.equal(studio.state, 'failed');
  const job = await downloadJob('httpbad');
  assert.equal(job.state, 'failed');
  assert.match(job.last_error, /sha256 mismatch for models\/blob\.bin/);
  assert.match(studio.last_error, /download job failed/);
  assert.equal(existsSync(target('httpbad')), false);
  assert.equal(existsSync(`${target('httpbad')}.part`), false, 'no partial kept');
});

test('a connection cut mid-file fails the download; installing again resumes with Range', async () => {
  cutsLeft = 1;
  seen.length = 0;
  const src = fixture({ id: 'httpcut', ...download('/cut') });
  const { studio } = await l.install(src);
  assert.equal(studio.state, 'failed');
  const failed = await downloadJob('httpcut');
  assert.equal(failed.state, 'failed');
  assert.match(failed.last_error, /connection (closed|broke)/);
  assert.equal(existsSync(target('httpcut')), false, 'no unverified file under the final name');
  assert.ok(existsSync(`${target('httpcut')}.part`), 'the partial is kept for the next attempt');
  const kept = statSync(`${target('httpcut')}.part`).size;
  assert.ok(kept > 0 && kept < body.length);

  await l.installOk(src);
  assert.deepEqual(readFileSync(target('httpcut')), body);
  assert.equal(seen.length, 2, JSON.stringify(seen));
  assert.equal(seen[0]!.range, undefined);
  assert.equal(seen[1]!.range, `bytes=${kept}-`, 'the second attempt asks for the rest');
  const text = await l.logText((await downloadJob('httpcut')).id);
  assert.ok(text.some((t) => t.includes('(resumed)')), text.join('\n'));
});

test('cancel of a download: 204, cancelled, the partial file removed', async () => {
  const res = await l.post('/launcher/studios:install', { source: fixture({ id: 'httpslow', ...download('/slow') }) });
  assert.equal((await l.waitJob(res.json.id)).state, 'succeeded');
  let job: any;
  for (let i = 0; i < 200 && !job; i++) {
    job = await downloadJob('httpslow');
    if (!job) await new Promise((r) => setTimeout(r, 25));
  }
  assert.ok(job);
  const sse = await openSse(svc.port, `/launcher/jobs/${job.id}/logs`, l.cred);
  await sse.waitFor((m) => m.event === 'line' && JSON.parse(m.data).text.startsWith('downloading '));
  sse.close();
  for (let i = 0; i < 200 && !existsSync(`${target('httpslow')}.part`); i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(existsSync(`${target('httpslow')}.part`), 'bytes are arriving');
  assert.equal((await l.post(`/launcher/jobs/${job.id}:cancel`)).status, 204);
  assert.equal((await l.job(job.id)).state, 'cancelled');
  assert.equal(existsSync(`${target('httpslow')}.part`), false, 'the partial is removed');
  assert.equal(existsSync(target('httpslow')), false);
  assert.match((await l.waitState('httpslow', 'failed')).last_error, /download job was cancelled/);
});
