import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { realAsset } from './helpers/timeline';
import { sendOnce, type Answer } from './helpers/hostile';
import { startService, type TestService } from './helpers/service';

/**
 * Races (docs/security.md "Hostile input"). Every request here goes on its own TCP connection
 * (agent: false), all of a wave sent before any answer is awaited, so the
 * service sees them interleaved the way independent clients send them. The
 * whole file runs twice: with `--read-workers 0` (every read on the main
 * thread) and with the default pool.
 *
 * - 50 clients race conditional writes on one KV key, one record, one session
 *   and one sequence, in rounds: all 50 write over the same read with its etag
 *   in If-Match. Exactly one wins per etag (the other 49 are 409
 *   `etag_mismatch`) and no update is lost: the final document holds every
 *   round's winning change, and no losing one.
 * - 50 concurrent creates against a quota of 10 (records; kv_bytes) never pass it.
 * - Two exports of one sequence at once: one 202, one 409 `already_exporting`.
 * - 20 concurrent uploads of the same bytes store one blob.
 */

const CLIENTS = 50;
const ROUNDS = 4;
const REQUEST_MS = 60_000;

interface Res {
  status: number;
  json: any;
  etag: string | undefined;
}

function call(port: number, token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}, raw?: Buffer): Promise<Res> {
  const payload = raw ?? (body === undefined ? undefined : Buffer.from(JSON.stringify(body)));
  const h: Record<string, string> = { Host: `127.0.0.1:${port}`, Authorization: `Bearer ${token}`, ...headers };
  if (payload) {
    h['Content-Type'] ??= method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
    h['Content-Length'] = String(payload.length);
  }
  return sendOnce(port, { method, path: `/api/v1${path}`, headers: h, body: payload }, REQUEST_MS).then((a: Answer | null) => {
    assert.ok(a, `${method} ${path}: no answer within ${REQUEST_MS} ms`);
    return { status: a.status, json: a.text ? JSON.parse(a.text) : undefined, etag: undefined };
  });
}

/** The etag a read reports: the body's `etag`, or the sequence's `revision`. */
function etagOf(doc: any): string {
  return doc.etag ?? String(doc.revision);
}

interface Contended {
  /** Reads the resource: its etag and whatever the clients check. */
  read(): Promise<any>;
  /** Client `i`'s write over what it read, conditional on `etag`. */
  write(i: number, doc: any, etag: string): Promise<Res>;
}

/**
 * ROUNDS rounds: one read, then all 50 clients write over what was read with
 * its etag in If-Match, at once. Each round must have exactly one winner (the
 * other 49 are 409 `etag_mismatch`), and the final document must hold every
 * round's winning change and no losing one.
 */
async function race(r: Contended, holds: (final: any, round: number, client: number) => boolean): Promise<any> {
  const winners: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const doc = await r.read();
    const etag = etagOf(doc);
    const answers = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => r.write(round * CLIENTS + i, doc, etag)));
    const won = answers.flatMap((a, i) => (a.status === 200 ? [i] : []));
    assert.equal(won.length, 1, `round ${round}: ${won.length} writes won on the etag ${etag}`);
    for (const a of answers.filter((x) => x.status !== 200)) {
      assert.equal(a.status, 409, JSON.stringify(a.json));
      assert.equal(a.json.code, 'etag_mismatch');
    }
    winners.push(won[0]!);
  }
  const final = await r.read();
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < CLIENTS; i++) {
      assert.equal(holds(final, round, round * CLIENTS + i), i === winners[round], `round ${round}, client ${i} (winner ${winners[round]})`);
    }
  }
  return final;
}

for (const workers of ['0', 'default']) {
  describe(`races (--read-workers ${workers})`, () => {
    let svc: TestService;
    let token: string;
    const get = (path: string) => call(svc.port, token, 'GET', path);

    before(async () => {
      svc = await startService({ args: workers === 'default' ? [] : ['--read-workers', workers] });
      token = svc.studio('racer', ['kv', 'records', 'timeline', 'assets', 'jobs']);
    });
    after(async () => {
      await svc.stop();
    });

    test('KV: 50 clients PUT one key with If-Match: one winner per etag, no lost update', async () => {
      const put = (body: unknown, headers?: Record<string, string>) => call(svc.port, token, 'PUT', '/kv/race/doc', body, headers);
      assert.equal((await put({ marks: {} })).status, 200);
      await race(
        {
          read: async () => (await get('/kv/race/doc')).json,
          write: (i, doc, etag) => put({ marks: { ...doc.value.marks, [`c${i}`]: true } }, { 'If-Match': `"${etag}"` }),
        },
        (f, _, i) => f.value.marks[`c${i}`] === true,
      );
    });

    test('records: 50 clients PUT one record with If-Match: one winner per etag, no lost update', async () => {
      const rec = await call(svc.port, token, 'POST', '/records/race', { marks: [] });
      assert.equal(rec.status, 201);
      const path = `/records/race/${rec.json.id}`;
      const final = await race(
        {
          read: async () => (await get(path)).json,
          write: (i, doc, etag) => call(svc.port, token, 'PUT', path, { marks: [...doc.marks, i] }, { 'If-Match': etag }),
        },
        (f, _, i) => f.marks.includes(i),
      );
      assert.equal(final.marks.length, ROUNDS);
    });

    test('sessions: 50 clients PATCH one session state with If-Match: one winner per etag, no lost update', async () => {
      const s = await call(svc.port, token, 'POST', '/sessions', { name: 'race', state: { log: '' } });
      assert.equal(s.status, 201);
      const path = `/sessions/${s.json.id}`;
      // Each writes the whole `log` it read plus its own mark: a lost update would drop a mark.
      await race(
        {
          read: async () => (await get(path)).json,
          write: (i, doc, etag) => call(svc.port, token, 'PATCH', path, { state: { log: `${doc.state.log}<${i}>` } }, { 'If-Match': `"${etag}"` }),
        },
        (f, _, i) => f.state.log.includes(`<${i}>`),
      );
    });

    test('timeline: 50 clients PATCH one sequence with If-Match: one winner per revision, no lost update', async () => {
      const t = await call(svc.port, token, 'POST', '/timeline', { name: 'race' });
      assert.equal(t.status, 201);
      const path = `/timeline/${t.json.id}`;
      const final = await race(
        {
          read: async () => (await get(path)).json,
          write: (i, doc, etag) => call(svc.port, token, 'PATCH', path, { name: `${doc.name}.${i}` }, { 'If-Match': `"${etag}"` }),
        },
        (f, _, i) => f.name.split('.').includes(String(i)),
      );
      // One revision per winning write: none applied twice, none skipped.
      assert.equal(final.revision, 1 + ROUNDS);
    });

    test('50 concurrent creates against a quota of 10 never pass it (records and kv_bytes)', async () => {
      const r = svc.cli(['studio', 'add', 'quota', '--quota-records', '10', '--quota-kv-bytes', String(10 * JSON.stringify({ v: 'x'.repeat(90) }).length)]);
      assert.equal(r.code, 0, r.stderr);
      const q = svc.token('quota', ['kv', 'records']);
      const records = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => call(svc.port, q, 'POST', '/records/things', { i })));
      const docs = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => call(svc.port, q, 'PUT', `/kv/q/k${i}`, { v: 'x'.repeat(90) })));
      for (const [what, answers, ok] of [['records', records, 201], ['kv_bytes', docs, 200]] as const) {
        assert.equal(answers.filter((a) => a.status === ok).length, 10, `${what}: ${answers.map((a) => a.status).join(',')}`);
        for (const a of answers.filter((x) => x.status !== ok)) {
          assert.equal(a.status, 429);
          assert.equal(a.json.code, 'quota_exceeded');
          assert.equal(a.json.details.quota, what);
        }
      }
      assert.equal((await call(svc.port, q, 'GET', '/records/things?limit=500')).json.items.length, 10);
      assert.equal((await call(svc.port, q, 'GET', '/kv/q?limit=500')).json.items.length, 10);
    });

    test('two exports of one sequence at once: one 202, one 409 already_exporting', async () => {
      const video = await realAsset(svc.port, token, 'video', 2);
      const t = await call(svc.port, token, 'POST', '/timeline', { name: 'export race', clips: [{ asset_id: video.id }] });
      assert.equal(t.status, 201, JSON.stringify(t.json));
      const [a, b] = await Promise.all([0, 1].map(() => call(svc.port, token, 'POST', `/timeline/${t.json.id}:export`, { preset: 'h264' })));
      const statuses = [a!.status, b!.status].sort();
      assert.deepEqual(statuses, [202, 409], `${JSON.stringify(a!.json)} ${JSON.stringify(b!.json)}`);
      const [started, refused] = a!.status === 202 ? [a!, b!] : [b!, a!];
      assert.equal(refused.json.code, 'already_exporting');
      assert.equal(refused.json.details.job, started.json.id);
      // Its one job: end it rather than spend the CPU.
      const cancel = await call(svc.port, token, 'POST', `/timeline/${t.json.id}/exports/${started.json.id}:cancel`);
      assert.ok([204, 409].includes(cancel.status), JSON.stringify(cancel.json));
      const jobs = (await get(`/timeline/${t.json.id}/exports`)).json.items;
      assert.deepEqual(jobs.map((j: any) => j.id), [started.json.id]);
    });

    test('20 concurrent uploads of the same bytes store one blob', async () => {
      const bytes = Buffer.from(`the same bytes, ${workers} ${'z'.repeat(200_000)}`);
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => call(svc.port, token, 'POST', '/assets?kind=other', undefined, { 'Content-Type': 'application/octet-stream' }, bytes)),
      );
      const statuses = answers.map((a) => a.status);
      assert.equal(statuses.filter((s) => s === 201).length, 1, statuses.join(','));
      assert.equal(statuses.filter((s) => s === 200).length, 19, statuses.join(','));
      const ids = new Set(answers.map((a) => a.json.id));
      const shas = new Set(answers.map((a) => a.json.sha256));
      assert.equal(ids.size, 1);
      assert.equal(shas.size, 1);
      const sha = [...shas][0] as string;
      const blobs = join(svc.dataDir, 'blobs');
      assert.equal(readdirSync(blobs).filter((f) => f.startsWith(sha)).length, 1);
      // No upload left a temporary file behind.
      const tmp = join(blobs, '.tmp');
      assert.deepEqual(existsSync(tmp) ? readdirSync(tmp) : [], []);
      const got = await get(`/assets/${[...ids][0]}`);
      assert.equal(got.status, 200);
    });
  });
}
