import { ERROR_DETAILS } from '../../domain/errors.ts';
import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { LiveEvent, type Answer } from './response-schemas.ts';
import type { Route } from './route.ts';
import type { Surface } from './surface.ts';

/** The live socket's path: its 101 answer is documented as the frames it then carries. */
const LIVE_SOCKET_PATH = '/api/console/live';

const inputSchema = (schema: v.GenericSchema): Record<string, unknown> =>
  toJsonSchema(schema, { target: 'draft-2020-12', typeMode: 'input', errorMode: 'ignore' }) as Record<string, unknown>;
const outputSchema = (schema: v.GenericSchema): Record<string, unknown> => {
  const { $schema: _, ...rest } = toJsonSchema(schema, { target: 'draft-2020-12', typeMode: 'output', errorMode: 'ignore' }) as Record<string, unknown>;
  return rest;
};

const PROBLEM = {
  type: 'object',
  description: 'RFC 9457 problem details; `detail` is the catalog sentence of docs/errors.md or a more precise one',
  required: ['type', 'title', 'status', 'detail', 'code'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: { type: 'string', enum: Object.keys(ERROR_DETAILS), description: 'The catalog code (docs/errors.md): one per reason a client may branch on' },
    errors: {
      type: 'array',
      items: { type: 'object', required: ['path', 'message'], properties: { path: { type: 'string' }, message: { type: 'string' } } },
    },
    files: { type: 'array', items: { type: 'string' }, description: 'The files a merge conflicts on (`merge_conflict`)' },
  },
};

/** Path parameters that are ids (a UUID, any case) are documented with the `uuid` format. */
const UUID_PARAM = { type: 'string', format: 'uuid' };

/** A route's operationId: its own, else one made from the method and the path's words. */
function operationIdOf(route: Route): string {
  if (route.operationId !== undefined) return route.operationId;
  const words = route.path
    .split('/')
    .filter((part) => part !== '' && part !== 'api' && !part.startsWith(':'))
    .flatMap((part) => part.split(/[^A-Za-z0-9]+/))
    .filter((word) => word !== '');
  return [route.method.toLowerCase(), ...words.map((word) => word[0]!.toUpperCase() + word.slice(1))].join('');
}

function parametersOf(route: Route): unknown[] {
  const parameters: unknown[] = [];
  const pathSchema = route.params === undefined ? undefined : (inputSchema(route.params) as { properties?: Record<string, { pattern?: string; format?: string }> });
  for (const [, name] of route.path.matchAll(/:([A-Za-z_]+)/g)) {
    const declared = pathSchema?.properties?.[name!];
    // A UUID by its pattern (a 422 otherwise), or by its declared format where the handler decides (the viewer's 404).
    const isUuid = declared?.format === 'uuid' || (declared?.pattern !== undefined && declared.pattern.includes('[0-9a-f]{8}'));
    parameters.push({ name, in: 'path', required: true, schema: isUuid ? UUID_PARAM : { type: 'string' } });
  }
  if (route.query !== undefined) {
    const query = inputSchema(route.query) as { properties?: Record<string, unknown>; required?: string[] };
    for (const [name, schema] of Object.entries(query.properties ?? {})) {
      parameters.push({ name, in: 'query', required: query.required?.includes(name) ?? false, schema });
    }
  }
  return parameters;
}

const problemAnswer = (description: string) => ({ description, content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } });

function responsesOf(route: Route, surface: string): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [status, described] of Object.entries(route.responses ?? { 200: 'OK' })) {
    const given: Answer = typeof described === 'string' ? { description: described } : described;
    if (Number(status) >= 400) {
      responses[status] = { description: given.description, content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } };
    } else if (given.schema !== undefined) {
      responses[status] = { description: given.description, content: { 'application/json': { schema: outputSchema(given.schema) } } };
    } else if (given.mediaType !== undefined) {
      responses[status] = { description: given.description, content: { [given.mediaType]: { schema: { type: 'string' } } } };
    } else {
      responses[status] = { description: given.description };
    }
  }
  // Every route can meet the edge's own refusal: a Host header that is not a host.
  if (!Object.keys(responses).some((status) => Number(status) >= 400 && Number(status) < 500)) {
    responses['400'] = problemAnswer('The Host header is not a host');
  }
  // And a Host the service does not answer to (the sandbox routes answer 404 on any other origin instead).
  if (surface !== 'sandbox') responses['421'] = problemAnswer('The Host is not one this service answers to (ALLOWED_HOSTS)');
  // A route that looks a credential up refuses a client that guessed too often, before the lookup.
  if ((route.auth === true || route.credential !== undefined) && responses['429'] === undefined) responses['429'] = problemAnswer('Too many failed credentials from this client this minute (Retry-After)');
  if (route.path === LIVE_SOCKET_PATH) {
    responses['101'] = { description: 'Switching protocols: from then on each text frame is one LiveEvent', content: { 'application/json': { schema: { $ref: '#/components/schemas/LiveEvent' } } } };
  }
  return responses;
}

/** Routes that need a user take the bearer header or the session cookie; the others none. */
const SECURED = [{ bearer: [] }, { cookie: [] }];

function operation(route: Route, surface: string): Record<string, unknown> {
  const parameters = parametersOf(route);
  return {
    operationId: operationIdOf(route),
    summary: route.summary,
    tags: [surface],
    security: route.auth === true ? SECURED : route.credential !== undefined ? [{ bearer: [] }] : [],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.body !== undefined ? { requestBody: { required: true, content: { 'application/json': { schema: inputSchema(route.body) } } } } : {}),
    responses: responsesOf(route, surface),
  };
}

const TAGS: Record<string, string> = {
  system: 'Liveness, readiness and this description',
  identity: 'Sign-in with a token and the session cookie',
  account: "The caller's own account",
  console: 'Threads, conversations, runs, ledgers, directives, answers, posture, cancel, teleport and summon',
  live: 'The live socket: a websocket upgrade; each text frame is one LiveEvent',
  artifacts: 'MCP app artifacts: the view with its UI resource fetched afresh, and routing settings',
  viewer: 'The artifact viewer page and its script (HTML and JavaScript, console origin)',
  sandbox: 'The sandbox proxy page and script, served only on the configured sandbox origin',
  metrics: 'Prometheus metrics behind METRICS_TOKEN',
  hooks: "Hooks in: another service sends a directive as a hook's owner, with the hook's secret as bearer",
};

/** The OpenAPI 3.1 description of every route, generated from the routes' own valibot schemas. */
export function openApiDocument(surfaces: readonly Surface[], serverUrl = '/'): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const used = new Set<string>();
  for (const surface of surfaces) {
    used.add(surface.name);
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
        'Console reads, directives, live events and artifact loading. Routes tagged `sandbox` are served only on the configured sandbox origin. The rules the schemas cannot say are in docs/api.md.',
      license: { name: 'UNLICENSED', identifier: 'UNLICENSED' },
    },
    servers: [{ url: serverUrl, description: 'This console' }],
    tags: [...used].map((name) => ({ name, description: TAGS[name] ?? name })),
    security: [],
    paths,
    components: {
      schemas: { Problem: PROBLEM, LiveEvent: outputSchema(LiveEvent) },
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'A user token' },
        cookie: { type: 'apiKey', in: 'cookie', name: 'console_session', description: 'The session cookie POST /api/session sets' },
      },
    },
  };
}
