import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { authenticate, createTokenGrants, generateLauncherCredential, generateToken, hashToken, type TokenGrant } from '../../service/core/auth';
import { ApiError } from '../../service/core/errors';

/**
 * The in-memory grants of studio tokens (docs/design.md "Token grants in
 * memory"): a known token costs no lookup; any change elsewhere or a
 * revocation here empties them, and only tokens whose hash matched are kept.
 */

function fixture() {
  const live = new Map<string, TokenGrant>();
  let lookups = 0;
  let changed = false;
  const grants = createTokenGrants(
    (hash) => {
      lookups++;
      return live.get(hash.toString('hex')) ?? null;
    },
    () => {
      const was = changed;
      changed = false;
      return was;
    },
  );
  const issue = (studioId: string, capabilities: string[]) => {
    const token = generateToken();
    const hash = hashToken(token);
    live.set(hash.toString('hex'), { hash, studioId, capabilities });
    return token;
  };
  const revoke = (token: string) => live.delete(hashToken(token).toString('hex'));
  return { grants, issue, revoke, lookups: () => lookups, changeElsewhere: () => (changed = true) };
}

const unauthenticated = (err: unknown) => err instanceof ApiError && err.status === 401 && err.code === 'unauthenticated';

describe('token grants in memory', () => {
  test('a known token is answered from memory: one lookup for many requests, the same principal', () => {
    const f = fixture();
    const token = f.issue('alpha', ['kv']);
    const first = authenticate(`Bearer ${token}`, f.grants);
    for (let i = 0; i < 100; i++) assert.equal(authenticate(`Bearer ${token}`, f.grants), first);
    assert.equal(f.lookups(), 1);
    assert.deepEqual({ studioId: first.studioId, caps: [...first.capabilities] }, { studioId: 'alpha', caps: ['kv'] });
    assert.ok(Object.isFrozen(first));
  });

  test('a commit by another connection empties them: a token revoked there is refused on the next request', () => {
    const f = fixture();
    const token = f.issue('alpha', ['kv']);
    const other = f.issue('alpha', ['kv']);
    authenticate(`Bearer ${token}`, f.grants);
    authenticate(`Bearer ${other}`, f.grants);
    f.revoke(token);
    // Not yet told: the remembered grant still answers (this is what changedElsewhere is for).
    authenticate(`Bearer ${token}`, f.grants);
    f.changeElsewhere();
    assert.throws(() => authenticate(`Bearer ${token}`, f.grants), unauthenticated);
    assert.equal(authenticate(`Bearer ${other}`, f.grants).studioId, 'alpha', 'a live token is resolved again');
  });

  test('clear() (a revocation in this process) empties them at once', () => {
    const f = fixture();
    const token = f.issue('alpha', ['kv']);
    authenticate(`Bearer ${token}`, f.grants);
    f.revoke(token);
    f.grants.clear();
    assert.throws(() => authenticate(`Bearer ${token}`, f.grants), unauthenticated);
  });

  test('unknown tokens and launcher credentials are never remembered', () => {
    const f = fixture();
    const unknown = generateToken();
    for (let i = 0; i < 3; i++) assert.throws(() => authenticate(`Bearer ${unknown}`, f.grants), unauthenticated);
    assert.equal(f.lookups(), 3, 'each unknown token is looked up again');
    const credential = generateLauncherCredential();
    assert.throws(() => authenticate(`Bearer ${credential}`, f.grants), /launcher credential does not open/);
    assert.equal(f.grants.principal(credential), null);
    assert.equal(f.lookups(), 3, 'a launcher credential is refused by its prefix, never looked up');
  });
});
