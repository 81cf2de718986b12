import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { attachmentDisposition, isInlineSafe, storedFileHeaders, STORED_FILE_HEADERS } from '../../service/assets/serving';

/** service/assets/serving.ts: which stored types may show inline, and the headers of every stored file. */

describe('stored file headers', () => {
  test('only types a browser can only show are inline', () => {
    for (const mime of ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/bmp', 'image/tiff', 'image/heif', 'video/mp4', 'video/x-matroska', 'video/quicktime', 'audio/mpeg', 'audio/wav', 'audio/x-wav', 'text/plain', 'application/json']) {
      assert.equal(isInlineSafe(mime), true, mime);
    }
    for (const mime of [
      'image/svg+xml', 'text/html', 'application/xhtml+xml', 'text/xml', 'application/xml', 'application/rss+xml', 'application/atom+xml',
      'application/xslt+xml', 'application/mathml+xml', 'image/svg', 'video/x-test+xml', 'audio/html', 'application/pdf',
      'application/octet-stream', 'application/javascript', 'text/javascript', 'text/css', 'multipart/x-mixed-replace', 'model/gltf-binary',
      'image/x-unknown', 'text/csv', 'nonsense', '',
    ]) {
      assert.equal(isInlineSafe(mime), false, mime);
    }
  });

  test('attachment names: an ASCII fallback without quotes or backslashes, and the UTF-8 name percent-encoded', () => {
    assert.equal(attachmentDisposition('a.svg'), `attachment; filename="a.svg"; filename*=UTF-8''a.svg`);
    assert.equal(attachmentDisposition('ü "x"\\y%.html'), `attachment; filename="_ _x__y_.html"; filename*=UTF-8''%C3%BC%20%22x%22%5Cy%25.html`);
    assert.equal(attachmentDisposition("it's (1).xml"), `attachment; filename="it's (1).xml"; filename*=UTF-8''it%27s%20%281%29.xml`);
  });

  test('every stored file: nosniff and the sandbox; attachment only when not inline-safe', () => {
    assert.deepEqual(STORED_FILE_HEADERS, { 'X-Content-Type-Options': 'nosniff', 'Content-Security-Policy': "default-src 'none'; sandbox" });
    assert.deepEqual(storedFileHeaders('image/png', 'a.png'), { ...STORED_FILE_HEADERS });
    assert.deepEqual(storedFileHeaders('image/svg+xml', 'a.svg'), { ...STORED_FILE_HEADERS, 'Content-Disposition': attachmentDisposition('a.svg') });
  });
});
