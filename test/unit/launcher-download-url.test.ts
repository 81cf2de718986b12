import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  describeUrl,
  DownloadUrlError,
  parseContentRange,
  parseDownloadUrl,
  resolveDownloadTarget,
  type BlockedReason,
} from '../../service/launcher/download-url';

/** Where a manifest download may come from and land (docs/studios.md "Downloads"; else 422 `blocked`), as tables. */

const SOURCE = '/home/u/studios/painter';
const APP = '/data/studios/painter/app';

type Refused = { refused: BlockedReason };

describe('parseDownloadUrl', () => {
  const rows: [string, { http: string } | { file: string } | Refused][] = [
    ['https://example.com/w.bin', { http: 'https://example.com/w.bin' }],
    ['http://127.0.0.1:8080/a/b?x=1', { http: 'http://127.0.0.1:8080/a/b?x=1' }],
    ['HTTPS://Example.COM/w.bin', { http: 'https://example.com/w.bin' }],
    ['file:///opt/models/w.bin', { file: '/opt/models/w.bin' }],
    ['file://localhost/opt/w.bin', { file: '/opt/w.bin' }],
    ['file:/opt/w.bin', { file: '/opt/w.bin' }],
    ['file:///opt/my%20w.bin', { file: '/opt/my w.bin' }],
    ['FILE:models/w.bin', { file: `${SOURCE}/models/w.bin` }],
    // relative file: URLs resolve against the source folder and stay inside it
    ['file:w.bin', { file: `${SOURCE}/w.bin` }],
    ['file:./models/w.bin', { file: `${SOURCE}/models/w.bin` }],
    ['file:models/../w.bin', { file: `${SOURCE}/w.bin` }],
    ['file:my%20w.bin', { file: `${SOURCE}/my w.bin` }],
    ['file:..', { refused: 'escapes' }],
    ['file:../w.bin', { refused: 'escapes' }],
    ['file:models/../../w.bin', { refused: 'escapes' }],
    ['file:%2e%2e/w.bin', { refused: 'escapes' }],
    ['file:.', { refused: 'escapes' }],
    ['file:models/..', { refused: 'escapes' }],
    ['file:', { refused: 'invalid' }],
    ['file:a%2Fb', { refused: 'invalid' }],
    ['file:a\\b', { refused: 'invalid' }],
    ['file:w.bin?x', { refused: 'invalid' }],
    ['file:w.bin#x', { refused: 'invalid' }],
    ['file:w%zz.bin', { refused: 'invalid' }],
    ['file:w%00.bin', { refused: 'invalid' }],
    ['file://other-host/w.bin', { refused: 'invalid' }],
    ['file:///opt/a%2fb', { refused: 'invalid' }],
    // other schemes, or none
    ['ftp://example.com/w.bin', { refused: 'scheme' }],
    ['data:,hello', { refused: 'scheme' }],
    ['javascript:alert(1)', { refused: 'scheme' }],
    ['w.bin', { refused: 'scheme' }],
    ['/abs/w.bin', { refused: 'scheme' }],
    ['//example.com/w.bin', { refused: 'scheme' }],
    ['', { refused: 'scheme' }],
    ['https://', { refused: 'invalid' }],
    ['http://exa mple.com/', { refused: 'invalid' }],
    ['https://example.com/\0', { refused: 'invalid' }],
  ];
  for (const [url, expected] of rows) {
    test(`${JSON.stringify(url)} -> ${JSON.stringify(expected)}`, () => {
      if ('refused' in expected) {
        assert.throws(() => parseDownloadUrl(url, SOURCE), (err: unknown) => {
          assert.ok(err instanceof DownloadUrlError);
          assert.equal(err.member, 'url');
          assert.equal(err.reason, expected.refused);
          return true;
        });
        return;
      }
      const got = parseDownloadUrl(url, SOURCE);
      if ('http' in expected) assert.deepEqual(got.kind === 'http' ? got.url.href : got, expected.http);
      else assert.deepEqual(got, { kind: 'file', path: expected.file });
    });
  }
});

describe('resolveDownloadTarget', () => {
  const rows: [string, string | Refused][] = [
    ['w.bin', `${APP}/w.bin`],
    ['models/w.bin', `${APP}/models/w.bin`],
    ['./models//w.bin', `${APP}/models/w.bin`],
    ['models/../w.bin', `${APP}/w.bin`],
    ['a/b/../../w.bin', `${APP}/w.bin`],
    ['..w.bin', `${APP}/..w.bin`],
    ['', { refused: 'empty' }],
    ['.', { refused: 'empty' }],
    ['models/..', { refused: 'empty' }],
    ['/etc/passwd', { refused: 'absolute' }],
    [`${APP}/w.bin`, { refused: 'absolute' }],
    ['..', { refused: 'escapes' }],
    ['../w.bin', { refused: 'escapes' }],
    ['../app/w.bin', { refused: 'escapes' }],
    ['models/../../w.bin', { refused: 'escapes' }],
    ['a/../../app/w.bin', { refused: 'escapes' }],
    ['models/', { refused: 'invalid' }],
    ['models\\w.bin', { refused: 'invalid' }],
    ['w\0.bin', { refused: 'invalid' }],
  ];
  for (const [to, expected] of rows) {
    test(`${JSON.stringify(to)} -> ${JSON.stringify(expected)}`, () => {
      if (typeof expected === 'string') {
        assert.equal(resolveDownloadTarget(APP, to), expected);
        return;
      }
      assert.throws(() => resolveDownloadTarget(APP, to), (err: unknown) => {
        assert.ok(err instanceof DownloadUrlError);
        assert.equal(err.member, 'to');
        assert.equal(err.reason, expected.refused);
        return true;
      });
    });
  }

  test('an app folder given with a trailing slash', () => {
    assert.equal(resolveDownloadTarget(`${APP}/`, 'w.bin'), `${APP}/w.bin`);
  });
});

describe('parseContentRange', () => {
  const rows: [string | undefined, { start: number; total: number } | null][] = [
    ['bytes 100-199/200', { start: 100, total: 200 }],
    ['bytes 0-0/1', { start: 0, total: 1 }],
    ['BYTES 5-9/*', { start: 5, total: 0 }],
    [' bytes 5-9/10 ', { start: 5, total: 10 }],
    ['bytes 68719476736-68719476799/68719476800', { start: 68719476736, total: 68719476800 }],
    [undefined, null],
    ['', null],
    ['bytes */200', null],
    ['bytes 9-5/10', null],
    ['bytes 5-10/10', null],
    ['bytes 5-/10', null],
    ['items 0-1/2', null],
    ['bytes 0-1/2, 3-4/5', null],
    ['bytes 0-99999999999999999999/*', null],
  ];
  for (const [header, expected] of rows) {
    test(`${JSON.stringify(header)} -> ${JSON.stringify(expected)}`, () => assert.deepEqual(parseContentRange(header), expected));
  }
});

describe('describeUrl keeps credentials and queries out of logs', () => {
  const rows: [string, string][] = [
    ['https://example.com/w.bin', 'https://example.com/w.bin'],
    ['https://user:secret@example.com:8443/a/w.bin', 'https://example.com:8443/a/w.bin'],
    ['https://example.com/w.bin?X-Amz-Signature=abc#frag', 'https://example.com/w.bin?…'],
  ];
  for (const [url, expected] of rows) {
    test(url, () => assert.equal(describeUrl(new URL(url)), expected));
  }
});
