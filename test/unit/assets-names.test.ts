import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { clashName, extensionOf, MAX_NAME_BYTES, sanitizeFilename } from '../../service/assets/filename';
import { extensionForMime, mimeForExtension, mimeForImageFormat, parseContentType } from '../../service/assets/mime';

/** Library file names and media types of assets, as tables. */

describe('sanitizeFilename', () => {
  const rows: [string, string | null][] = [
    ['photo.jpg', 'photo.jpg'],
    ['My Photo (1).PNG', 'My Photo (1).PNG'],
    ['dir/sub/photo.jpg', 'photo.jpg'],
    ['C:\\Users\\x\\photo.jpg', 'photo.jpg'],
    ['../../etc/passwd', 'passwd'],
    ['..', null],
    ['.', null],
    ['...', null],
    ['/', null],
    ['', null],
    ['.hidden', 'hidden'],
    ['name.', 'name'],
    ['  spaced  ', 'spaced'],
    ['a\u0000b\nc.txt', 'a_b_c.txt'],
    ['a<b>c:d"e|f?g*h.txt', 'a_b_c_d_e_f_g_h.txt'],
    ['CON', '_CON'],
    ['nul.txt', '_nul.txt'],
    ['console.txt', 'console.txt'],
    ['\u0001\u0002', null],
    ['e\u0301.txt', '\u00e9.txt'],
  ];
  for (const [raw, expected] of rows) {
    test(`${JSON.stringify(raw)} -> ${JSON.stringify(expected)}`, () => assert.equal(sanitizeFilename(raw), expected));
  }
  test('a long name is cut to MAX_NAME_BYTES, keeping the extension and whole characters', () => {
    const out = sanitizeFilename(`${'é'.repeat(300)}.jpeg`)!;
    assert.ok(Buffer.byteLength(out) <= MAX_NAME_BYTES, out);
    assert.ok(out.endsWith('.jpeg'));
    assert.ok(!out.includes('\uFFFD'));
  });
});

describe('extensionOf and clashName', () => {
  const ext: [string, string][] = [
    ['a.PNG', '.png'],
    ['a.tar.gz', '.gz'],
    ['noext', ''],
    ['.png', ''],
    ['a.verylongextension', ''],
    ['a.mp4', '.mp4'],
  ];
  for (const [name, expected] of ext) test(`extensionOf(${name}) = ${JSON.stringify(expected)}`, () => assert.equal(extensionOf(name), expected));
  const clash: [string, number, string][] = [
    ['a.png', 1, 'a.png'],
    ['a.png', 2, 'a (2).png'],
    ['a.png', 10, 'a (10).png'],
    ['noext', 3, 'noext (3)'],
    ['a.tar.gz', 2, 'a.tar (2).gz'],
  ];
  for (const [name, n, expected] of clash) test(`clashName(${name}, ${n}) = ${expected}`, () => assert.equal(clashName(name, n), expected));
});

describe('media types', () => {
  const byMime: [string, string][] = [
    ['image/jpeg', '.jpg'],
    ['image/png', '.png'],
    ['video/mp4', '.mp4'],
    ['audio/mpeg', '.mp3'],
    ['audio/x-wav', '.wav'],
    ['application/x-unknown', '.bin'],
  ];
  for (const [mime, ext] of byMime) test(`extensionForMime(${mime}) = ${ext}`, () => assert.equal(extensionForMime(mime), ext));
  test('mimeForExtension', () => {
    assert.equal(mimeForExtension('.JPG'), 'image/jpeg');
    assert.equal(mimeForExtension('.webm'), 'video/webm');
    assert.equal(mimeForExtension('.nope'), null);
    assert.equal(mimeForExtension(''), null);
  });
  test('mimeForImageFormat', () => {
    assert.equal(mimeForImageFormat('jpeg'), 'image/jpeg');
    assert.equal(mimeForImageFormat('heif'), 'image/heif');
    assert.equal(mimeForImageFormat('svg'), 'image/svg+xml');
    assert.equal(mimeForImageFormat('raw'), null);
    assert.equal(mimeForImageFormat(undefined), null);
  });
  const types: [string | undefined, string | null][] = [
    [undefined, null],
    ['image/PNG', 'image/png'],
    ['text/plain; charset=utf-8', 'text/plain'],
    ['application/octet-stream', null],
    ['garbage', null],
    ['a/b/c', null],
    ['', null],
    ['video/mp4 ; codecs="avc1"', 'video/mp4'],
  ];
  for (const [header, expected] of types) {
    test(`parseContentType(${JSON.stringify(header)}) = ${JSON.stringify(expected)}`, () => assert.equal(parseContentType(header), expected));
  }
});
