import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  GESTURE_MS,
  isGesture,
  isLauncherFrame,
  isLoopbackHost,
  mayNavigate,
  mayOpenExternal,
  parseShellArgs,
  placeOf,
  popupTarget,
  studioPartition,
} from '../../main/rules';

/** The desktop shell's rules (main/rules.ts), as tables. */

const P = 7380;
const launcher = { kind: 'launcher' } as const;
const editor = { kind: 'editor' } as const;
const sketchpad = { kind: 'studio', id: 'sketchpad' } as const;

describe('placeOf', () => {
  const cases: Array<[string, unknown]> = [
    [`http://127.0.0.1:${P}/`, { kind: 'service', path: '/' }],
    [`http://localhost:${P}/editor/`, { kind: 'service', path: '/editor/' }],
    [`http://sketchpad.localhost:${P}/draw?x=1`, { kind: 'studio', id: 'sketchpad' }],
    [`http://Sketchpad.LOCALHOST:${P}/`, { kind: 'studio', id: 'sketchpad' }], // host names are case-insensitive
    [`http://x.localhost:${P}/`, { kind: 'other' }], // not a studio id (too short)
    [`http://a.b.localhost:${P}/`, { kind: 'other' }],
    // Loopback that is not the service's own origin: a studio's own server, another local program.
    [`http://sketchpad.localhost:${P + 1}/`, { kind: 'loopback' }],
    [`https://127.0.0.1:${P}/`, { kind: 'loopback' }],
    [`http://127.0.0.1:${P + 1}/`, { kind: 'loopback' }],
    ['http://localhost/', { kind: 'loopback' }],
    ['http://localhost.:8080/', { kind: 'loopback' }],
    ['http://a.b.localhost:9/', { kind: 'loopback' }],
    ['http://127.0.0.2:80/', { kind: 'loopback' }],
    ['http://127.1:3000/', { kind: 'loopback' }], // the parser reads it as 127.0.0.1
    ['http://2130706433/', { kind: 'loopback' }], // 127.0.0.1 as one number
    ['http://0x7f.0.0.1/', { kind: 'loopback' }],
    ['http://0.0.0.0:8080/', { kind: 'loopback' }],
    ['http://[::1]:7380/', { kind: 'loopback' }],
    ['http://[0:0:0:0:0:0:0:1]/', { kind: 'loopback' }],
    ['http://[::]/', { kind: 'loopback' }],
    ['http://[::ffff:127.0.0.1]:8000/', { kind: 'loopback' }],
    ['http://[::ffff:0.0.0.0]/', { kind: 'loopback' }],
    ['http://[::ffff:10.0.0.1]/', { kind: 'external' }],
    ['http://[2001:db8::1]/', { kind: 'external' }],
    ['http://128.0.0.1/', { kind: 'external' }],
    ['http://localhost.example.com/', { kind: 'external' }],
    ['http://mylocalhost/', { kind: 'external' }],
    [`http://user:pw@127.0.0.1:${P}/`, { kind: 'other' }],
    ['https://example.com/docs', { kind: 'external' }],
    ['file:///etc/passwd', { kind: 'other' }],
    ['javascript:alert(1)', { kind: 'other' }],
    ['data:text/html,<p>x', { kind: 'other' }],
    ['chrome://settings', { kind: 'other' }],
    ['not a url', { kind: 'other' }],
  ];
  for (const [url, place] of cases) test(url, () => assert.deepEqual(placeOf(url, P), place));
});

describe('mayNavigate', () => {
  const cases: Array<[typeof launcher | typeof editor | typeof sketchpad, string, boolean]> = [
    [launcher, `http://127.0.0.1:${P}/`, true],
    [launcher, `http://127.0.0.1:${P}/editor/`, true],
    [launcher, `http://sketchpad.localhost:${P}/`, false],
    [launcher, 'https://example.com/', false],
    [launcher, 'file:///etc/passwd', false],
    [editor, `http://127.0.0.1:${P}/editor/`, true],
    [editor, `http://127.0.0.1:${P}/`, false],
    [editor, `http://127.0.0.1:${P}/#gallery/01ARZ3NDEKTSV4RRFFQ69G5FAV`, false],
    [editor, `http://clipmaker.localhost:${P}/`, false],
    [sketchpad, `http://sketchpad.localhost:${P}/page`, true],
    [sketchpad, `http://clipmaker.localhost:${P}/`, false],
    [sketchpad, `http://127.0.0.1:${P}/`, false],
    [sketchpad, `http://127.0.0.1:${P}/api/v1/launcher/studios`, false],
    [sketchpad, `http://localhost:${P}/login?code=x`, false],
    [sketchpad, 'https://example.com/', false],
  ];
  for (const [kind, url, allowed] of cases) test(`${JSON.stringify(kind)} → ${url}: ${allowed}`, () => assert.equal(mayNavigate(kind, url, P), allowed));
});

describe('popupTarget (also what becomes of a refused navigation)', () => {
  test('the launcher opens any studio in its own window, the editor page in the editor window, external pages in the browser', () => {
    assert.deepEqual(popupTarget(launcher, `http://clipmaker.localhost:${P}/`, P), { to: 'studio', id: 'clipmaker', url: `http://clipmaker.localhost:${P}/` });
    assert.deepEqual(popupTarget(launcher, `http://127.0.0.1:${P}/editor/`, P), { to: 'editor' });
    assert.deepEqual(popupTarget(launcher, 'https://example.com/', P), { to: 'browser', url: 'https://example.com/' });
    assert.deepEqual(popupTarget(launcher, `http://127.0.0.1:${P}/`, P), { to: 'nowhere' });
    assert.deepEqual(popupTarget(launcher, 'file:///etc/passwd', P), { to: 'nowhere' });
  });
  test("a handoff's address opens the recipient's own window; a blank pop-up opens nothing, so the launcher page reserves none in the desktop app", () => {
    const receive = `http://clipmaker.localhost:${P}/receive?handoff=01ARZ3NDEKTSV4RRFFQ69G5FAV`;
    assert.deepEqual(popupTarget(launcher, receive, P), { to: 'studio', id: 'clipmaker', url: receive });
    for (const blank of ['about:blank', '', 'about:blank#x']) assert.deepEqual(popupTarget(launcher, blank, P), { to: 'nowhere' }, JSON.stringify(blank));
  });
  test('a studio opens only its own origin again; never another studio, the launcher or the editor', () => {
    assert.deepEqual(popupTarget(sketchpad, `http://sketchpad.localhost:${P}/b`, P), { to: 'studio', id: 'sketchpad', url: `http://sketchpad.localhost:${P}/b` });
    assert.deepEqual(popupTarget(sketchpad, `http://clipmaker.localhost:${P}/`, P), { to: 'nowhere' });
    assert.deepEqual(popupTarget(sketchpad, `http://127.0.0.1:${P}/`, P), { to: 'nowhere' });
    assert.deepEqual(popupTarget(sketchpad, `http://127.0.0.1:${P}/editor/`, P), { to: 'nowhere' });
    assert.deepEqual(popupTarget(sketchpad, 'https://example.com/', P), { to: 'browser', url: 'https://example.com/' });
  });
  test('no window hands a loopback address other than its own origin to the browser', () => {
    for (const from of [launcher, editor, sketchpad]) {
      for (const url of [`http://127.0.0.1:${P + 1}/`, 'http://localhost:3000/', `http://sketchpad.localhost:${P + 1}/`, 'http://[::1]/', 'http://0.0.0.0:8080/', `https://127.0.0.1:${P}/`]) {
        assert.deepEqual(popupTarget(from, url, P), { to: 'nowhere' }, `${from.kind} → ${url}`);
      }
    }
  });
  test("the editor page opens the launcher's page in the launcher window, external pages in the browser, nothing else", () => {
    const item = `http://127.0.0.1:${P}/#gallery/01ARZ3NDEKTSV4RRFFQ69G5FAV`;
    assert.deepEqual(popupTarget(editor, item, P), { to: 'launcher', url: item });
    assert.deepEqual(popupTarget(editor, `http://127.0.0.1:${P}/login?code=x`, P), { to: 'nowhere' });
    assert.deepEqual(popupTarget(editor, `http://sketchpad.localhost:${P}/`, P), { to: 'nowhere' });
    assert.deepEqual(popupTarget(editor, 'https://example.com/', P), { to: 'browser', url: 'https://example.com/' });
  });
});

test('isLauncherFrame: the service origin outside /editor/ only', () => {
  assert.equal(isLauncherFrame(`http://127.0.0.1:${P}/`, P), true);
  assert.equal(isLauncherFrame(`http://127.0.0.1:${P}/editor/`, P), false);
  assert.equal(isLauncherFrame(`http://sketchpad.localhost:${P}/`, P), false);
  assert.equal(isLauncherFrame(undefined, P), false);
});

test('studioPartition: persistent and one per studio', () => {
  assert.equal(studioPartition('sketchpad'), 'persist:studio-sketchpad');
  assert.notEqual(studioPartition('a1'), studioPartition('a2'));
});

describe('parseShellArgs', () => {
  test('defaults, values, Chromium switches passed through', () => {
    assert.deepEqual(parseShellArgs([]), { dataDir: null, port: null });
    assert.deepEqual(parseShellArgs(['--port', '0', '--data-dir', '/d', '--enable-logging']), { dataDir: '/d', port: 0 });
  });
  for (const bad of ['-1', '65536', '1.5', 'x', '']) {
    test(`--port ${JSON.stringify(bad)} is an error`, () => assert.throws(() => parseShellArgs(['--port', bad]), /--port must be a whole number/));
  }
});

test('isLoopbackHost takes the parser\'s host names', () => {
  for (const host of ['localhost', 'LOCALHOST'.toLowerCase(), 'x.localhost', 'localhost.', '127.0.0.1', '127.255.255.254', '0.0.0.0', '[::1]', '[::]', '[::ffff:7f00:1]']) {
    assert.equal(isLoopbackHost(host), true, host);
  }
  for (const host of ['example.com', '10.0.0.1', '192.168.1.1', '1.2.3.4', '[2001:db8::1]', '[::ffff:a00:1]', 'localhostx', 'xlocalhost']) {
    assert.equal(isLoopbackHost(host), false, host);
  }
});

describe('isGesture', () => {
  const cases: Array<[{ type: string; modifiers?: string[] }, boolean]> = [
    [{ type: 'mouseDown' }, true],
    [{ type: 'mouseUp' }, true],
    [{ type: 'keyDown' }, true],
    [{ type: 'rawKeyDown' }, true],
    [{ type: 'gestureTap' }, true],
    [{ type: 'touchEnd' }, true],
    [{ type: 'pointerDown' }, true],
    [{ type: 'keyDown', modifiers: ['isautorepeat'] }, false],
    [{ type: 'mouseMove' }, false],
    [{ type: 'mouseWheel' }, false],
    [{ type: 'mouseEnter' }, false],
    [{ type: 'keyUp' }, false],
    [{ type: 'char' }, false],
    [{ type: 'gestureScrollUpdate' }, false],
  ];
  for (const [input, expected] of cases) test(`${JSON.stringify(input)}: ${expected}`, () => assert.equal(isGesture(input), expected));
});

describe('mayOpenExternal: only just after a gesture, at most 1 a second and 5 a minute', () => {
  const T = 1_000_000;
  const cases: Array<[string, number | null, number[], number, boolean | RegExp]> = [
    ['no gesture ever', null, [], T, /no click/],
    ['a gesture just now', T - 10, [], T, true],
    ['a gesture at the limit', T - GESTURE_MS, [], T, true],
    ['a gesture too long ago', T - GESTURE_MS - 1, [], T, /no click/],
    ['a gesture in the future (clock stepped back)', T + 1000, [], T, /no click/],
    ['one opening 999 ms ago', T - 5, [T - 999], T, /more than 1 in 1 s/],
    ['one opening 1 s ago', T - 5, [T - 1000], T, true],
    ['four in the last minute', T - 5, [T - 50_000, T - 40_000, T - 30_000, T - 20_000], T, true],
    ['five in the last minute', T - 5, [T - 50_000, T - 40_000, T - 30_000, T - 20_000, T - 10_000], T, /more than 5 in 60 s/],
    ['five, the oldest a minute ago', T - 5, [T - 60_000, T - 40_000, T - 30_000, T - 20_000, T - 10_000], T, true],
  ];
  for (const [name, gesture, opened, now, expected] of cases) {
    test(name, () => {
      const verdict = mayOpenExternal(gesture, opened, now);
      if (expected === true) {
        assert.equal(verdict.ok, true);
        if (verdict.ok) assert.deepEqual(verdict.opened, [...opened.filter((t) => now - t < 60_000), now]);
      } else {
        assert.equal(verdict.ok, false);
        if (!verdict.ok) assert.match(verdict.reason, expected as RegExp);
      }
    });
  }
});
