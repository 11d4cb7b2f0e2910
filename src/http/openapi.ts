import { toJsonSchema } from '@valibot/to-json-schema';
import type { Route } from './route.ts';
import type { Surface } from './surface.ts';

const schemaOf = (schema: NonNullable<Route['query']>): Record<string, unknown> =>
  toJsonSchema(schema, { target: 'draft-2020-12', typeMode: 'input', errorMode: 'ignore' }) as Record<string, unknown>;

const PROBLEM = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    errors: {
      type: 'array',
      items: { type: 'object', properties: { path: { type: 'string' }, message: { type: 'string' } } },
    },
  },
};

function operation(route: Route, surface: string): Record<string, unknown> {
  const parameters: unknown[] = [];
  for (const [, name] of route.path.matchAll(/:([A-Za-z_]+)/g)) {
    parameters.push({ name, in: 'path', required: true, schema: { type: 'string' } });
  }
  if (route.query !== undefined) {
    const query = schemaOf(route.query) as { properties?: Record<string, unknown>; required?: string[] };
    for (const [name, schema] of Object.entries(query.properties ?? {})) {
      parameters.push({ name, in: 'query', required: query.required?.includes(name) ?? false, schema });
    }
  }
  const responses: Record<string, unknown> = {};
  for (const [status, description] of Object.entries(route.responses ?? { 200: 'OK' })) {
    const type = Number(status) >= 400 ? 'application/problem+json' : 'application/json';
    responses[status] = {
      description,
      ...(Number(status) >= 400 ? { content: { [type]: { schema: { $ref: '#/components/schemas/Problem' } } } } : {}),
    };
  }
  return {
    summary: route.summary,
    tags: [surface],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.body !== undefined
      ? { requestBody: { required: true, content: { 'application/json': { schema: schemaOf(route.body) } } } }
      : {}),
    responses,
  };
}

/** The OpenAPI 3.1 description of every route, generated from the routes' own valibot schemas. */
export function openApiDocument(surfaces: readonly Surface[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const surface of surfaces) {
    for (const route of surface.routes) {
      const path = route.path.replace(/:([A-Za-z_]+)/g, '{$1}');
      paths[path] ??= {};
      paths[path][route.method.toLowerCase()] = operation(route, surface.name);
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent console service',
      version: '0.1.0',
      description:
        'Console reads, directives, live events and artifact loading. Routes tagged `sandbox` are served only on the configured sandbox origin.',
    },
    paths,
    components: {
      schemas: { Problem: PROBLEM },
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer' },
        cookie: { type: 'apiKey', in: 'cookie', name: 'console_session' },
      },
    },
  };
}
