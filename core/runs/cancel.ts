import type { Failure } from '../../domain/errors.ts';
import type { User } from '../../domain/model.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import type { EventBus } from '../../ports/event-bus.ts';
import type { ThreadStore } from '../../ports/thread-store.ts';
import type { TurnLeases } from '../../ports/turn-leases.ts';

/**
 * Cancel (contract section 4): the owner or a member stops the turn running on a thread. The
 * request is a bus signal, so the instance that runs the turn cancels it, wherever that is;
 * the turn then records `cancelled`, `run_cancelled` and `reflex_asleep`. 409 when no turn runs.
 */
export function turnCanceller(deps: { readonly storage: { readonly threads: ThreadStore; readonly writer: TurnLeases }; readonly bus: EventBus }) {
  const { storage, bus } = deps;
  return async function cancel(user: User, threadId: string): Promise<Result<{ run_id: string }, Failure>> {
    const thread = await storage.threads.findRow(user.id, threadId);
    if (thread === null) return fail({ code: 'thread_unavailable' });
    const turn = await storage.writer.runningTurn(thread.id);
    if (turn === null) return fail({ code: 'no_turn_running' });
    await bus.signal({ kind: 'cancel_requested', run_id: turn.run_id });
    return ok({ run_id: turn.run_id });
  };
}

export type CancelTurn = ReturnType<typeof turnCanceller>;
