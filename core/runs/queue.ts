import type { Failure } from '../../domain/errors.ts';
import type { User } from '../../domain/model.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import type { QueueChange, QueuedDirective } from '../../ports/queue-edits.ts';
import type { EventBus } from '../../ports/event-bus.ts';
import type { ThreadStore } from '../../ports/thread-store.ts';
import type { QueueEdits } from '../../ports/queue-edits.ts';

type Answer<T> = Promise<Result<T, Failure>>;

/** The words of a withdrawn directive in the ledger line that says so. */
const EXCERPT = 80;

/**
 * The queue of a thread (contract section 7): its owner and members read it; a queued directive is
 * edited or withdrawn by its author or the thread's owner, until it starts. Another user's thread is 404.
 */
export function threadQueue(deps: { readonly storage: { readonly threads: ThreadStore; readonly writer: QueueEdits }; readonly bus: EventBus }) {
  const { storage, bus } = deps;

  /** The refusal of a change the storage did not make, or the change's events published. */
  async function settled<T>(change: QueueChange<T>): Promise<Result<QueueChange<T> & { kind: 'done' }, Failure>> {
    if (change.kind === 'gone') return fail({ code: 'queue_item_gone' });
    if (change.kind === 'forbidden') return fail({ code: 'not_queue_item_author' });
    // Stored with the change; a lost announcement is filled from the log on the next reconnect.
    await Promise.all(change.events.map((event) => bus.publish(event))).catch(() => {});
    return ok(change);
  }

  return {
    async list(user: User, threadId: string): Answer<QueuedDirective[]> {
      const thread = await storage.threads.findRow(user.id, threadId);
      if (thread === null) return fail({ code: 'thread_unavailable' });
      return ok(await storage.writer.queued(thread.id));
    },

    async edit(user: User, threadId: string, itemId: string, text: string): Answer<QueuedDirective> {
      const thread = await storage.threads.findRow(user.id, threadId);
      if (thread === null) return fail({ code: 'thread_unavailable' });
      const changed = await settled(await storage.writer.editQueued(thread.id, itemId, { user: user.id, owner: thread.owner === user.id }, text));
      return changed.ok ? ok(changed.value.item) : changed;
    },

    async revoke(user: User, threadId: string, itemId: string): Answer<null> {
      const thread = await storage.threads.findRow(user.id, threadId);
      if (thread === null) return fail({ code: 'thread_unavailable' });
      // The line names what was withdrawn, as it read just before; the revoke itself decides under the thread's lock.
      const item = (await storage.writer.queued(thread.id)).find((queued) => queued.id === itemId);
      if (item === undefined) return fail({ code: 'queue_item_gone' });
      const words = item.text.replace(/\s+/g, ' ').trim();
      const chars = Array.from(words);
      const excerpt = chars.length > EXCERPT ? `${chars.slice(0, EXCERPT).join('')}…` : words;
      const line = `${user.name} withdrew a queued message before it ran: "${excerpt}"`;
      const changed = await settled(await storage.writer.revokeQueued(thread.id, itemId, { user: user.id, owner: thread.owner === user.id }, line));
      return changed.ok ? ok(null) : changed;
    },
  };
}

export type ThreadQueue = ReturnType<typeof threadQueue>;
