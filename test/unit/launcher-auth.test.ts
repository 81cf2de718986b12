import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, test } from 'node:test';
import {
  authenticate,
  authenticateLauncher,
  generateLauncherCredential,
  generateToken,
  hashToken,
  isLauncherCredential,
  type LauncherResolver,
  type TokenResolver,
} from '../../service/core/auth';

/**
 * The two credentials and their checks (docs/api.md "Authentication and capabilities", "The launcher credential"), with stores that
 * know exactly one credential of each kind: neither check accepts the other
 * kind, whatever the stores hold.
 */

const launcher = generateLauncherCredential();
const token = generateToken();
const unauthenticated = { name: 'ApiError', status: 401, code: 'unauthenticated' };

/** Knows `launcher` and, to prove the prefix check comes first, also `token`'s hash. */
const launcherStore: LauncherResolver = (hash) =>
  hash.equals(hashToken(launcher)) || hash.equals(hashToken(token)) ? Buffer.from(hash) : null;
/** Knows `token` and, likewise, `launcher`'s hash. */
const tokenStore: TokenResolver = (hash) =>
  hash.equals(hashToken(token)) || hash.equals(hashToken(launcher)) ? { hash: Buffer.from(hash), studioId: 'paint', capabilities: ['kv'] } : null;

describe('launcher credential', () => {
  test('is its prefix and at least 32 random bytes, different every time', () => {
    assert.match(launcher, /^bl_launcher_[A-Za-z0-9_-]{43}$/);
    assert.ok(Buffer.from(launcher.slice('bl_launcher_'.length), 'base64url').length >= 32);
    assert.notEqual(generateLauncherCredential(), launcher);
    assert.equal(isLauncherCredential(launcher), true);
    assert.equal(isLauncherCredential(token), false);
  });

  test('a good credential passes', () => {
    assert.deepEqual(authenticateLauncher(`Bearer ${launcher}`, launcherStore), { kind: 'launcher' });
  });

  const refused: [string, string | undefined][] = [
    ['no header', undefined],
    ['empty header', ''],
    ['not Bearer', `Basic ${launcher}`],
    ['a studio token', `Bearer ${token}`],
    ['garbage', 'Bearer garbage'],
    ['unknown credential of the right form', `Bearer ${generateLauncherCredential()}`],
    ['the credential cut short', `Bearer ${launcher.slice(0, -1)}`],
  ];
  for (const [name, header] of refused) {
    test(`${name}: 401 unauthenticated`, () => {
      assert.throws(() => authenticateLauncher(header, launcherStore), unauthenticated);
    });
  }

  test('a stored hash that does not match (a faulty store) is refused', () => {
    assert.throws(() => authenticateLauncher(`Bearer ${launcher}`, () => Buffer.alloc(32)), unauthenticated);
    assert.throws(() => authenticateLauncher(`Bearer ${launcher}`, () => Buffer.alloc(3)), unauthenticated);
  });

  test('both checks compare the stored hash in constant time (crypto.timingSafeEqual), never with == or equals', (t) => {
    const calls: [Buffer, Buffer][] = [];
    const real = crypto.timingSafeEqual;
    // The compiled module reads crypto.timingSafeEqual at each call, so the spy sees it.
    t.mock.method(crypto, 'timingSafeEqual', (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
      calls.push([Buffer.from(a.buffer, a.byteOffset, a.byteLength), Buffer.from(b.buffer, b.byteOffset, b.byteLength)]);
      return real(a, b);
    });
    authenticateLauncher(`Bearer ${launcher}`, launcherStore);
    authenticate(`Bearer ${token}`, tokenStore);
    assert.equal(calls.length, 2);
    assert.deepEqual(calls[0], [hashToken(launcher), hashToken(launcher)]);
    assert.deepEqual(calls[1], [hashToken(token), hashToken(token)]);
  });

  test('the studio check refuses a launcher credential, the launcher check a studio token', () => {
    assert.equal(authenticate(`Bearer ${token}`, tokenStore).studioId, 'paint');
    assert.throws(() => authenticate(`Bearer ${launcher}`, tokenStore), {
      ...unauthenticated,
      message: 'A launcher credential does not open the studio data API; send a studio token.',
    });
    assert.throws(() => authenticateLauncher(`Bearer ${token}`, launcherStore), unauthenticated);
  });
});
