import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { Credential as User } from '../../domain/accounts.ts';
import { fail, type Result } from '../../domain/result.ts';
import type { RequestContext } from './context.ts';
import { problem, type Reply } from './reply.ts';
import { runRoute, type Guard, type Route } from './route.ts';

export type { Guard } from './route.ts';

/** A group of routes under one path prefix with the guards they share (contract section 2). */
export interface SurfaceDefinition {
  readonly name: string;
  /** Whether a path belongs to this surface. */
  readonly owns: (path: string) => boolean;
  readonly guards: readonly Guard[];
  readonly routes: readonly Route[];
  /** Resolves the caller for routes that declare `auth`; a surface without it has no such routes. */
  readonly authenticate?: (ctx: RequestContext) => Promise<Result<User, Reply>>;
  /** Headers added to every answer of the surface, errors included (such as `Cache-Control: no-store`). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** A surface ready to answer: its own find-my-way router, 404 and 405 with `Allow`. */
export interface Surface {
  readonly name: string;
  readonly owns: (path: string) => boolean;
  readonly routes: readonly Route[];
  /**
   * The answer of a request the surface owns; the edge adds `headers` to it. A route that waits on
   * nothing answers at once (no promise); one may also throw, as a rejection would.
   */
  readonly dispatch: (ctx: RequestContext) => Reply | Promise<Reply>;
  /** Headers the edge adds to every answer of the surface, errors included; they win over the reply's. */
  readonly headers?: Readonly<Record<string, string>>;
}

const noop = (): void => {};

/** Builds a surface's router from its routes. */
export function buildSurface(definition: SurfaceDefinition): Surface {
  const router = FindMyWay({ ignoreTrailingSlash: false, caseSensitive: true, maxParamLength: 200 });
  const methods = new Set<HTTPMethod>();
  for (const r of definition.routes) {
    // A kept answer skips authentication and the body: only for routes that have neither.
    if (r.memo !== undefined && (r.auth === true || r.body !== undefined)) throw new Error(`${r.method} ${r.path}: a memo is for routes without auth or body`);
    router.on(r.method, r.path, noop, r);
    methods.add(r.method);
    if (r.method === 'GET') {
      // A HEAD runs the GET route; node sends its headers without the body.
      router.on('HEAD', r.path, noop, r);
      methods.add('HEAD');
    }
  }

  const authenticate = definition.authenticate ?? (async () => fail(problem({ code: 'unauthenticated' }, { 'www-authenticate': 'Bearer' })));
  const allowed = (path: string): string[] =>
    [...methods].filter((method) => safeFind(router, method, path) !== null).sort();

  return {
    name: definition.name,
    owns: definition.owns,
    routes: definition.routes,
    dispatch: answer,
    headers: definition.headers,
  };

  function answer(ctx: RequestContext): Reply | Promise<Reply> {
      for (const guard of definition.guards) {
        const refusal = guard(ctx);
        if (refusal !== null) return problem(refusal);
      }
      const found = safeFind(router, ctx.method as HTTPMethod, ctx.path);
      if (found === null) {
        const allow = allowed(ctx.path);
        return allow.length > 0
          ? problem({ code: 'method_not_allowed' }, { allow: allow.join(', ') })
          : problem({ code: 'not_found' });
      }
      ctx.route = (found.store as Route).path;
      return runRoute(found.store as Route, ctx, found.params, authenticate);
  }
}

/** find-my-way throws on some malformed paths (a bad percent escape); those match nothing. */
function safeFind(router: FindMyWay.Instance<FindMyWay.HTTPVersion.V1>, method: HTTPMethod, path: string) {
  try {
    return router.find(method, path);
  } catch {
    return null;
  }
}
