import * as v from 'valibot';
import { storable, UuidParam } from '../console-api/schemas.ts';
import { answer, DirectiveAccepted } from '../http/response-schemas.ts';
import { problem, result, type Reply } from '../http/reply.ts';
import { route, type Route } from '../http/route.ts';
import type { PathAccesses } from '../../core/reads/path-access.ts';
import type { ThreadChanges } from '../../core/worktrees/changes.ts';
import type { WindowLimiter } from '../limits/window-limiter.ts';
import { spendDirective } from './directive-budget.ts';
import { CHANGE_STATUSES } from '../../domain/worktree.ts';

const P = '/api/console/threads';
const Params = v.object({ id: UuidParam });
const text = (max: number) => v.pipe(v.string('must be a string'), v.maxLength(max, `must be at most ${max} characters`), storable);
const nullable = <T extends v.GenericSchema<unknown, unknown>>(schema: T) => v.optional(v.nullable(schema), null);
const count = v.pipe(v.number(), v.integer());

/** GET /threads/{id}/changes. */
const ChangesAnswer = v.strictObject({
  base: v.string(),
  branch: v.string(),
  ahead: count,
  behind: count,
  uncommitted: count,
  files: v.array(v.strictObject({
    path: v.string(),
    status: v.picklist(CHANGE_STATUSES),
    old_path: v.optional(v.string()),
    additions: count,
    deletions: count,
    binary: v.boolean(),
  })),
});

const DiffQuery = v.object({ path: v.optional(v.pipe(text(4096), v.nonEmpty('must not be empty'))) });

const MergeBody = v.object({
  message: nullable(v.pipe(text(10_000), v.check((message) => message.trim() !== '', 'must not be blank'))),
  strategy: v.picklist(['squash', 'merge'], 'must be squash or merge'),
});
const Merged = v.strictObject({ commit: v.string(), base: v.string() });

const ReviewBody = v.object({
  comments: v.pipe(
    v.array(v.strictObject({
      path: v.pipe(text(4096), v.nonEmpty('must not be empty')),
      line: v.pipe(v.number('must be a number'), v.integer('must be an integer'), v.minValue(1, 'must be at least 1'), v.maxValue(10_000_000, 'must be at most 10000000')),
      text: v.pipe(text(4_000), v.check((comment) => comment.trim() !== '', 'must not be blank')),
    })),
    v.minLength(1, 'must hold at least one comment'),
    v.maxLength(20, 'must hold at most 20 comments'),
  ),
  text: nullable(text(20_000)),
  message_id: nullable(v.pipe(text(200), v.nonEmpty('must not be empty'))),
  when_busy: nullable(v.picklist(['reject', 'queue', 'interrupt'], 'must be reject, queue or interrupt')),
});

const UNDER_THREAD = { 401: 'No valid credential', 404: 'Thread unavailable', 409: 'The thread has no worktree', 503: 'git is unavailable, or the repository cannot be used' };

/** A thread's changes in its worktree (contract section 8): read them, diff a file, merge them into the base, review them. */
export function changesRoutes(
  changes: ThreadChanges,
  access: PathAccesses,
  /** The directives budget (runRoutes'): a review is sent as a directive, and spends one of it. */
  budget?: WindowLimiter,
): Route[] {
  return [
    route({
      method: 'GET', path: `${P}/:id/changes`, operationId: 'threadChanges', auth: true, params: Params,
      summary: "What the thread's worktree changed (committed, uncommitted, untracked) against the merge base with its base branch (owner and members)",
      responses: { 200: answer('The changed files', ChangesAnswer), ...UNDER_THREAD },
      handle: async ({ user, params }) => result(200, await changes.changes(user, params.id)),
    }),
    route({
      method: 'GET', path: `${P}/:id/changes/diff`, operationId: 'threadChangesDiff', auth: true, params: Params, query: DiffQuery,
      pathRefusal: ({ user, params }) => access.thread(user, params.id),
      summary: 'The unified diff of one changed file (path), or of all, at most 2 MiB (owner and members)',
      responses: {
        200: { description: 'The unified diff', mediaType: 'text/x-diff' },
        ...UNDER_THREAD,
        404: 'Thread unavailable, or the path is not among the changed files',
        413: 'The diff is larger than 2 MiB',
      },
      handle: async ({ user, params, query }): Promise<Reply> => {
        const diff = await changes.diff(user, params.id, query.path ?? null);
        if (!diff.ok) return problem(diff.error);
        return { status: 200, headers: { 'content-type': 'text/x-diff; charset=utf-8', 'cache-control': 'no-store' }, body: diff.value };
      },
    }),
    route({
      method: 'POST', path: `${P}/:id/changes/merge`, operationId: 'mergeThreadChanges', auth: true, params: Params, body: MergeBody,
      pathRefusal: ({ user, params }) => access.thread(user, params.id),
      summary: "Commit what the thread's worktree holds and merge its branch into the base (owner only; not while a turn runs or directives are queued)",
      responses: {
        200: answer('Merged: the commit the base points to now', Merged),
        ...UNDER_THREAD,
        403: "Not the thread's owner",
        409: 'No worktree, a turn is running, directives are queued, a rewind is putting the files back, the changes conflict (files) or the base checkout is dirty or moved: the base is unchanged',
        422: 'Not a strategy or message',
      },
      handle: async ({ user, params, body }) => result(200, await changes.merge(user, params.id, body)),
    }),
    route({
      method: 'POST', path: `${P}/:id/changes/review`, operationId: 'reviewThreadChanges', auth: true, params: Params, body: ReviewBody,
      pathRefusal: ({ user, params }) => access.thread(user, params.id),
      summary: "Review comments on lines of the thread's changes, sent as its next directive quoting each with the lines around it (when_busy as a directive's)",
      responses: {
        202: answer("Accepted as a directive: as POST /directives answers", DirectiveAccepted),
        ...UNDER_THREAD,
        403: 'Not the thread owner (members may only queue or interrupt)',
        409: 'No worktree, or a turn is running (without when_busy), or directives are queued, or another user sent this message_id on the thread',
        422: 'A comment names no changed file, or the body is not valid',
        429: 'Too many directives this minute, edits and reviews included (Retry-After), or the queue holds 20 already',
      },
      handle: async ({ user, params, body }) => spendDirective(budget, user.id) ?? result(202, await changes.review(user, params.id, body)),
    }),
  ];
}
