import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isLauncherFrame, mayNavigate, parseShellArgs, placeOf, popupTarget, studioPartition } from '../../main/rules';

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
    [`http://sketchpad.localhost:${P + 1}/`, { kind: 'external' }], // another port is not ours
    [`https://127.0.0.1:${P}/`, { kind: 'external' }],
    [`http://127.0.0.1:${P + 1}/`, { kind: 'external' }],
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
  test('a studio opens only its own origin again; never another studio, the launcher or the editor', () => {
    assert.deepEqual(popupTarget(sketchpad, `http://sketchpad.localhost:${P}/b`, P), { to: 'studio', id: 'sketchpad', url: `http://sketchpad.localhost:${P}/b` });
    assert.deepEqual(popupTarget(sketchpad, `http://clipmaker.localhost:${P}/`, P), { to: 'nowhere' });
    assert.deepEqual(popupTarget(sketchpad, `http://127.0.0.1:${P}/`, P), { to: 'nowhere' });
    assert.deepEqual(popupTarget(sketchpad, `http://127.0.0.1:${P}/editor/`, P), { to: 'nowhere' });
    assert.deepEqual(popupTarget(sketchpad, 'https://example.com/', P), { to: 'browser', url: 'https://example.com/' });
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
