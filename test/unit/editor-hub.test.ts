import assert from 'node:assert/strict';
import { Writable, type PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import { ApiError } from '../../service/core/errors';
import { createEditorHub, MAX_OPENED, type EditorHub } from '../../service/editor';
import { SseParser, type SseMessage } from '../helpers/sse';

/**
 * The editor hub on its own: each page is the real stream the hub hands to
 * Koa (a PassThrough), read here the way Koa's pipe would read it and parsed
 * by the test's event-stream parser. The HTTP side is test/editor.test.ts.
 */

const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface Page {
  body: PassThrough;
  events: SseMessage[];
  comments: string[];
  ended: Promise<void>;
}

/** A page that reads its stream as it comes. */
function read(body: PassThrough): Page {
  const events: SseMessage[] = [];
  const comments: string[] = [];
  const parser = new SseParser((m) => events.push(m), (c) => comments.push(c));
  body.setEncoding('utf8');
  body.on('data', (chunk: string) => parser.feed(chunk));
  const ended = new Promise<void>((resolve) => body.once('end', () => resolve()));
  return { body, events, comments, ended };
}

const tick = () => new Promise((r) => setImmediate(r));

async function until(ok: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function hub(options: { heartbeatMs?: number; highWater?: number } = {}): EditorHub {
  return createEditorHub({ port: () => 7380, heartbeatMs: 60_000, ...options });
}

describe('editor hub', () => {
  test('a page gets the opening comment, then hello with connected_at', async () => {
    const h = hub();
    const page = read(h.connect());
    await tick();
    assert.deepEqual(page.comments, ['editor']);
    assert.equal(page.events.length, 1);
    assert.equal(page.events[0]!.event, 'hello');
    const hello = JSON.parse(page.events[0]!.data);
    assert.deepEqual(Object.keys(hello), ['connected_at']);
    assert.match(hello.connected_at, RFC3339_MS);
    assert.equal(h.connected(), 1);
    h.close();
  });

  test('publish reaches every connected page with the same event and answers how many', async () => {
    const h = hub();
    const a = read(h.connect());
    const b = read(h.connect());
    const data = { timeline: { id: 't1', name: 'line one\nline two' }, studio_id: 'paint', opened_at: '2026-11-23T10:00:00.000Z' };
    assert.equal(h.publish('open', data), 2);
    await tick();
    for (const page of [a, b]) {
      assert.deepEqual(page.events.map((e) => e.event), ['hello', 'open']);
      assert.deepEqual(JSON.parse(page.events[1]!.data), data);
    }
    h.close();
  });

  test('publish with no page connected reaches none', () => {
    const h = hub();
    assert.equal(h.publish('open', {}), 0);
    assert.equal(h.connected(), 0);
  });

  test('openTimeline sends open {timeline, studio_id, opened_at} and answers TimelineOpened', async () => {
    const h = hub();
    const page = read(h.connect());
    const timeline = { id: '01J', revision: 3, tracks: {} };
    assert.deepEqual(h.openTimeline(timeline, 'paint'), { opened: true, surface: 'http://127.0.0.1:7380/editor/' });
    await tick();
    const open = page.events.find((e) => e.event === 'open')!;
    const data = JSON.parse(open.data);
    assert.deepEqual(Object.keys(data), ['timeline', 'studio_id', 'opened_at']);
    assert.deepEqual(data.timeline, timeline);
    assert.equal(data.studio_id, 'paint');
    assert.match(data.opened_at, RFC3339_MS);
    h.close();
  });

  test('openTimeline with no page connected is 501 unsupported, naming the surface', () => {
    const h = hub();
    assert.throws(
      () => h.openTimeline({}, 'paint'),
      (err: unknown) =>
        err instanceof ApiError && err.status === 501 && err.code === 'unsupported' && err.message.includes('http://127.0.0.1:7380/editor/'),
    );
  });

  test('isOpen: a sequence is open once its openTimeline reached a page; a 501 opens nothing; the newest MAX_OPENED are kept', () => {
    const h = hub();
    assert.throws(() => h.openTimeline({ id: 'never' }, 'paint'));
    assert.equal(h.isOpen('never'), false, 'a 501 opens nothing');
    const page = h.connect();
    page.resume();
    h.openTimeline({ id: 'first' }, 'paint');
    assert.equal(h.isOpen('first'), true);
    assert.equal(h.isOpen('other'), false);
    for (let i = 0; i < MAX_OPENED - 1; i++) h.openTimeline({ id: `t${i}` }, 'paint');
    h.openTimeline({ id: 'first' }, 'paint'); // re-opened: the newest again
    h.openTimeline({ id: 'one-more' }, 'paint');
    assert.equal(h.isOpen('first'), true, 're-opening made it the newest');
    assert.equal(h.isOpen('t0'), false, 'the one opened longest ago is forgotten');
    assert.equal(h.isOpen('t1'), true);
    assert.equal(h.isOpen('one-more'), true);
    h.close();
  });

  test('surfaceUrl reads the port when asked (it is known only once the service listens)', () => {
    let port = 0;
    const h = createEditorHub({ port: () => port });
    port = 45123;
    assert.equal(h.surfaceUrl(), 'http://127.0.0.1:45123/editor/');
  });

  test('a page that goes away is removed', async () => {
    const h = hub();
    const a = read(h.connect());
    read(h.connect());
    assert.equal(h.connected(), 2);
    a.body.destroy(); // what Koa does when the client disconnects
    await until(() => h.connected() === 1, 'the page to be removed');
    assert.equal(h.publish('open', {}), 1);
    h.close();
  });

  test('a page that does not read is dropped past the high-water mark; the others keep receiving', async () => {
    const highWater = 16 * 1024;
    const h = hub({ highWater });
    const slow = h.connect(); // never read
    let slowClosed = false;
    slow.once('close', () => (slowClosed = true));
    const fast = read(h.connect());
    const big = { blob: 'x'.repeat(4096) };
    let reachedAll = 0;
    for (let i = 0; i < 200; i++) {
      if (h.publish('open', big) === 2) reachedAll++;
      // What the slow page holds never passes the mark plus one frame.
      assert.ok(slow.destroyed || slow.writableLength + slow.readableLength <= highWater + 4200, `${slow.writableLength}`);
      await tick();
    }
    assert.ok(reachedAll < 200, 'the slow page was dropped at some point');
    await until(() => slowClosed, 'the slow page to be closed');
    assert.equal(h.connected(), 1);
    assert.equal(fast.events.filter((e) => e.event === 'open').length, 200, 'the reading page got every event');
    h.close();
  });

  test('events larger than the high-water mark still reach a page that reads (the mark bounds what is unread, not one event)', async () => {
    const highWater = 16 * 1024;
    const h = hub({ highWater });
    // Read the way Koa does: piped into a socket-like sink that takes a moment per chunk.
    const body = h.connect();
    let text = '';
    const sink = new Writable({
      highWaterMark: 1024,
      write(chunk: Buffer, _encoding, done) {
        text += chunk.toString('utf8');
        setImmediate(done);
      },
    });
    body.pipe(sink);
    await until(() => text.includes('event: hello'), 'hello');
    const big = { blob: 'y'.repeat(4 * highWater) };
    // Twice in a row: the second is written while the sink still holds the first.
    assert.equal(h.publish('open', big), 1, 'the page was dropped for the first large event');
    assert.equal(h.publish('open', big), 1, 'the page was dropped for the second large event');
    assert.equal(h.connected(), 1);
    await until(() => text.split('event: open').length === 3, 'both large events');
    h.close();
  });

  test('heartbeat comments keep a quiet stream alive', async () => {
    const h = hub({ heartbeatMs: 20 });
    const page = read(h.connect());
    await until(() => page.comments.filter((c) => c === 'heartbeat').length >= 2, 'two heartbeats');
    h.close();
  });

  test('close ends every stream (what is buffered is still sent) and a later connect ends at once', async () => {
    const h = hub();
    const a = read(h.connect());
    const b = read(h.connect());
    h.publish('open', { last: true });
    h.close();
    await Promise.all([a.ended, b.ended]);
    assert.equal(h.connected(), 0);
    for (const page of [a, b]) assert.deepEqual(page.events.map((e) => e.event), ['hello', 'open']);
    assert.equal(h.publish('open', {}), 0);
    const late = read(h.connect());
    await late.ended;
    assert.equal(h.connected(), 0);
  });

  test('an event name that would break the framing is refused', () => {
    const h = hub();
    for (const bad of ['', 'open\ndata: x', 'Open', 'with space', 'x'.repeat(65)]) {
      assert.throws(() => h.publish(bad, {}), TypeError, JSON.stringify(bad));
    }
  });
});
