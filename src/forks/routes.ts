import * as v from 'valibot';
import { storable, UuidParam } from '../console-api/schemas.ts';
import { result } from '../http/reply.ts';
import { route, type Route } from '../http/route.ts';
import { answer, Forked } from '../http/response-schemas.ts';
import { spendDirective } from '../runs/directive-budget.ts';
import type { WindowLimiter } from '../limits/window-limiter.ts';
import type { ThreadFork } from '../../core/forks/forks.ts';
import type { PathAccesses } from '../../core/reads/path-access.ts';

const word = (max: number) => v.pipe(v.string('must be a string'), v.nonEmpty('must not be empty'), v.maxLength(max, `must be at most ${max} characters`), storable);

/** A fork's body (contract section 11): the message to fork at, and optionally the first directive and a model of the source's agent. */
const ForkBody = v.object({
  message_id: UuidParam,
  text: v.optional(v.nullable(
    v.pipe(v.string('must be a string'), v.check((text) => text.trim() !== '', 'must not be blank'), v.maxLength(100_000, 'must be at most 100000 characters'), storable),
  ), null),
  model: v.optional(v.nullable(word(200)), null),
});

/** Fork from a message; `access` answers 404 first when a body is refused. A fork with text is a directive: it spends the directive budget. */
export function forkRoutes(fork: ThreadFork, access: PathAccesses, directiveLimit?: WindowLimiter): Route[] {
  return [
    route({
      method: 'POST', path: '/api/console/threads/:id/fork',
      summary: "Fork the thread at a message: a new console thread of the caller's that sees the ledger up to it; with text, its first directive",
      auth: true, params: v.object({ id: UuidParam }), body: ForkBody, operationId: 'forkThread',
      pathRefusal: ({ user, params }) => access.thread(user, params.id),
      responses: {
        201: answer('The fork', Forked),
        401: 'No valid credential',
        404: 'Thread unavailable',
        409: "The thread has no conversation to fork, or the message's run has not ended (turn_running) or not begun (queue_not_empty)",
        422: "A message that is not in the thread's ledger, a model its agent does not offer, or a body that is not valid",
        429: 'Too many directives this minute (Retry-After), for a fork with text',
      },
      handle: async ({ user, params, body }) => (body.text === null ? null : spendDirective(directiveLimit, user.id)) ?? result(201, await fork(user, params.id, body)),
    }),
  ];
}
