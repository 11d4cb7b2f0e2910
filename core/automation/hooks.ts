import type { Failure } from '../../domain/errors.ts';
import type { DirectiveOrigin, User } from '../../domain/model.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import type { Accounts } from '../../ports/accounts.ts';
import type { Catalog } from '../../ports/catalog.ts';
import type { Clock } from '../../ports/clock.ts';
import type { DirectiveAnswer } from '../../ports/directive-writes.ts';
import type { Hook, HookStore, StoredHook } from '../../ports/hook-store.ts';
import type { Secrets } from '../accounts/secrets.ts';
import type { PathAccess } from '../reads/path-access.ts';
import type { Directive } from '../runs/directives.ts';

/** The prefix of every hook secret: a leaked one is recognisable (secret scanners, logs). */
export const HOOK_SECRET_PREFIX = 'chook_';
/** How many hooks one person may hold: enough for every integration, few enough to review. */
export const MAX_HOOKS_PER_USER = 50;
/** How long an idempotency key answers its first call again (contract section 12). */
export const HOOK_KEY_WINDOW_MS = 24 * 3_600_000;

/** Where a hook's directives go: one thread, or a new thread each time (with a project and a model, as a directive's). */
export type HookTarget =
  | { readonly thread_id: string; readonly project: null; readonly model: null }
  | { readonly thread_id: null; readonly project: string | null; readonly model: string | null };

/** A hook just created: the only time its secret is shown. */
export interface CreatedHook extends Hook {
  readonly secret: string;
}

/** A call of a hook: the directive's text, and the caller's key for retrying it safely (null: none). */
export interface HookCall {
  readonly text: string;
  readonly idempotency_key: string | null;
}

/**
 * The use case a hook's call (or a schedule's fire) sends its directive through (core/runs/directives.ts), with
 * the hook or schedule as the directive's origin: its ledger message says where it came from.
 */
export type SubmitDirective = (user: User, ref: string, body: Directive, origin: DirectiveOrigin) => Promise<Result<DirectiveAnswer, Failure>>;

/**
 * Hooks in (contract section 12): created, listed and removed by their owner; called with their secret
 * (only its SHA-256 is stored), each call a directive sent as the owner, checked as the owner's own
 * directive would be at the time of the call. A call's `idempotency_key` names one call id for 24 hours
 * (HookStore.claimKey); the directive's `message_id` (`hook:<hook id>:<call id>`) and, for a hook without a
 * thread, the new thread's key (the call id) are made of it, so the directive's own transaction runs a
 * repeated call once, at once or later, and answers the first answer again.
 */
export function hooksIn(deps: {
  readonly hooks: HookStore;
  readonly accounts: Pick<Accounts, 'account'>;
  readonly catalog: Pick<Catalog, 'projects'>;
  /** Whether the caller may use a thread (owner or member): a hook to a thread is made only by one who may. */
  readonly threadAccess: PathAccess;
  readonly submit: SubmitDirective;
  readonly clock: Pick<Clock, 'now'>;
  readonly secrets: Secrets;
  readonly newId: () => string;
}) {
  const { hooks, secrets } = deps;
  return {
    /** A new hook; `validation_failed` for a project not in the catalog, `thread_unavailable` for a thread the caller cannot use. */
    async create(user: User, target: HookTarget): Promise<Result<CreatedHook, Failure>> {
      if (target.thread_id !== null) {
        const refused = await deps.threadAccess(user, target.thread_id);
        if (refused !== null) return fail(refused);
      } else if (target.project !== null && !(await deps.catalog.projects()).includes(target.project)) {
        return fail({ code: 'validation_failed', errors: [{ path: 'body.project', message: 'is not a project of GET /projects' }] });
      }
      const secret = `${HOOK_SECRET_PREFIX}${secrets.newSecret()}`;
      const hook: Hook = { id: deps.newId(), owner: user.id, ...target, created_at: new Date(deps.clock.now()).toISOString() };
      if (!(await hooks.create({ ...hook, secret_hash: secrets.hash(secret) }, MAX_HOOKS_PER_USER))) return fail({ code: 'too_many_hooks' });
      return ok({ ...hook, secret });
    },

    list: (userId: string) => hooks.list(userId),

    remove: (userId: string, id: string) => hooks.remove(userId, id),

    /**
     * The hook `id` names when `secret` is its secret, else null (no such hook, or another secret: one
     * answer, so a caller cannot tell which). The hashes are compared in constant time.
     */
    async authenticate(id: string, secret: string): Promise<StoredHook | null> {
      const hook = await hooks.find(id);
      const given = secrets.hash(secret);
      // Compared whether or not the hook exists, so neither answer is quicker.
      return sameHash(given, hook?.secret_hash ?? given.replace(/./g, '0')) && hook !== null ? hook : null;
    },

    /** Sends a call's directive as the hook's owner: `hook_owner_inactive` when the owner is deactivated. */
    async call(hook: StoredHook, call: HookCall): Promise<Result<DirectiveAnswer, Failure>> {
      const owner = await deps.accounts.account(hook.owner);
      if (owner === null || !owner.active) return fail({ code: 'hook_owner_inactive' });
      const now = deps.clock.now();
      const fresh = deps.newId();
      const callId = call.idempotency_key === null ? fresh : await hooks.claimKey({
        hook_id: hook.id, key: call.idempotency_key, call_id: fresh, at: new Date(now).toISOString(), since: new Date(now - HOOK_KEY_WINDOW_MS).toISOString(),
      });
      const toThread = hook.thread_id !== null;
      return deps.submit({ id: owner.id, name: owner.name }, hook.thread_id ?? callId, {
        text: call.text,
        message_id: `hook:${hook.id}:${callId}`,
        model: toThread ? null : hook.model,
        project: toThread ? null : hook.project,
        permission_mode: null,
        effort: null,
        when_busy: toThread ? 'queue' : null,
      }, { kind: 'hook', id: hook.id });
    },
  };
}

export type HooksIn = ReturnType<typeof hooksIn>;

/** Two hex digests of one length compared in constant time, without Node's crypto (core runs anywhere). */
function sameHash(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let differ = 0;
  for (let i = 0; i < a.length; i += 1) differ |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return differ === 0;
}
