import { clientAddress, type RequestContext } from '../http/context.ts';
import { problem, type Reply } from '../http/reply.ts';
import { clientKey } from '../limits/client-key.ts';
import type { WindowLimiter } from '../limits/window-limiter.ts';

/**
 * Failed credentials counted per client, on every path that looks one up (sign-in, bearer token,
 * session cookie, the live socket's handshake, the metrics token): one budget per client address
 * (SIGNIN_ATTEMPTS_PER_MINUTE). Only the client that guessed is held up: a correct credential from
 * any other client is always looked up, so no one can lock a user out by guessing near their token.
 */
export interface GuessLimit {
  /** The answer to a client that used up its failures (429 with `Retry-After`), or null: ask before the lookup. */
  readonly refusal: (ctx: RequestContext) => Reply | null;
  /** Counts one credential that named no one, against the request's client. */
  readonly failed: (ctx: RequestContext) => void;
}

export function guessLimit(options: {
  readonly limiter: WindowLimiter;
  readonly trustProxy: boolean;
  /** Told of each failure and each refusal (metrics). */
  readonly observe?: { readonly failed: () => void; readonly refused: () => void };
}): GuessLimit {
  const { limiter, trustProxy, observe } = options;
  const keyOf = (ctx: RequestContext) => clientKey(clientAddress(ctx, trustProxy));
  return {
    refusal(ctx) {
      const wait = limiter.blocked(keyOf(ctx));
      if (wait === null) return null;
      observe?.refused();
      // A blocked client learns nothing about its credential, right or wrong: it is not looked up.
      return problem({ code: 'too_many_sign_ins' }, { 'retry-after': String(wait), 'cache-control': 'no-store' });
    },
    failed(ctx) {
      observe?.failed();
      limiter.record(keyOf(ctx));
    },
  };
}
