import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkRequestSource, requireServiceOrigin, type RequestSource } from '../../service/core/origin';

const PORT = 47110;
const badOrigin = { name: 'ApiError', status: 403, code: 'bad_origin' };

interface Row {
  name: string;
  host?: string;
  origin?: string;
  site?: string;
  /** The studio the request came through; absent in a row that must be refused. */
  studioId?: string | null;
}

const source = (row: Row): RequestSource => ({ host: row.host, origin: row.origin, secFetchSite: row.site });

const ALLOWED: Row[] = [
  // Host alone (non-browser clients send no Origin).
  { name: 'Host 127.0.0.1', host: `127.0.0.1:${PORT}`, studioId: null },
  { name: 'Host localhost', host: `localhost:${PORT}`, studioId: null },
  { name: 'Host [::1]', host: `[::1]:${PORT}`, studioId: null },
  { name: 'Host LOCALHOST (case-insensitive)', host: `LOCALHOST:${PORT}`, studioId: null },
  { name: 'Host of a studio', host: `my-studio.localhost:${PORT}`, studioId: 'my-studio' },
  { name: 'Host of a studio, upper case', host: `My-Studio.LocalHost:${PORT}`, studioId: 'my-studio' },
  { name: 'Host of a studio, shortest id', host: `ab.localhost:${PORT}`, studioId: 'ab' },
  { name: 'Host of a studio, longest id (32)', host: `a${'b'.repeat(31)}.localhost:${PORT}`, studioId: `a${'b'.repeat(31)}` },
  // Origin.
  { name: 'Origin 127.0.0.1', host: `127.0.0.1:${PORT}`, origin: `http://127.0.0.1:${PORT}`, studioId: null },
  { name: 'Origin localhost', host: `localhost:${PORT}`, origin: `http://localhost:${PORT}`, studioId: null },
  { name: 'Origin [::1]', host: `[::1]:${PORT}`, origin: `http://[::1]:${PORT}`, studioId: null },
  { name: 'Origin of the service on another loopback Host', host: `127.0.0.1:${PORT}`, origin: `http://localhost:${PORT}`, studioId: null },
  { name: 'Origin of a studio page', host: `127.0.0.1:${PORT}`, origin: `http://paint.localhost:${PORT}`, studioId: 'paint' },
  { name: 'Origin of a studio page, upper case', host: `127.0.0.1:${PORT}`, origin: `HTTP://Paint.Localhost:${PORT}`, studioId: 'paint' },
  { name: 'Origin and Host of the same studio', host: `paint.localhost:${PORT}`, origin: `http://paint.localhost:${PORT}`, studioId: 'paint' },
  { name: 'Host of a studio, Origin of the service', host: `paint.localhost:${PORT}`, origin: `http://127.0.0.1:${PORT}`, studioId: 'paint' },
  // Sec-Fetch-Site.
  { name: 'Sec-Fetch-Site same-origin', host: `127.0.0.1:${PORT}`, origin: `http://127.0.0.1:${PORT}`, site: 'same-origin', studioId: null },
  { name: 'Sec-Fetch-Site none', host: `127.0.0.1:${PORT}`, site: 'none', studioId: null },
];

const REFUSED: Row[] = [
  // Host (DNS rebinding).
  { name: 'no Host', host: undefined },
  { name: 'empty Host', host: '' },
  { name: 'Host with another port', host: `127.0.0.1:${PORT + 1}` },
  { name: 'Host with a port that ends in ours', host: `127.0.0.1:1${PORT}` },
  { name: 'Host without a port', host: '127.0.0.1' },
  { name: 'localhost without a port', host: 'localhost' },
  { name: 'Host evil.com', host: `evil.com:${PORT}` },
  { name: 'Host 127.0.0.2', host: `127.0.0.2:${PORT}` },
  { name: 'Host 0.0.0.0', host: `0.0.0.0:${PORT}` },
  { name: 'Host [::2]', host: `[::2]:${PORT}` },
  { name: 'Host localhost.evil.com', host: `localhost.evil.com:${PORT}` },
  { name: 'Host localhost. (trailing dot)', host: `localhost.:${PORT}` },
  { name: 'Host evil-localhost', host: `evil-localhost:${PORT}` },
  { name: 'Host .localhost (empty studio id)', host: `.localhost:${PORT}` },
  { name: 'Host studio id of one character', host: `a.localhost:${PORT}` },
  { name: 'Host studio id starting with a digit', host: `1studio.localhost:${PORT}` },
  { name: 'Host studio id starting with a hyphen', host: `-studio.localhost:${PORT}` },
  { name: 'Host studio id with an underscore', host: `my_studio.localhost:${PORT}` },
  { name: 'Host studio id of 33 characters', host: `a${'b'.repeat(32)}.localhost:${PORT}` },
  { name: 'Host two labels before localhost', host: `a.paint.localhost:${PORT}` },
  { name: 'Host studio under evil.com', host: `paint.localhost.evil.com:${PORT}` },
  { name: 'Host with userinfo', host: `evil@127.0.0.1:${PORT}` },
  // Origin.
  { name: 'Origin "null"', host: `127.0.0.1:${PORT}`, origin: 'null' },
  { name: 'Origin empty', host: `127.0.0.1:${PORT}`, origin: '' },
  { name: 'Origin https', host: `127.0.0.1:${PORT}`, origin: `https://127.0.0.1:${PORT}` },
  { name: 'Origin evil.com', host: `127.0.0.1:${PORT}`, origin: 'http://evil.com' },
  { name: 'Origin evil.com on our port', host: `127.0.0.1:${PORT}`, origin: `http://evil.com:${PORT}` },
  { name: 'Origin with another port', host: `127.0.0.1:${PORT}`, origin: `http://127.0.0.1:${PORT + 1}` },
  { name: 'Origin without a port', host: `127.0.0.1:${PORT}`, origin: 'http://127.0.0.1' },
  { name: 'Origin with a path', host: `127.0.0.1:${PORT}`, origin: `http://127.0.0.1:${PORT}/x` },
  { name: 'Origin with a trailing slash', host: `127.0.0.1:${PORT}`, origin: `http://127.0.0.1:${PORT}/` },
  { name: 'Origin with userinfo', host: `127.0.0.1:${PORT}`, origin: `http://evil.com@127.0.0.1:${PORT}` },
  { name: 'Origin of a bad studio id', host: `127.0.0.1:${PORT}`, origin: `http://a.localhost:${PORT}` },
  { name: 'Origin localhost.evil.com', host: `127.0.0.1:${PORT}`, origin: `http://localhost.evil.com:${PORT}` },
  // Origin == Host is never proof: a rebound page sends both equal.
  { name: 'Origin equal to a hostile Host', host: `evil.com:${PORT}`, origin: `http://evil.com:${PORT}` },
  { name: 'Origin equal to a hostile Host 127.0.0.2', host: `127.0.0.2:${PORT}`, origin: `http://127.0.0.2:${PORT}` },
  // Sec-Fetch-Site.
  { name: 'Sec-Fetch-Site cross-site', host: `127.0.0.1:${PORT}`, site: 'cross-site' },
  { name: 'Sec-Fetch-Site Cross-Site', host: `127.0.0.1:${PORT}`, site: 'Cross-Site' },
  { name: 'Sec-Fetch-Site cross-site with an allowed Origin', host: `127.0.0.1:${PORT}`, origin: `http://127.0.0.1:${PORT}`, site: 'cross-site' },
  // Two studios.
  { name: 'Origin and Host name different studios', host: `paint.localhost:${PORT}`, origin: `http://notes.localhost:${PORT}` },
];

describe('checkRequestSource allows', () => {
  for (const row of ALLOWED) {
    test(`${row.name} -> studioId ${JSON.stringify(row.studioId)}`, () => {
      const hostStudioId = /^([a-z][a-z0-9-]+)\.localhost:/i.exec(row.host ?? '')?.[1]?.toLowerCase() ?? null;
      assert.deepEqual(checkRequestSource(source(row), PORT), { studioId: row.studioId, hostStudioId });
    });
  }
});

describe('checkRequestSource refuses with 403 bad_origin', () => {
  for (const row of REFUSED) {
    test(row.name, () => {
      assert.throws(() => checkRequestSource(source(row), PORT), badOrigin);
    });
  }
});

/**
 * The service's own pages only (the editor channel): every row the general
 * guard allows with no studio, refused when a studio or another site shows.
 */
describe('requireServiceOrigin', () => {
  const own = ALLOWED.filter((row) => row.studioId === null);
  const studio = ALLOWED.filter((row) => row.studioId !== null);
  const otherSite: Row[] = [
    { name: 'Sec-Fetch-Site same-site (a studio page on <id>.localhost, no Origin)', host: `localhost:${PORT}`, site: 'same-site' },
    { name: 'Sec-Fetch-Site Same-Site with the service Origin', host: `127.0.0.1:${PORT}`, origin: `http://127.0.0.1:${PORT}`, site: 'Same-Site' },
    { name: 'Sec-Fetch-Site of an unknown kind', host: `127.0.0.1:${PORT}`, site: 'elsewhere' },
  ];
  assert.ok(own.length >= 8 && studio.length >= 8);
  for (const row of own) {
    test(`allows ${row.name}`, () => {
      assert.doesNotThrow(() => requireServiceOrigin(source(row), PORT));
    });
  }
  for (const row of [...studio, ...otherSite, ...REFUSED]) {
    test(`refuses ${row.name}`, () => {
      assert.throws(() => requireServiceOrigin(source(row), PORT), badOrigin);
    });
  }
});
