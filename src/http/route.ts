import * as v from 'valibot';
import type { Failure } from '../../domain/errors.ts';
import type { Credential as User } from '../../domain/accounts.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import type { AnswerCache } from './answer-cache.ts';
import type { Answer } from './response-schemas.ts';
import type { RequestContext } from './context.ts';
import { readJsonBody } from './body.ts';
import { problem, type Reply } from './reply.ts';

type Schema<T> = v.GenericSchema<unknown, T>;

/** A check that runs before a route (on a whole surface, or on one route); null lets the request through. */
export type Guard = (ctx: RequestContext) => Failure | null;

/** The parsed parts of a request, as its route's schemas describe them. */
export interface RouteInput<Q, B, P, C = undefined> {
  readonly query: Q;
  readonly body: B;
  readonly params: P;
  readonly ctx: RequestContext;
  /** The calling user; present on routes that declare `auth`. */
  readonly user: User;
  /** What the route's own `credential` check found; present on routes that declare one. */
  readonly caller: C;
}

/** One route: where it is, what it accepts (each part a valibot schema), and the handler. */
export interface Route<Q = unknown, B = unknown, P = unknown, C = unknown> {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** A find-my-way path, such as `/api/console/threads/:id`. */
  readonly path: string;
  /** One line for the OpenAPI description. */
  readonly summary: string;
  /** The OpenAPI operationId, what a generated client names the call (unique across the API). */
  readonly operationId?: string;
  readonly query?: Schema<Q>;
  readonly body?: Schema<B>;
  readonly params?: Schema<P>;
  /** Checks of this route alone, run after the surface's and before authentication. */
  readonly guards?: readonly Guard[];
  /** Whether the route needs an authenticated user (else the authenticator's refusal: 401 with `WWW-Authenticate: Bearer`, or 429). */
  readonly auth?: boolean;
  /**
   * A route's own credential, for a caller that is no user (a hook's secret): checked first, before the
   * path, query and body are parsed, as `auth` is; its value is the handler's `caller`, else its refusal is
   * the answer. Described in the OpenAPI description as a bearer credential. Not with `auth`.
   */
  readonly credential?: (ctx: RequestContext, params: Record<string, string | undefined>) => Promise<Result<C, Reply>>;
  /**
   * What the path names, checked for the caller only when the query or body is refused (400, 413, 415,
   * 422): a failure here (404: a thread the caller cannot use) is answered instead, so a bad body never
   * tells whether someone else's thread exists. A valid request pays no extra read: its use case checks
   * the same first. Needs `auth` and `params`.
   */
  readonly pathRefusal?: (input: { readonly user: User; readonly params: P }) => Promise<Failure | null>;
  /** Documented answers, by status, for the OpenAPI description: words, or words and the body's schema. */
  readonly responses?: Readonly<Record<number, string | Answer>>;
  /**
   * For a route whose answer is a pure function of its request's scheme, `Host` and raw query (no
   * `auth`, no body): answers kept by `key(ctx)` (null: not kept), so a request seen before skips the
   * query's parse and the handler. Answers are kept only when `keep` says so, frozen, and written as
   * they are (the edge prepares a frozen answer's headers once).
   */
  readonly memo?: RouteMemo;
  readonly handle: (input: RouteInput<Q, B, P, C>) => Reply | Promise<Reply>;
}

/** See {@link Route.memo}. */
export interface RouteMemo {
  readonly key: (ctx: RequestContext) => string | null;
  readonly keep: (reply: Reply) => boolean;
  readonly cache: AnswerCache<Reply>;
}

/** Declares a route, keeping its schemas' types tied to its handler. */
export const route = <Q = undefined, B = undefined, P = undefined, C = undefined>(definition: Route<Q, B, P, C>): Route =>
  definition as unknown as Route;

/** The issues of a failed parse as `{path, message}`; `where` prefixes the path (`query`, `body`). */
function issuesOf(where: string, issues: readonly v.BaseIssue<unknown>[]): Failure {
  return {
    code: 'validation_failed',
    errors: issues.map((issue) => {
      const path = v.getDotPath(issue);
      return { path: path === null ? where : `${where}.${path}`, message: issue.message };
    }),
  };
}

/** A query as a plain object: a repeated key becomes a list, which a string schema then refuses. */
function queryObject(query: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(query.keys())) {
    const values = query.getAll(key);
    out[key] = values.length === 1 ? values[0]! : values;
  }
  return out;
}

/**
 * A request's query parsed with `schema`: its output, or the `validation_failed` failure (422) with each
 * issue's path under `query`. Routes parse theirs so; the live socket's upgrade too.
 */
export function parseQuery<T>(schema: Schema<T>, query: URLSearchParams): Result<T, Failure> {
  const parsed = v.safeParse(schema, queryObject(query));
  return parsed.success ? ok(parsed.output) : fail(issuesOf('query', parsed.issues));
}

/**
 * Parses path, query and body with the route's schemas (400/413/415/422), then calls the handler.
 * Synchronous up to the first step that must wait (authentication, the body, the handler's own
 * answer): a route that waits on nothing answers without a promise (the sandbox's).
 */
export function runRoute(
  routeDef: Route,
  ctx: RequestContext,
  params: Record<string, string | undefined>,
  authenticate: (ctx: RequestContext) => Promise<Result<User, Reply>>,
): Reply | Promise<Reply> {
  const guards = routeDef.guards;
  if (guards !== undefined) {
    for (const guard of guards) {
      const refusal = guard(ctx);
      if (refusal !== null) return problem(refusal);
    }
  }
  const memo = routeDef.memo;
  if (memo !== undefined) {
    const key = memo.key(ctx);
    if (key !== null) {
      const kept = memo.cache.peek(key);
      if (kept !== undefined) return kept;
      const made = parsedRoute(routeDef, ctx, params, null);
      if (made instanceof Promise) return made;
      if (!memo.keep(made)) return made;
      const frozen = freezeReply(made);
      memo.cache.put(key, frozen);
      return frozen;
    }
  }
  // Authentication first: an anonymous caller learns nothing, not even which of its inputs are wrong.
  const credential = routeDef.credential;
  if (credential !== undefined) {
    return credential(ctx, params).then((caller) => (caller.ok ? parsedRoute(routeDef, ctx, params, null, caller.value) : caller.error));
  }
  if (routeDef.auth === true) {
    return authenticate(ctx).then((caller) => (caller.ok ? parsedRoute(routeDef, ctx, params, caller.value) : caller.error));
  }
  return parsedRoute(routeDef, ctx, params, null);
}

/** A reply and its headers frozen: one answer written again and again, by any number of requests. */
export function freezeReply(reply: Reply): Reply {
  if (reply.headers !== undefined) Object.freeze(reply.headers);
  return Object.freeze(reply);
}

/** The path's own refusal when it has one (see `pathRefusal`), else `failure`. */
async function refuse(routeDef: Route, user: User | null, params: unknown, failure: Failure, headers: Record<string, string> = {}): Promise<Reply> {
  const first = routeDef.pathRefusal === undefined || user === null ? null : await routeDef.pathRefusal({ user, params });
  return problem(first ?? failure, headers);
}

/** Path, query and body parsed, then the handler; `user` once authenticated (routes with `auth`). */
function parsedRoute(routeDef: Route, ctx: RequestContext, rawParams: Record<string, string | undefined>, user: User | null, caller?: unknown): Reply | Promise<Reply> {
  let params: unknown = rawParams;
  if (routeDef.params !== undefined) {
    const parsed = v.safeParse(routeDef.params, rawParams);
    if (!parsed.success) return problem(issuesOf('path', parsed.issues));
    params = parsed.output;
  }
  // A refused query or body answers the path's own refusal first, when it has one (see `pathRefusal`).
  const needsRefusal = routeDef.pathRefusal !== undefined && user !== null;
  let query: unknown;
  if (routeDef.query !== undefined) {
    const parsed = parseQuery(routeDef.query, ctx.query);
    if (!parsed.ok) return needsRefusal ? refuse(routeDef, user, params, parsed.error) : problem(parsed.error);
    query = parsed.value;
  }
  if (routeDef.body !== undefined) return withBody(routeDef, ctx, params, query, user, caller);
  return routeDef.handle({ query, body: undefined, params, user, ctx, caller } as RouteInput<unknown, unknown, unknown, unknown>);
}

/** The body read and parsed, then the handler. */
async function withBody(routeDef: Route, ctx: RequestContext, params: unknown, query: unknown, user: User | null, caller: unknown): Promise<Reply> {
  const read = await readJsonBody(ctx.req);
  if (!read.ok) return refuse(routeDef, user, params, read.error, read.error.code === 'body_too_large' ? { connection: 'close' } : {});
  const parsed = v.safeParse(routeDef.body!, read.value);
  if (!parsed.success) return refuse(routeDef, user, params, issuesOf('body', parsed.issues));
  return routeDef.handle({ query, body: parsed.output, params, user, ctx, caller } as RouteInput<unknown, unknown, unknown, unknown>);
}
