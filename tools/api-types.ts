import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * Writes renderer/lib/api-types.ts, the API's shapes as TypeScript, from
 * docs/openapi.json (itself generated from the route table), so the launcher
 * and editor pages read the same types the service answers with instead of
 * hand-copied ones. `npm run docs` runs it after writing the OpenAPI
 * document; test/api-types.test.ts fails when the checked-in module is stale.
 *
 * The OpenAPI document describes every route inline, so the names come from
 * the table below: each names the place in the document (route, status or
 * request body, and a JSON pointer into that schema) whose shape it is. A
 * nested schema equal to a named one is written as that name, so Timeline's
 * tracks read `Record<string, Clip[]>`. The output is deterministic: same
 * document, same bytes.
 */

type Schema = Record<string, unknown>;

interface Shape {
  name: string;
  method: string;
  path: string;
  /** A status code's JSON body, or the request body. */
  from: number | 'body';
  /** JSON pointer into that schema ('' for the whole of it). */
  pointer?: string;
  doc: string;
}

const ITEMS = '/properties/items/items';

export const SHAPES: readonly Shape[] = [
  { name: 'Job', method: 'get', path: '/jobs/{id}', from: 200, doc: 'A job (docs/api.md "Jobs"); an export is kind `export` with `timeline_id` set.' },
  { name: 'Timeline', method: 'get', path: '/timeline/{id}', from: 200, doc: 'A sequence (docs/api.md "Timeline"); its ETag is the revision.' },
  { name: 'Target', method: 'get', path: '/timeline/{id}', from: 200, pointer: '/properties/target', doc: "A sequence's output format." },
  { name: 'Clip', method: 'get', path: '/timeline/{id}', from: 200, pointer: '/properties/tracks/additionalProperties/items', doc: 'One clip on a track, in seconds.' },
  { name: 'Transition', method: 'get', path: '/timeline/{id}', from: 200, pointer: '/properties/tracks/additionalProperties/items/properties/transition', doc: 'A transition from the previous clip on the track.' },
  { name: 'TimelineUpdate', method: 'patch', path: '/timeline/{id}', from: 'body', doc: 'A merge patch of a sequence.' },
  { name: 'TimelineRevision', method: 'get', path: '/timeline/{id}/revisions', from: 200, pointer: ITEMS, doc: 'One stored revision of a sequence.' },
  { name: 'TimelineOpened', method: 'post', path: '/timeline/{id}:open', from: 200, doc: 'The answer to `:open`.' },
  { name: 'ExportPlan', method: 'get', path: '/timeline/{id}:plan', from: 200, doc: 'How an export would treat each clip.' },
  { name: 'PlanClip', method: 'get', path: '/timeline/{id}:plan', from: 200, pointer: '/properties/clips/items', doc: 'One clip of an export plan.' },
  { name: 'ExportRequest', method: 'post', path: '/timeline/{id}:export', from: 'body', doc: 'The body of `:export`.' },
  { name: 'Item', method: 'get', path: '/gallery/items/{id}', from: 200, doc: 'A gallery item.' },
  { name: 'Asset', method: 'post', path: '/assets', from: 201, doc: 'A stored file.' },
  { name: 'Studio', method: 'get', path: '/launcher/studios', from: 200, pointer: ITEMS, doc: 'An installed studio, as the launcher lists it.' },
  { name: 'Handoff', method: 'get', path: '/launcher/handoffs/{id}', from: 200, doc: 'One studio handing work to another, as the launcher sees it: with the offered session\'s name (docs/api.md "Handoffs").' },
  { name: 'HandoffRule', method: 'get', path: '/launcher/handoff-rules', from: 200, pointer: ITEMS, doc: 'A pair of studios the user allowed always.' },
];

function at(schema: Schema, pointer: string): Schema {
  let node: unknown = schema;
  for (const part of pointer.split('/').slice(1)) {
    node = (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  if (!node || typeof node !== 'object') throw new Error(`nothing at ${pointer}`);
  return node as Schema;
}

function locate(doc: Schema, shape: Shape): { root: Schema; schema: Schema } {
  const op = at(doc, `/paths/${shape.path.replace(/~/g, '~0').replace(/\//g, '~1')}/${shape.method}`);
  const content = shape.from === 'body' ? at(op, '/requestBody/content') : at(op, `/responses/${shape.from}/content`);
  // JSON, or merge-patch JSON for a PATCH body: the one content type with a schema.
  const typed = Object.values(content).find((c) => c && typeof c === 'object' && 'schema' in c) as { schema: Schema } | undefined;
  if (!typed) throw new Error('no JSON schema');
  const root = typed.schema;
  return { root, schema: deref(root, at(root, shape.pointer ?? '')) };
}

function deref(root: Schema, schema: Schema): Schema {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  if (!ref.startsWith('#/')) throw new Error(`unsupported $ref ${ref}`);
  return deref(root, at(root, ref.slice(1)));
}

/** Key-sorted JSON without `$defs`: two schemas of one shape compare equal. */
function canonical(schema: unknown): string {
  if (Array.isArray(schema)) return `[${schema.map(canonical).join(',')}]`;
  if (schema && typeof schema === 'object') {
    const entries = Object.entries(schema as Schema).filter(([k]) => k !== '$defs').sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(schema);
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

class Writer {
  private readonly named = new Map<string, string>();

  constructor(private readonly root: Schema) {}

  name(schema: Schema, name: string): void {
    this.named.set(canonical(schema), name);
  }

  /** The TypeScript type of a schema; `self` is the name being defined (never replaced by itself). */
  type(schema: Schema, indent: string, self: string | null): string {
    schema = deref(this.root, schema);
    const known = this.named.get(canonical(schema));
    if (known && known !== self) return known;
    if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
    if ('const' in schema) return JSON.stringify(schema.const);
    const union = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
    if (union) return [...new Set(union.map((s) => this.type(s, indent, self)))].join(' | ');
    const t = schema.type;
    if (Array.isArray(t)) return t.map((one) => this.type({ ...schema, type: one }, indent, self)).join(' | ');
    switch (t) {
      case 'string':
        return 'string';
      case 'number':
      case 'integer':
        return 'number';
      case 'boolean':
        return 'boolean';
      case 'null':
        return 'null';
      case 'array': {
        const item = this.type((schema.items as Schema | undefined) ?? {}, indent, self);
        return /[|&]/.test(item) ? `Array<${item}>` : `${item}[]`;
      }
      case 'object':
        return this.object(schema, indent, self);
      default:
        return 'unknown';
    }
  }

  object(schema: Schema, indent: string, self: string | null): string {
    const props = (schema.properties ?? {}) as Record<string, Schema>;
    const required = new Set((schema.required ?? []) as string[]);
    const extra = schema.additionalProperties;
    const names = Object.keys(props);
    const rest = extra === false || extra === undefined ? null : this.type(extra === true ? {} : (extra as Schema), indent, self);
    if (names.length === 0) return `Record<string, ${rest ?? 'never'}>`;
    const inner = `${indent}  `;
    const lines = names.map((key) => {
      const prop = props[key]!;
      const doc = typeof prop.description === 'string' ? `${inner}/** ${prop.description.replace(/\*\//g, '*\\/')} */\n` : '';
      const label = IDENT.test(key) ? key : JSON.stringify(key);
      return `${doc}${inner}${label}${required.has(key) ? '' : '?'}: ${this.type(prop, inner, self)};`;
    });
    if (rest) lines.push(`${inner}[key: string]: ${rest};`);
    return `{\n${lines.join('\n')}\n${indent}}`;
  }
}

/** The module's text for an OpenAPI document. */
export function renderApiTypes(doc: Schema): string {
  const located = SHAPES.map((shape) => {
    try {
      return { shape, ...locate(doc, shape) };
    } catch (e) {
      throw new Error(`${shape.name} (${shape.method.toUpperCase()} ${shape.path} ${shape.from}): ${(e as Error).message}`);
    }
  });
  const out: string[] = [
    '// Generated by tools/api-types.ts from docs/openapi.json (`npm run docs`). Do not edit.',
    '// The API\'s shapes for the launcher and editor pages; pages take API shapes only from here.',
    '',
    '/** A cursor page (docs/api.md "Pagination"). */',
    'export interface Page<T> {',
    '  items: T[];',
    '  next_cursor: string | null;',
    '}',
  ];
  for (const { shape, root, schema } of located) {
    const writer = new Writer(root);
    for (const other of located) writer.name(other.schema, other.shape.name);
    const body = writer.type(schema, '', shape.name);
    out.push('', `/** ${shape.doc} */`);
    out.push(body.startsWith('{') ? `export interface ${shape.name} ${body}` : `export type ${shape.name} = ${body};`);
  }
  return `${out.join('\n')}\n`;
}

export const API_TYPES_PATH = ['renderer', 'lib', 'api-types.ts'] as const;

if (require.main === module) {
  const root = resolve(__dirname, '..', '..');
  const doc = JSON.parse(readFileSync(resolve(root, 'docs', 'openapi.json'), 'utf8')) as Schema;
  const out = resolve(root, ...API_TYPES_PATH);
  writeFileSync(out, renderApiTypes(doc));
  process.stdout.write(`wrote ${out}\n`);
}
