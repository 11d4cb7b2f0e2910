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

/** A request waiting for its lookup to be admitted, and how to tell it what came of it. */
interface Waiter {
  readonly lookUp: () => Promise<unknown>;
  readonly resolve: (result: Result<unknown, Reply>) => void;
  readonly reject: (error: unknown) => void;
}

export function guessLimit(options: {
  readonly limiter: WindowLimiter;
  readonly trustProxy: boolean;
  /** Told of each failure and each refusal (metrics). */
  readonly observe?: { readonly failed: () => void; readonly refused: () => void };
}): GuessLimit {
  const { limiter, trustProxy, observe } = options;
  /** Per client: its lookups under way, and the requests waiting for one of them to end. */
  const pending = new Map<string, { running: number; waiting: Waiter[] }>();
  const refusal = (wait: number): Reply => {
    observe?.refused();
    // A blocked client learns nothing about its credential, right or wrong: it is not looked up.
    return problem({ code: 'too_many_sign_ins' }, { 'retry-after': String(wait), 'cache-control': 'no-store' });
  };
  /**
   * Admits a lookup for `key` when failures and lookups under way stay within its budget (counted as
   * under way), else answers the refusal of a blocked client, or false: the request waits.
   */
  const admit = (key: string): true | false | Reply => {
    const wait = limiter.blocked(key);
    if (wait !== null) return refusal(wait);
    let state = pending.get(key);
    if (state === undefined) pending.set(key, (state = { running: 0, waiting: [] }));
    if (state.running < limiter.left(key)) {
      state.running += 1;
      return true;
    }
    return false;
  };
  /** A lookup ended (`failed`: it named no one): counted, and the waiters there is room for now woken. */
  const ended = (key: string, failed: boolean): void => {
    if (failed) {
      observe?.failed();
      limiter.record(key);
    }
    // Waiters look again, as many as there is room for now: each woken one starts a lookup (or,
    // when the budget is spent, every one is woken to be refused). Waking them all on every end
    // cost each request a promise per waiter under load, and woke many only to wait again; one
    // not woken now is woken when a lookup under way ends, so none is left behind.
    const state = pending.get(key)!;
    state.running -= 1;
    const room = limiter.blocked(key) === null ? limiter.left(key) - state.running : state.waiting.length;
    const woken = room > 0 ? state.waiting.splice(0, room) : [];
    if (state.running === 0 && state.waiting.length === 0) pending.delete(key);
    for (const waiter of woken) retry(key, waiter);
  };
  /** An admitted lookup, its result told to `settle` as it ends (counted first). */
  const look = <T>(key: string, lookUp: () => Promise<T | null>, resolve: (result: Result<T | null, Reply>) => void, reject: (error: unknown) => void): void => {
    let looking: Promise<T | null>;
    try {
      looking = lookUp();
    } catch (error) {
      ended(key, false);
      reject(error);
      return;
    }
    looking.then(
      (found) => {
        ended(key, found === null);
        resolve(ok(found));
      },
      (error: unknown) => {
        ended(key, false);
        reject(error);
      },
    );
  };
  /** A waiting request woken: admitted (its lookup starts), refused, or back among the waiters. */
  const retry = (key: string, waiter: Waiter): void => {
    const admitted = admit(key);
    if (admitted === true) look(key, waiter.lookUp, waiter.resolve, waiter.reject);
    else if (admitted !== false) waiter.resolve(fail(admitted));
    else pending.get(key)!.waiting.push(waiter);
  };
  /**
   * A request past the budget: waits among its client's waiters (a plain record: no promise and no
   * closure of its own) for a lookup under way to end, then is admitted, refused, or waits again.
   */
  const queued = <T>(key: string, lookUp: () => Promise<T | null>): Promise<Result<T | null, Reply>> =>
    new Promise((resolve, reject) => {
      pending.get(key)!.waiting.push({ lookUp, resolve, reject } as Waiter);
    });
  return <T>(ctx: RequestContext, lookUp: () => Promise<T | null>): Promise<Result<T | null, Reply>> => {
    // Any lookup under way may yet be a failure: checking the failures alone let a pipelined burst
    // be looked up whole before its first failure counted. So a lookup starts only while failures
    // and lookups under way stay within the budget; past that the request waits for one to end
    // (waiting, not refusing: a client sending right credentials at once is never refused for it).
    const key = clientKey(clientAddress(ctx, trustProxy));
    const admitted = admit(key);
    if (admitted === false) return queued(key, lookUp);
    if (admitted !== true) return Promise.resolve(fail(admitted));
    let looking: Promise<T | null>;
    try {
      looking = lookUp();
    } catch (error) {
      ended(key, false);
      return Promise.reject(error);
    }
    // What it found, counted as it settles: one promise, no `async` step.
    return looking.then(
      (found) => {
        ended(key, found === null);
        return ok(found);
      },
      (error: unknown) => {
        ended(key, false);
        throw error;
      },
    );
  };
}
