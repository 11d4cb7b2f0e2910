import * as v from 'valibot';
import type { HooksIn } from '../../core/automation/hooks.ts';
import type { Hook, StoredHook } from '../../ports/hook-store.ts';
import { fail, ok } from '../../domain/result.ts';
import { storable, UuidParam } from '../console-api/schemas.ts';
import { DirectiveBody } from '../runs/routes.ts';
import { spendDirective } from '../runs/directive-budget.ts';
import { originText, type RequestContext } from '../http/context.ts';
import { answer, CreatedHookInfo, DirectiveAccepted, HookInfo } from '../http/response-schemas.ts';
import { empty, json, problem, result } from '../http/reply.ts';
import { route, type Route } from '../http/route.ts';
import type { SurfaceDefinition } from '../http/surface.ts';
import type { GuessLimit } from '../identity/guess-limit.ts';
import type { WindowLimiter } from '../limits/window-limiter.ts';

const P = '/api/console/hooks';
/** Where a hook is called: its own surface, outside `/api/console` (no same-origin guard: callers are other services). */
export const HOOK_CALL_PATH = '/api/hooks';
/** Hooks are the caller's own: never kept by a cache. */
const NO_STORE = { 'cache-control': 'no-store' };

const word = (max: number) => v.pipe(v.string('must be a string'), v.nonEmpty('must not be empty'), v.maxLength(max, `must be at most ${max} characters`), storable);

/** A thread, or a project and a model for a new thread each time: not both. */
const NewHook = v.pipe(
  v.object({
    thread_id: v.optional(v.nullable(v.pipe(v.string('must be a string'), v.uuid('must be a thread id'))), null),
    project: v.optional(v.nullable(word(200)), null),
    model: v.optional(v.nullable(word(200)), null),
  }),
  v.forward(v.check((hook) => hook.thread_id === null || (hook.project === null && hook.model === null), 'must be absent with thread_id: the thread has its own'), ['project']),
);

/** A call: the directive's text (as a directive's), and a key that makes a retry within 24 hours run nothing. */
const HookCallBody = v.object({
  text: DirectiveBody.entries.text,
  idempotency_key: v.optional(v.nullable(word(200)), null),
});

/** The URL a hook is called at: on the origin the request that shows it came to (a path when it has none). */
const urlOf = (ctx: RequestContext, id: string) => `${originText(ctx.origin) ?? ''}${HOOK_CALL_PATH}/${id}`;
const shown = (ctx: RequestContext, hook: Hook) => ({ ...hook, url: urlOf(ctx, hook.id) });

/** The refusal of a call whose hook or secret is wrong: one answer for both, so a caller cannot tell a hook exists. */
const wrongHook = () => problem({ code: 'unauthenticated', detail: 'No hook by this id takes this secret' }, { 'www-authenticate': 'Bearer', ...NO_STORE });

/** The caller's hooks (CONTRACT section 12, "Hooks in"): create one (the secret is in that answer only), list them, remove one. */
export function hookRoutes(hooks: HooksIn): Route[] {
  return [
    route({
      method: 'POST',
      path: P,
      summary: 'A new hook: POST /api/hooks/{id} with `Authorization: Bearer <secret>` sends a directive as the caller; the secret is shown once',
      operationId: 'createHook',
      auth: true,
      body: NewHook,
      responses: {
        201: answer('The hook, with its URL and its secret, shown once', CreatedHookInfo),
        401: 'No valid credential',
        403: 'The caller authenticated with a personal access token (`credential_not_allowed`)',
        404: 'A thread the caller cannot use (`thread_unavailable`)',
        409: 'The caller holds as many hooks as allowed (`too_many_hooks`)',
        422: 'A bad thread id, a project not in GET /projects, or a project or model with a thread (`validation_failed`)',
      },
      handle: async ({ user, body, ctx }) => {
        // A leaked token must not be able to mint a credential that outlives its expiry or its revocation.
        if (user.via === 'token') return problem({ code: 'credential_not_allowed', detail: 'A personal access token cannot create hooks: sign in to the console to create one' });
        const target = body.thread_id !== null ? { thread_id: body.thread_id, project: null, model: null } : { thread_id: null, project: body.project, model: body.model };
        const created = await hooks.create(user, target);
        return created.ok ? json(201, { ...created.value, url: urlOf(ctx, created.value.id) }, NO_STORE) : problem(created.error);
      },
    }),
    route({
      method: 'GET',
      path: P,
      summary: "The caller's hooks, newest first, without their secrets",
      operationId: 'listHooks',
      auth: true,
      responses: { 200: answer("The caller's hooks", v.array(HookInfo)), 401: 'No valid credential' },
      handle: async ({ user, ctx }) => json(200, (await hooks.list(user.id)).map((hook) => shown(ctx, hook)), NO_STORE),
    }),
    route({
      method: 'DELETE',
      path: `${P}/:id`,
      summary: "Remove one of the caller's hooks: its calls are refused at once, on every instance",
      operationId: 'removeHook',
      auth: true,
      params: v.object({ id: UuidParam }),
      responses: { 204: 'Removed', 401: 'No valid credential', 404: 'The caller has no hook by this id (`hook_not_found`)', 422: 'Not a hook id (`validation_failed`)' },
      handle: async ({ user, params }) => ((await hooks.remove(user.id, params.id)) ? empty(204) : problem({ code: 'hook_not_found' })),
    }),
  ];
}

/**
 * `POST /api/hooks/{id}`: a call of a hook, with its secret as the bearer credential, checked first (before
 * the body is read) within the client's budget of failed credentials (`guesses`), then the directive sent
 * as the hook's owner, on the owner's budget of directives.
 */
export function hookCallRoute(hooks: HooksIn, guesses: GuessLimit, directiveLimit?: WindowLimiter): Route {
  return route({
    method: 'POST',
    path: `${HOOK_CALL_PATH}/:id`,
    summary: "Call a hook: a directive sent as its owner (to its thread, queued when busy, or to a new thread); idempotent by idempotency_key for 24 hours",
    operationId: 'callHook',
    params: v.object({ id: UuidParam }),
    body: HookCallBody,
    credential: async (ctx: RequestContext, params: Record<string, string | undefined>) => {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(ctx.req.headers.authorization ?? '');
      // No secret at all is no guess: refused, counted nowhere.
      if (match === null) return fail(wrongHook());
      const id = params.id ?? '';
      const found = await guesses<StoredHook>(ctx, () => hooks.authenticate(id, match[1]!));
      if (!found.ok) return found;
      return found.value === null ? fail(wrongHook()) : ok(found.value);
    },
    responses: {
      202: answer("The directive's answer, as POST /api/console/threads/{thread}/directives answers it (the first answer again for a repeated idempotency_key)", DirectiveAccepted),
      400: 'Not JSON (`malformed_json`)',
      401: 'No secret, a wrong one, or no such hook: one answer for all (`unauthenticated`)',
      403: "The hook's owner is deactivated (`hook_owner_inactive`)",
      404: "The hook's thread is no longer one its owner can use (`thread_unavailable`)",
      409: 'The thread cannot take a directive now (as a directive: `conversation_moved`, `queue_full` is 429)',
      422: 'No text, a text over 100000 characters, or a model the console does not offer (`validation_failed`)',
      429: 'Too many failed credentials from this client (`too_many_sign_ins`), or too many directives of the owner this minute (`too_many_directives`); Retry-After',
    },
    handle: async ({ caller, body }) =>
      spendDirective(directiveLimit, caller.owner) ?? result(202, await hooks.call(caller, { text: body.text, idempotency_key: body.idempotency_key ?? null })),
  });
}

/** The hooks' call surface (`/api/hooks/...`): no same-origin guard (its callers are other services, with no cookie), never cached. */
export function hookSurface(routes: readonly Route[]): SurfaceDefinition {
  return {
    name: 'hooks',
    owns: (path) => path === HOOK_CALL_PATH || path.startsWith(`${HOOK_CALL_PATH}/`),
    guards: [],
    routes,
    headers: NO_STORE,
  };
}
