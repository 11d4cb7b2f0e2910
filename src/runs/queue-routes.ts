import * as v from 'valibot';
import { storable, UuidParam } from '../console-api/schemas.ts';
import { answer, QueuedDirective } from '../http/response-schemas.ts';
import { empty, problem, result } from '../http/reply.ts';
import { route, type Route } from '../http/route.ts';
import type { PathAccesses } from '../../core/reads/path-access.ts';
import type { ThreadQueue } from '../../core/runs/queue.ts';
import type { WindowLimiter } from '../limits/window-limiter.ts';
import { spendDirective } from './directive-budget.ts';

const P = '/api/console/threads';
const ItemParams = v.object({ id: UuidParam, item: UuidParam });
/** A queued directive's new text: as a directive's. */
const EditBody = v.object({
  text: v.pipe(v.string('must be a string'), v.check((text) => text.trim() !== '', 'must not be blank'), v.maxLength(100_000, 'must be at most 100000 characters'), storable),
});

/** A thread's queue of directives (contract section 7): read it, edit or withdraw an item that has not started. */
export function queueRoutes(
  queue: ThreadQueue,
  access: PathAccesses,
  /** The directives budget (runRoutes'): an edit spends one of it. */
  budget?: WindowLimiter,
): Route[] {
  return [
    route({
      method: 'GET',
      path: `${P}/:id/queue`,
      summary: "The thread's queued directives, the next to run first (owner and members)",
      auth: true,
      params: v.object({ id: UuidParam }),
      operationId: 'listQueue',
      responses: { 200: answer('The queued directives', v.array(QueuedDirective)), 401: 'No valid credential', 404: 'Thread unavailable' },
      handle: async ({ user, params }) => result(200, await queue.list(user, params.id)),
    }),
    route({
      method: 'PATCH',
      path: `${P}/:id/queue/:item`,
      summary: 'Edit the text of a queued directive that has not started (its author or the thread owner); its ledger message follows',
      auth: true,
      params: ItemParams,
      body: EditBody,
      operationId: 'editQueued',
      pathRefusal: ({ user, params }) => access.thread(user, params.id),
      responses: {
        200: answer('The queued directive, edited', QueuedDirective),
        401: 'No valid credential',
        403: "Neither the directive's author nor the thread owner",
        404: 'Thread unavailable',
        409: 'The directive already started or was withdrawn',
        422: 'Not a text',
        429: 'Too many directives this minute, edits and reviews included (Retry-After)',
      },
      handle: async ({ user, params, body }) => spendDirective(budget, user.id) ?? result(200, await queue.edit(user, params.id, params.item, body.text)),
    }),
    route({
      method: 'DELETE',
      path: `${P}/:id/queue/:item`,
      summary: 'Withdraw a queued directive that has not started (its author or the thread owner); the ledger says so',
      auth: true,
      params: ItemParams,
      operationId: 'withdrawQueued',
      responses: {
        204: 'Withdrawn: it never runs',
        401: 'No valid credential',
        403: "Neither the directive's author nor the thread owner",
        404: 'Thread unavailable',
        409: 'The directive already started or was withdrawn',
      },
      handle: async ({ user, params }) => {
        const revoked = await queue.revoke(user, params.id, params.item);
        return revoked.ok ? empty(204) : problem(revoked.error);
      },
    }),
  ];
}
