import * as v from 'valibot';
import type { WindowLimiter } from '../limits/window-limiter.ts';
import { storable, UuidParam } from '../console-api/schemas.ts';
import { result } from '../http/reply.ts';
import { spendDirective } from './directive-budget.ts';
import { route, type Route } from '../http/route.ts';
import type { Directive } from '../../core/runs/directives.ts';
import type { CancelTurn } from '../../core/runs/cancel.ts';
import type { Answering } from '../../core/runs/answers.ts';
import type { PathAccesses } from '../../core/reads/path-access.ts';
import type { DirectiveAnswer } from '../../ports/directive-writes.ts';
import type { Failure } from '../../domain/errors.ts';
import type { Result } from '../../domain/result.ts';
import type { User } from '../../domain/model.ts';
import { answer, Answered, Cancelled, Conversation, DirectiveAccepted } from '../http/response-schemas.ts';

const P = '/api/console';
const word = (max: number) => v.pipe(v.string('must be a string'), v.nonEmpty('must not be empty'), v.maxLength(max, `must be at most ${max} characters`), storable);
const nullable = <T extends v.GenericSchema<unknown, string>>(schema: T) => v.optional(v.nullable(schema), null);

/** DirectiveBody (spec): every field but `text` optional; null asks for nothing. */
export const DirectiveBody = v.object({
  text: v.pipe(v.string('must be a string'), v.check((text) => text.trim() !== '', 'must not be blank'), v.maxLength(100_000, 'must be at most 100000 characters'), storable),
  message_id: nullable(word(200)),
  model: nullable(word(200)),
  project: nullable(word(200)),
  permission_mode: nullable(word(100)),
  effort: nullable(word(100)),
  /**
   * On a busy thread: refuse (`reject`, or absent), `queue` it, `interrupt` the running turn and run it next, or
   * `steer` it into the running turn where the agent takes it (else queued, contract section 11).
   */
  when_busy: nullable(v.picklist(['reject', 'queue', 'interrupt', 'steer'], 'must be reject, queue, interrupt or steer')),
});

const ResponsesBody = v.object({
  responses: v.pipe(
    v.array(
      v.union(
        [v.strictObject({ id: UuidParam, option: word(200) }), v.strictObject({ id: UuidParam, answer: v.pipe(v.string(), v.maxLength(100_000), storable) })],
        'must be {"id", "option"} or {"id", "answer"}',
      ),
    ),
    v.minLength(1, 'must answer at least one item'),
    v.maxLength(100, 'must answer at most 100 items'),
    v.check((list) => new Set(list.map((r) => r.id)).size === list.length, 'must not answer an item twice'),
  ),
});

const PermissionModeBody = v.object({ permission_mode: word(100) });

/** The console's writes: directives, batch responses, and the posture switch; `access` answers 404 first when a body is refused. */
export function runRoutes(
  submit: (user: User, ref: string, body: Directive) => Promise<Result<DirectiveAnswer, Failure>>,
  answers: Answering,
  cancel: CancelTurn,
  access: PathAccesses,
  /** Directives per user per minute (429 with `Retry-After` past it), shared with queue edits and reviews; none, no limit. */
  directiveLimit?: WindowLimiter,
): Route[] {
  return [
    route({
      method: 'POST',
      path: `${P}/threads/:thread/directives`,
      summary: 'Create or continue a console thread; 202 once the turn is on its way, once queued on a busy thread (when_busy), or once steered into the running turn (when_busy steer); idempotent by message_id',
      auth: true,
      params: v.object({ thread: UuidParam }),
      body: DirectiveBody,
      operationId: 'sendDirective',
      pathRefusal: ({ user, params }) => access.threadOrKey(user, params.thread),
      responses: {
        202: answer('Accepted: the turn is on its way (run_id), or, on a busy thread with when_busy queue or interrupt, queued (queued, no run_id); with when_busy steer, steered (true: into the running run, run_id) or not (false: queued, or started)', DirectiveAccepted),
        401: 'No valid credential',
        403: 'Not the thread owner (members may only queue, interrupt or steer)',
        409: 'A differing model, a turn is running (without when_busy), directives are queued, or another user sent this message_id on the thread',
        422: 'Outside a vocabulary',
        429: 'Too many directives this minute (Retry-After), or the queue holds 20 already',
      },
      handle: async ({ user, params, body }) => spendDirective(directiveLimit, user.id) ?? result(202, await submit(user, params.thread, body)),
    }),
    route({
      method: 'POST',
      path: `${P}/threads/:id/responses`,
      summary: 'Answer pending approvals and questions, all or none',
      auth: true,
      params: v.object({ id: UuidParam }),
      body: ResponsesBody,
      operationId: 'answerPending',
      pathRefusal: ({ user, params }) => access.thread(user, params.id),
      responses: { 202: answer('Applied, all of them', Answered), 401: 'No valid credential', 404: 'Thread unavailable', 422: 'An item not pending on this thread, or an option it does not offer: nothing applied' },
      handle: async ({ user, params, body }) => {
        return result(202, await answers.answer(user, params.id, body.responses));
      },
    }),
    route({
      method: 'POST',
      path: `${P}/threads/:id/cancel`,
      summary: 'Cancel the turn running on a thread (owner and members); its pending asks are answered cancelled',
      auth: true,
      params: v.object({ id: UuidParam }),
      operationId: 'cancelTurn',
      responses: { 202: answer('The cancel is on its way to the instance running the turn', Cancelled), 401: 'No valid credential', 404: 'Thread unavailable', 409: 'No turn is running' },
      handle: async ({ user, params }) => {
        return result(202, await cancel(user, params.id));
      },
    }),
    route({
      method: 'PATCH',
      path: `${P}/conversations/:id/permission-mode`,
      summary: "Switch a conversation's approval posture (reaches a live agent session too)",
      auth: true,
      params: v.object({ id: UuidParam }),
      body: PermissionModeBody,
      operationId: 'setPermissionMode',
      pathRefusal: ({ user, params }) => access.conversation(user, params.id),
      responses: { 200: answer('The conversation row', Conversation), 401: 'No valid credential', 404: 'Conversation unavailable', 422: 'Not a mode of the agent' },
      handle: async ({ user, params, body }) => {
        return result(200, await answers.setPermissionMode(user, params.id, body.permission_mode));
      },
    }),
  ];
}
