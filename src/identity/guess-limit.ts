import { fail, ok, type Result } from '../../domain/result.ts';
import { clientAddress, type RequestContext } from '../http/context.ts';
import { problem, type Reply } from '../http/reply.ts';
import { clientKey } from '../limits/client-key.ts';
import type { WindowLimiter } from '../limits/window-limiter.ts';

/**
 * Looks a credential up within its client's budget of failures (SIGNIN_ATTEMPTS_PER_MINUTE), one
 * budget per client address shared by every path that looks one up (sign-in, bearer token, session
 * cookie, the live socket's handshake, the metrics token). `lookUp` answers whom the credential
 * names, or null for no one (a failure, counted). Answers what `lookUp` found, or the 429 for a
 * client that used up its failures, the credential then not looked up. Only the client that guessed
 * is held up: a correct credential from any other client is always looked up, so no one can lock a
 * user out by guessing near their token.
 */
export type GuessLimit = <T>(ctx: RequestContext, lookUp: () => Promise<T | null>) => Promise<Result<T | null, Reply>>;

export function guessLimit(options: {
  readonly limiter: WindowLimiter;
  readonly trustProxy: boolean;
  /** Told of each failure and each refusal (metrics). */
  readonly observe?: { readonly failed: () => void; readonly refused: () => void };
}): GuessLimit {
  const { limiter, trustProxy, observe } = options;
  /** Per client: its lookups under way, and the requests waiting for one of them to end. */
  const pending = new Map<string, { running: number; waiting: (() => void)[] }>();
  const refusal = (wait: number): Reply => {
    observe?.refused();
    // A blocked client learns nothing about its credential, right or wrong: it is not looked up.
    return problem({ code: 'too_many_sign_ins' }, { 'retry-after': String(wait), 'cache-control': 'no-store' });
  };
  return async (ctx, lookUp) => {
    const key = clientKey(clientAddress(ctx, trustProxy));
    // Any lookup under way may yet be a failure: checking the failures alone let a pipelined burst
    // be looked up whole before its first failure counted. So a lookup starts only while failures
    // and lookups under way stay within the budget; past that the request waits for one to end
    // (waiting, not refusing: a client sending right credentials at once is never refused for it).
    for (;;) {
      const wait = limiter.blocked(key);
      if (wait !== null) return fail(refusal(wait));
      const state = pending.get(key) ?? { running: 0, waiting: [] };
      if (state.running < limiter.left(key)) {
        state.running += 1;
        pending.set(key, state);
        break;
      }
      pending.set(key, state);
      await new Promise<void>((resolve) => state.waiting.push(resolve));
    }
    let found: Awaited<ReturnType<typeof lookUp>> = null;
    try {
      found = await lookUp();
      if (found === null) {
        observe?.failed();
        limiter.record(key);
      }
    } finally {
      // Waiters look again, as many as there is room for now: each woken one starts a lookup (or,
      // when the budget is spent, every one is woken to be refused). Waking them all on every end
      // cost each request a promise per waiter under load, and woke many only to wait again; one
      // not woken now is woken when a lookup under way ends, so none is left behind.
      const state = pending.get(key)!;
      state.running -= 1;
      const room = limiter.blocked(key) === null ? limiter.left(key) - state.running : state.waiting.length;
      const woken = room > 0 ? state.waiting.splice(0, room) : [];
      if (state.running === 0 && state.waiting.length === 0) pending.delete(key);
      for (const wake of woken) wake();
    }
    return ok(found);
  };
}
