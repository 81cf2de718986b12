import { z, type ZodType } from 'zod';
import { allErrorCodes } from './errors';
import type { Route } from './route';

/**
 * The OpenAPI 3.1 document, generated from the same route table that the
 * router runs (zod 4 `toJSONSchema`), so the reference matches the code.
 */

const errorBody = z.object({
  code: z.string().meta({ description: 'Machine-readable code (see the Errors table).' }),
  message: z.string().meta({ description: 'What went wrong, for a person.' }),
  details: z.record(z.string(), z.unknown()).meta({ description: 'Depends on the code; `{}` when there is nothing to say.' }),
});

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request', 401: 'Unauthenticated', 403: 'Forbidden', 404: 'Not found', 409: 'Conflict',
  410: 'Gone', 413: 'Too large', 416: 'Range not satisfiable', 422: 'Unprocessable', 429: 'Quota exceeded',
  501: 'Unsupported', 507: 'Insufficient storage',
};

function schemaOf(schema: ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}

function parametersOf(r: Route): unknown[] {
  const out: unknown[] = [];
  for (const [where, schema] of [['path', r.params], ['query', r.query]] as const) {
    if (!schema) continue;
    const json = schemaOf(schema, 'input') as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
    for (const [name, prop] of Object.entries(json.properties ?? {})) {
      const { description, ...rest } = prop;
      out.push({
        name,
        in: where,
        required: where === 'path' || (json.required ?? []).includes(name),
        ...(description ? { description } : {}),
        schema: rest,
      });
    }
  }
  for (const h of r.headers ?? []) {
    out.push({ name: h.name, in: 'header', required: h.required ?? false, description: h.description, schema: { type: 'string' } });
  }
  return out;
}

export function buildOpenApi(routes: readonly Route[], info: { version: string }): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = r.path.replace(/\{([a-z_]+)\+\}/g, '{$1}');
    const responses: Record<string, unknown> = {
      [r.success.status]: {
        description: r.success.description,
        ...(r.success.etag ? { headers: { ETag: { description: 'The quoted etag', schema: { type: 'string' } } } } : {}),
        ...(r.success.schema ? { content: { 'application/json': { schema: schemaOf(r.success.schema, 'output') } } } : {}),
        ...(r.successType ? { content: { [r.successType]: {} } } : {}),
      },
    };
    for (const status of [401, 403, ...r.errors]) {
      responses[status] = { $ref: `#/components/responses/E${status}` };
    }
    (paths[path] ??= {})[r.method.toLowerCase()] = {
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      'x-capability': r.capability,
      security: r.capability === 'launcher' ? [{ launcher: [] }] : r.capability === 'media_url' ? [] : [{ bearer: [] }],
      parameters: parametersOf(r),
      ...(r.body
        ? { requestBody: { required: r.bodyOptional !== true, content: { [r.bodyType ?? 'application/json']: { schema: schemaOf(r.body, 'input') } } } }
        : r.rawBody
          ? { requestBody: { required: true, description: r.rawBody.description, content: { '*/*': {} } } }
          : {}),
      responses,
    };
  }
  const byStatus = new Map<number, string[]>();
  for (const { status, code } of allErrorCodes()) byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  const errorResponses: Record<string, unknown> = {};
  for (const [status, codes] of byStatus) {
    errorResponses[`E${status}`] = {
      description: `${STATUS_TEXT[status] ?? 'Error'}: one of ${codes.map((c) => `\`${c}\``).join(', ')}`,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Backlot studio data and media service',
      version: info.version,
      description: 'The studio-facing API. Conventions, limits and choices: docs/api.md.',
    },
    servers: [{ url: 'http://127.0.0.1:7380/api/v1' }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'A studio token from `backlot token create`.' },
        launcher: {
          type: 'http',
          scheme: 'bearer',
          description:
            'A launcher credential (the launcher routes only): from `backlot launcher-token`, or the one a browser gets by signing in ' +
            'through a one-time login URL (`backlot login-url`). Never a cookie: every Cookie header is ignored.',
        },
      },
      schemas: { Error: schemaOf(errorBody, 'output') },
      responses: errorResponses,
    },
  };
}
