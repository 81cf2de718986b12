import assert from 'node:assert/strict';
import { test } from 'node:test';
import { send, type HttpRequest, type HttpResponse } from './http';

/**
 * Table-driven black-box tests: one row per rule or bad input, each run as its
 * own test against the real service (PocketBase's ApiScenario, in node:test).
 * Rows name their caller (`as`) instead of holding a token, because tokens and
 * ids exist only once the service has started.
 */

export interface ScenarioEnv {
  port: number;
  tokens: Record<string, string>;
  ids?: Record<string, string>;
}

export interface Scenario extends Omit<HttpRequest, 'path' | 'token'> {
  name: string;
  /** Under /api/v1 unless it starts with '!' (then the raw path). May use the env's ids. */
  path: string | ((env: ScenarioEnv) => string);
  /** Key of env.tokens; omitted means no Authorization header. */
  as?: string;
  /** A literal token (overrides `as`). */
  token?: string;
  expectStatus: number;
  expectCode?: string;
  /** Top-level members that must deep-equal these values. */
  expectJson?: Record<string, unknown>;
  expectDetails?: Record<string, unknown>;
  check?: (res: HttpResponse, env: ScenarioEnv) => void | Promise<void>;
}

export function runScenarios(env: () => ScenarioEnv, rows: Scenario[]): void {
  for (const s of rows) {
    test(s.name, async () => {
      const e = env();
      const raw = typeof s.path === 'function' ? s.path(e) : s.path;
      const path = raw.startsWith('!') ? raw.slice(1) : `/api/v1${raw}`;
      const token = s.token ?? (s.as ? e.tokens[s.as] : undefined);
      if (s.as && !token) throw new Error(`no token named ${s.as}`);
      const res = await send(e.port, { ...s, path, token });
      assertScenario(s, res);
      await s.check?.(res, e);
    });
  }
}

export function assertScenario(s: Partial<Scenario> & { expectStatus: number }, res: HttpResponse): void {
  const context = `${s.name ?? ''}: ${res.status} ${res.text.slice(0, 500)}`;
  assert.equal(res.status, s.expectStatus, context);
  if (s.expectCode !== undefined) {
    assert.equal(res.json?.code, s.expectCode, context);
    assert.equal(typeof res.json.message, 'string', context);
    assert.ok(res.json.details && typeof res.json.details === 'object', context);
    assert.deepEqual(Object.keys(res.json).sort(), ['code', 'details', 'message'], context);
  }
  for (const [k, v] of Object.entries(s.expectJson ?? {})) assert.deepEqual(res.json?.[k], v, `${context} (member ${k})`);
  for (const [k, v] of Object.entries(s.expectDetails ?? {})) assert.deepEqual(res.json?.details?.[k], v, `${context} (details.${k})`);
}

/** Asserts an error answer: status, code, the error body's shape, and details members. */
export function assertError(res: HttpResponse, status: number, code: string, details?: Record<string, unknown>): void {
  assertScenario({ expectStatus: status, expectCode: code, expectDetails: details }, res);
}
