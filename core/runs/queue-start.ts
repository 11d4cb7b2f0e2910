import type { Thread } from '../../domain/model.ts';
import type { Logger } from '../../ports/logger.ts';
import type { DequeuedTurn } from '../../ports/turn-handover.ts';
import type { EventBus } from '../../ports/event-bus.ts';
import type { RunDirectory } from '../../ports/run-directory.ts';
import type { Catalog } from '../../ports/catalog.ts';
import type { ThreadStore } from '../../ports/thread-store.ts';
import type { LedgerStore } from '../../ports/ledger-store.ts';
import { threadHistory } from './history.ts';
import type { BackgroundTurns } from './turns.ts';

/**
 * Runs the turn of a queued directive that a hand-over (a turn's end, or the sweep) started: its
 * `dequeued` event is published first, then the run is started on this instance, which holds its
 * lease, in the directory this instance works out for the thread; the turn takes its unsent prompt
 * just before the agent gets it. Never throws: answers whether it started. A turn that cannot be
 * started here is left to lapse, and the sweep starts it again (its prompt still unsent), or ends it
 * when that fails too.
 */
export function queuedTurns(deps: {
  /** The catalog (the turn's agent), and what the thread's history is read from. */
  readonly storage: { readonly catalog: Catalog; readonly threads: ThreadStore; readonly ledger: LedgerStore };
  readonly bus: EventBus;
  /** The background turns, asked when a turn starts (they are built before this, and hand their own ends over here). */
  readonly turns: () => BackgroundTurns;
  readonly runDirectory: RunDirectory;
  readonly log: Logger;
}) {
  return async function startQueued(turn: DequeuedTurn): Promise<boolean> {
    const { thread, conversation, run } = turn;
    try {
      await deps.bus.publish(turn.event).catch(() => {});
      const agent = (await deps.storage.catalog.agents()).find((candidate) => candidate.id === conversation.agent);
      if (agent === undefined) throw new Error(`No agent ${conversation.agent} in the catalog`);
      deps.turns().start({
        threadId: thread.id,
        conversation,
        run,
        agent,
        prompt: turn.item.text,
        unsent: true,
        messageId: turn.item.message_id,
        // Worked out here, as a directive's turn is: the directory stored with the queued directive is the queuing
        // instance's, and a repository project's worktree is each instance's own, brought to the thread's latest
        // checkpoint before a turn (another machine's path is not on this disk, and would skip that rebuild).
        cwd: await directoryOf(deps.runDirectory, thread, deps.log),
        mode: conversation.permission_mode,
        // What the thread had when this turn started (the turns that ran while it waited included).
        history: () => threadHistory(deps.storage, thread.owner, thread.id, run.id),
      });
      return true;
    } catch (error) {
      deps.log.error({ err: error, run: run.id, thread: thread.id }, 'a queued directive could not be started; its lease will lapse and be swept');
      return false;
    }
  };
}

/**
 * A thread's run directory, or the failure thrown (a queued turn that cannot start lapses, and the sweep ends it). A
 * checkpoint of this instance's set aside on the way (another instance's turn reached the remote first) is told once,
 * to the log, and the thread goes on from the other's: nobody waits on a queued turn's answer, so it is asked again.
 */
async function directoryOf(runDirectory: RunDirectory, thread: Thread, log: Logger): Promise<string> {
  let located = await runDirectory(thread);
  if (!located.ok && located.error.code === 'checkpoint_set_aside') {
    log.error({ thread: thread.id, code: located.error.code, detail: located.error.detail }, "a checkpoint of this instance's was set aside: another instance's is the thread's");
    located = await runDirectory(thread);
  }
  if (!located.ok) throw new Error(`the run directory cannot be made: ${located.error.code} ${located.error.detail ?? ''}`);
  return located.value;
}

export type StartQueued = ReturnType<typeof queuedTurns>;
