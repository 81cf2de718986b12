import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { API_TYPES_PATH, renderApiTypes } from '../tools/api-types';

/**
 * renderer/lib/api-types.ts is generated from docs/openapi.json (itself
 * checked against the served document in http-core.test.ts), so a route
 * change that is not followed by `npm run docs` fails here.
 */

const ROOT = resolve(__dirname, '..', '..');
const doc = () => JSON.parse(readFileSync(join(ROOT, 'docs', 'openapi.json'), 'utf8')) as Record<string, unknown>;

describe('api types', () => {
  test('renderer/lib/api-types.ts is what tools/api-types.ts makes of docs/openapi.json (run `npm run docs`)', () => {
    const checkedIn = readFileSync(join(ROOT, ...API_TYPES_PATH), 'utf8');
    assert.equal(checkedIn, renderApiTypes(doc()));
  });

  test('the output is deterministic and names nested shapes', () => {
    const text = renderApiTypes(doc());
    assert.equal(renderApiTypes(doc()), text);
    assert.match(text, /export interface Timeline \{[^}]*tracks: Record<string, Clip\[\]>;/);
    assert.match(text, /export interface Timeline \{[^}]*target: Target;/);
    assert.match(text, /export interface ExportPlan \{[^}]*clips: PlanClip\[\];/);
    assert.match(text, /export interface Job \{[^}]*state: "queued" \| "running" \| "succeeded" \| "failed" \| "cancelled";/);
    assert.match(text, /export interface Page<T> \{/);
  });

  test('a changed route shape changes the module; a shape the document lacks is an error naming it', () => {
    const changed = doc() as { paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, { schema: { properties: Record<string, unknown>; required: string[] } }> }> }>> };
    const schema = changed.paths['/jobs/{id}']!.get!.responses['200']!.content['application/json']!.schema;
    schema.properties.eta_s = { type: ['number', 'null'], description: 'Seconds left.' };
    schema.required.push('eta_s');
    assert.match(renderApiTypes(changed), /\/\*\* Seconds left\. \*\/\n  eta_s: number \| null;/);
    delete changed.paths['/timeline/{id}:plan'];
    assert.throws(() => renderApiTypes(changed), /ExportPlan \(GET \/timeline\/\{id\}:plan 200\)/);
  });
});
