import * as v from 'valibot';
import { isValidTitle } from '../../domain/thread-title.ts';
import { result } from '../http/reply.ts';
import { answer, Thread } from '../http/response-schemas.ts';
import { route, type Route } from '../http/route.ts';
import type { EditThread } from '../../core/threads/thread-edits.ts';
import type { PathAccesses } from '../../core/reads/path-access.ts';
import { storable, ThreadParams } from './schemas.ts';

/** A new title: trimmed, then 1 to 200 characters with no control character (domain/thread-title.ts). */
const Title = v.pipe(
  v.string('must be a string'),
  storable,
  v.trim(),
  v.check(isValidTitle, 'must be 1 to 200 characters, with no control character'),
);

/** What a thread's owner may change: at least one of the two, nothing else. */
export const ThreadEdit = v.pipe(
  v.strictObject({ title: v.optional(Title), archived: v.optional(v.boolean('must be true or false')) }),
  v.check((edit) => edit.title !== undefined || edit.archived !== undefined, 'must change title or archived'),
);

/** Managing threads (contract section 4): the owner renames, archives and unarchives a thread. */
export function consoleThreadRoutes(edit: EditThread, access: PathAccesses): Route[] {
  return [
    route({
      method: 'PATCH', path: '/api/console/threads/:id',
      summary: "Rename, archive or unarchive a thread (its owner only); an archived thread leaves the thread list unless it asks for archived threads",
      auth: true, params: ThreadParams, body: ThreadEdit, operationId: 'editThread',
      pathRefusal: ({ user, params }) => access.thread(user, params.id),
      responses: {
        200: answer('The thread row as it is after', Thread),
        401: 'No valid credential',
        403: "Not the thread's owner (`not_thread_owner`)",
        404: 'Thread unavailable',
        422: 'Nothing to change, an unknown field, a title empty once trimmed, over 200 characters or with a control character, or archived not a boolean (`validation_failed`)',
      },
      handle: async ({ user, params, body }) => result(200, await edit(user, params.id, body)),
    }),
  ];
}
