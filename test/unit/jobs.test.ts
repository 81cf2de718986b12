import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError } from '../../service/core/errors';
import { cutLine, splitLines } from '../../service/jobs/logs';
import { formatComment, formatEvent, parseLastEventId } from '../../service/core/sse';
import { checkTransition, JOB_STATES, progressProblem, type JobState, type TransitionVerdict } from '../../service/jobs/states';
import type { JobRow } from '../../service/jobs/store';
import { applyTaskUpdate, newTaskRow, requestTaskCancel } from '../../service/jobs/task';
import { SseParser, type SseMessage } from '../helpers/sse';

/** The pure parts of jobs: the state table, progress, task rules, log lines, SSE framing. */

describe('task state table', () => {
  // Every (from, to) pair: what a PATCH with `state: to` on a job in `from` is.
  const expected: Record<JobState, Record<JobState | 'absent', TransitionVerdict>> = {
    queued: { absent: 'unchanged', queued: 'unchanged', running: 'allowed', succeeded: 'allowed', failed: 'allowed', cancelled: 'allowed' },
    running: { absent: 'unchanged', queued: 'conflict', running: 'unchanged', succeeded: 'allowed', failed: 'allowed', cancelled: 'allowed' },
    succeeded: { absent: 'finished', queued: 'finished', running: 'finished', succeeded: 'finished', failed: 'finished', cancelled: 'finished' },
    failed: { absent: 'finished', queued: 'finished', running: 'finished', succeeded: 'finished', failed: 'finished', cancelled: 'finished' },
    cancelled: { absent: 'finished', queued: 'finished', running: 'finished', succeeded: 'finished', failed: 'finished', cancelled: 'finished' },
  };
  for (const from of JOB_STATES) {
    for (const to of [...JOB_STATES, 'absent'] as const) {
      test(`${from} -> ${to}: ${expected[from][to]}`, () => {
        assert.equal(checkTransition(from, to === 'absent' ? undefined : to), expected[from][to]);
      });
    }
  }
});

describe('progress rules', () => {
  const rows: [number, number, boolean][] = [
    [0, 0, true],
    [5, 0, true], // indeterminate: no bound
    [3, 10, true],
    [10, 10, true],
    [11, 10, false],
    [-1, 10, false],
    [1, -1, false],
    [1.5, 10, false],
    [Number.MAX_SAFE_INTEGER + 2, 0, false],
  ];
  for (const [num, den, ok] of rows) {
    test(`${num}/${den} is ${ok ? 'fine' : 'refused'}`, () => assert.equal(progressProblem(num, den) === null, ok));
  }
});

const base = (over: Partial<JobRow> = {}): JobRow => ({
  ...newTaskRow({ id: '01J00000000000000000000000', studioId: 'alpha', now: '2026-01-01T00:00:00.000Z' }, { title: 't' }),
  ...over,
});
const NOW = '2026-01-02T00:00:00.000Z';

function throwsCode(fn: () => unknown, status: number, code: string): void {
  assert.throws(fn, (err: unknown) => err instanceof ApiError && err.status === status && err.code === code);
}

describe('task rules', () => {
  test('create starts running, or queued when asked', () => {
    assert.equal(base().state, 'running');
    assert.equal(newTaskRow({ id: 'x', studioId: 's', now: NOW }, { title: 't', state: 'queued' }).state, 'queued');
    assert.equal(newTaskRow({ id: 'x', studioId: 's', now: NOW }, { title: 't', state: 'running' }).state, 'running');
  });
  test('create with progress over the denominator is 400', () =>
    throwsCode(() => newTaskRow({ id: 'x', studioId: 's', now: NOW }, { title: 't', progress_num: 2, progress_den: 1 }), 400, 'bad_request'));
  test('the kind is checked before the state: a finished export job is 403', () =>
    throwsCode(() => applyTaskUpdate(base({ kind: 'export', state: 'succeeded' }), { title: 'x' }, NOW), 403, 'not_a_task'));
  test('a finished task job is 409 job_finished, whatever the change', () =>
    throwsCode(() => applyTaskUpdate(base({ state: 'failed' }), {}, NOW), 409, 'job_finished'));
  test('running to queued is 409 conflict', () => throwsCode(() => applyTaskUpdate(base(), { state: 'queued' }, NOW), 409, 'conflict'));
  test('progress is checked against the merged values', () => {
    const row = applyTaskUpdate(base(), { progress_den: 10 }, NOW);
    throwsCode(() => applyTaskUpdate(row, { progress_num: 11 }, NOW), 400, 'bad_request');
    throwsCode(() => applyTaskUpdate({ ...row, progress_num: 8 }, { progress_den: 5 }, NOW), 400, 'bad_request');
  });
  test('last_error null clears; absent keeps', () => {
    const withError = applyTaskUpdate(base(), { last_error: 'boom' }, NOW);
    assert.equal(withError.last_error, 'boom');
    assert.equal(applyTaskUpdate(withError, { title: 'x' }, NOW).last_error, 'boom');
    assert.equal(applyTaskUpdate(withError, { last_error: null }, NOW).last_error, null);
  });
  test('finishing sets finished_at; data merges and null empties it', () => {
    const a = applyTaskUpdate(base({ data: '{"a":1,"b":{"c":2}}' }), { data: { b: { c: null, d: 3 } }, state: 'succeeded' }, NOW);
    assert.equal(a.finished_at, NOW);
    assert.deepEqual(JSON.parse(a.data), { a: 1, b: { d: 3 } });
    assert.equal(applyTaskUpdate(base({ data: '{"a":1}' }), { data: null }, NOW).data, '{}');
  });
  test('cancel records the first request time and keeps the state', () => {
    const once = requestTaskCancel(base({ state: 'queued' }), NOW);
    assert.equal(once.state, 'queued');
    assert.equal(once.cancel_requested_at, NOW);
    assert.equal(requestTaskCancel(once, '2026-01-03T00:00:00.000Z').cancel_requested_at, NOW);
    throwsCode(() => requestTaskCancel(base({ state: 'cancelled' }), NOW), 409, 'job_finished');
    throwsCode(() => requestTaskCancel(base({ kind: 'install' }), NOW), 403, 'not_a_task');
  });
});

describe('log lines', () => {
  const rows: [string[], string[]][] = [
    [['a'], ['a']],
    [['a\nb'], ['a', 'b']],
    [['a\r\nb\rc'], ['a', 'b', 'c']],
    [['a\n'], ['a']],
    [['a\n\n'], ['a', '']],
    [[''], ['']],
    [['\n'], ['']],
    [['x', 'y\nz'], ['x', 'y', 'z']],
  ];
  for (const [given, lines] of rows) test(`split ${JSON.stringify(given)}`, () => assert.deepEqual(splitLines(given), lines));
  test('cutLine keeps characters whole', () => {
    assert.deepEqual(cutLine('abcdef', 4), ['abcd', 'ef']);
    assert.deepEqual(cutLine('ééé', 4), ['éé', 'é']);
    assert.deepEqual(cutLine('ab', 4), ['ab']);
  });
});

describe('SSE framing, read back by the test parser', () => {
  const parse = (text: string, chunk = text.length) => {
    const events: SseMessage[] = [];
    const comments: string[] = [];
    const p = new SseParser((m) => events.push(m), (c) => comments.push(c));
    for (let i = 0; i < text.length; i += chunk) p.feed(text.slice(i, i + chunk));
    return { events, comments };
  };
  test('event, id and data round-trip', () => {
    const { events } = parse(formatEvent({ event: 'line', id: 7, data: '{"n":7}' }));
    assert.deepEqual(events, [{ event: 'line', id: '7', data: '{"n":7}' }]);
  });
  test('multi-line data becomes several data fields and joins back', () => {
    const text = formatEvent({ event: 'x', data: 'a\nb\r\nc' });
    assert.equal(text, 'event: x\ndata: a\ndata: b\ndata: c\n\n');
    assert.equal(parse(text, 1).events[0]!.data, 'a\nb\nc');
  });
  test('comments are not events', () => {
    const { events, comments } = parse(formatComment('heartbeat') + formatEvent({ event: 'e', data: 'd' }), 3);
    assert.deepEqual(comments, ['heartbeat']);
    assert.equal(events.length, 1);
  });
  test('CRLF line ends split across chunks', () => {
    const { events } = parse('event: a\r\ndata: 1\r\n\r\nevent: b\r\ndata: 2\r\n\r\n', 1);
    assert.deepEqual(events.map((e) => e.event + e.data), ['a1', 'b2']);
  });
  const ids: [string | undefined, number][] = [[undefined, 0], ['5', 5], [' 12 ', 12], ['-1', 0], ['abc', 0], ['1.5', 0]];
  for (const [header, n] of ids) test(`Last-Event-ID ${JSON.stringify(header)} -> ${n}`, () => assert.equal(parseLastEventId(header), n));
});
