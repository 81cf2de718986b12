import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mergeByTime } from '../../renderer/lib/merge';
import { isFullPath, pathAdvice, type ExampleRef } from '../../renderer/launcher/path-advice';

/**
 * What the launcher's install field says about a typed path
 * (renderer/launcher/path-advice.ts), and the merge by time of a list read
 * into what events said (renderer/lib/merge.ts): tables of input and answer.
 */

const EXAMPLES: ExampleRef[] = [
  { id: 'clipmaker', name: 'Clipmaker', source: '/opt/backlot/examples/studios/clipmaker' },
  { id: 'sketchpad', name: 'Sketchpad', source: '/opt/backlot/examples/studios/sketchpad' },
];

test('full paths pass; relative ones get what to type; an example is offered by its folder or its id', () => {
  const rows: [string, string, RegExp | null][] = [
    ['/home/me/studio', 'ok', null],
    ['C:\\Users\\me\\studio', 'ok', null],
    ['\\\\server\\share\\studio', 'ok', null],
    ['', 'ok', null],
    ['examples/studios/sketchpad', 'example:sketchpad', /is the Sketchpad example that comes with Backlot.*\/opt\/backlot\/examples\/studios\/sketchpad$/],
    ['./examples/studios/clipmaker/', 'example:clipmaker', /Clipmaker example/],
    ['backlot\\examples\\studios\\sketchpad', 'example:sketchpad', /Sketchpad/],
    ['sketchpad', 'example:sketchpad', /Sketchpad/],
    ['my/sketchpad', 'relative', /Type the full path of the folder that holds backlot\.json, starting with “\/”, like \/opt\/backlot\/examples\/studios\/clipmaker$/],
    ['studios/painter', 'relative', /starting with “\/”/],
    ['~/studios/painter', 'relative', /does not expand “~”/],
  ];
  for (const [typed, kind, message] of rows) {
    const a = pathAdvice(typed, EXAMPLES);
    assert.equal(a.kind === 'example' ? `example:${a.example.id}` : a.kind, kind, typed);
    if (message) assert.match((a as { message: string }).message, message, typed);
  }
  assert.match((pathAdvice('a/b', []) as { message: string }).message, /like \/home\/you\/studios\/my-studio$/);
  assert.equal(isFullPath('relative'), false);
});

test('a list read replaces only what is not newer than the known record', () => {
  const known = new Map([
    ['a', { id: 'a', updated_at: '2026-01-01T00:00:02.000Z', v: 'event' }],
    ['b', { id: 'b', updated_at: '2026-01-01T00:00:01.000Z', v: 'old' }],
  ]);
  const changed = mergeByTime(known, [
    { id: 'a', updated_at: '2026-01-01T00:00:01.000Z', v: 'list' },
    { id: 'b', updated_at: '2026-01-01T00:00:01.000Z', v: 'same time' },
    { id: 'c', updated_at: '2026-01-01T00:00:00.000Z', v: 'new' },
  ]);
  assert.deepEqual(changed, ['b', 'c']);
  assert.deepEqual([...known.values()].map((x) => x.v), ['event', 'same time', 'new']);
});
