/**
 * A typed client of the console API: openapi-fetch over the types openapi-typescript generates from
 * the service's own OpenAPI description (`client/openapi.json`, written by `npm run api:types`). A path,
 * parameter or answer the description does not have is a type error, so a drift between the code and
 * the description breaks the type check. Runs wherever `fetch` does (Node, browsers, Deno, Bun).
 */
import createClient, { type ClientOptions } from 'openapi-fetch';
import type { components, paths } from './schema.ts';

export type ConsoleClient = ReturnType<typeof createClient<paths>>;
export type Schemas = components['schemas'];
export type { paths };

/** A client for the console at `baseUrl` (for example `http://localhost:8080`). */
export function consoleClient(baseUrl: string, options: Omit<ClientOptions, 'baseUrl'> = {}): ConsoleClient {
  return createClient<paths>({ ...options, baseUrl });
}
