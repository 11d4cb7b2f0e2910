import type { Failure } from '../../domain/errors.ts';
import type { Thread, User } from '../../domain/model.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import { isValidTitle } from '../../domain/thread-title.ts';
import type { ThreadChanges, ThreadEdits } from '../../ports/thread-edits.ts';
import type { ThreadStore } from '../../ports/thread-store.ts';

/**
 * A thread's owner renames it, archives it or brings it back (contract section 4, "Managing threads"). A
 * thread the caller cannot read is `thread_unavailable` (404, as every read under a thread); one they read as
 * a member is `not_thread_owner` (403, as a rewind by a member). The owner check is also the write's own `where`.
 */
export function threadEdits(storage: { readonly threads: ThreadStore; readonly writer: ThreadEdits }) {
  return async function editThread(user: User, threadId: string, changes: ThreadChanges): Promise<Result<Thread, Failure>> {
    if (changes.title !== undefined && !isValidTitle(changes.title)) {
      return fail({ code: 'validation_failed', errors: [{ path: 'body.title', message: 'must be 1 to 200 characters, with no control character' }] });
    }
    const thread = await storage.threads.findRow(user.id, threadId);
    if (thread === null) return fail({ code: 'thread_unavailable' });
    if (thread.owner !== user.id) return fail({ code: 'not_thread_owner' });
    const edited = await storage.writer.editThread(user.id, thread.id, changes);
    return edited === null ? fail({ code: 'thread_unavailable' }) : ok(edited);
  };
}

export type EditThread = ReturnType<typeof threadEdits>;
