import type { Failure } from '../../domain/errors.ts';
import type { Conversation, Thread } from '../../domain/model.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import type { DirectiveAnswer, DirectiveWrites } from '../../ports/directive-writes.ts';
import type { EventBus } from '../../ports/event-bus.ts';
import type { TurnLeases } from '../../ports/turn-leases.ts';
import type { DeliverSteer } from './steer-delivery.ts';

/** What a directive sent with `when_busy: "steer"` answers: steered into the running turn, or not (then queued, or started). */
export type SteerAnswered = DirectiveAnswer & { readonly steered: boolean };

/** What a steer reads of the directive's turn (a `TurnStart` of directives.ts, which starts it when it is queued instead). */
export interface SteerableTurn {
  readonly thread: Thread;
  readonly conversation: Conversation;
  readonly text: string;
  readonly message_id: string | null;
  readonly author: string;
  readonly when_busy?: { readonly mode: 'queue' | 'interrupt'; readonly author: string } | null;
}

/** A steer's answer says whether it went into the running turn; a queued or started one's (kept before) did not. */
const unsteered = (answer: DirectiveAnswer): SteerAnswered => ('steered' in answer ? answer : { ...answer, steered: false });

/**
 * `when_busy: "steer"` (contract section 11): the text goes into the thread's running turn when its agent
 * takes it (`injected`, or any answer but `promptRequired` once sent: the agent may have it, so it is never
 * queued too); the ledger message is written then, with the run's id, and `steered` is emitted. Where it
 * does not go (no turn runs, it runs on another conversation, the agent does not steer, the turn waits on an
 * approval or ended meanwhile, or no instance took it in time), the directive is queued as `queue` is, and runs
 * next (at once, on a thread that is free by then). A retry with the same `message_id` answers what the first got,
 * and is never sent again.
 */
export function turnSteerer<T extends SteerableTurn>(deps: {
  readonly writer: Pick<DirectiveWrites, 'keptAnswer' | 'writeSteered'> & Pick<TurnLeases, 'runningTurn'>;
  readonly bus: EventBus;
  readonly deliver: DeliverSteer;
  /** Starts (or queues) a directive: the fallback, as `when_busy: "queue"`. */
  readonly startTurn: (turn: T) => Promise<Result<DirectiveAnswer, Failure>>;
}) {
  const { writer, bus } = deps;
  return async function steer(turn: T): Promise<Result<SteerAnswered, Failure>> {
    const { thread, conversation } = turn;
    const queued = async (): Promise<Result<SteerAnswered, Failure>> => {
      const started = await deps.startTurn({ ...turn, when_busy: { mode: 'queue', author: turn.author } });
      return started.ok ? ok(unsteered(started.value)) : started;
    };
    if (turn.message_id !== null) {
      const kept = await writer.keptAnswer(thread.id, turn.message_id, turn.author);
      if (kept?.kind === 'message_id_taken') return fail({ code: 'message_id_taken' });
      if (kept?.kind === 'repeated') return ok(unsteered(kept.answer));
    }
    const running = await writer.runningTurn(thread.id);
    // A summon's turn runs on the conversation that replaced this one: the text was meant for the other agent.
    if (running === null || running.conversation_id !== conversation.id) return queued();
    const answer = await deps.deliver({ run_id: running.run_id, holder: running.holder, text: turn.text, message_id: turn.message_id });
    if (answer !== 'injected' && answer !== 'other') return queued();
    const written = await writer.writeSteered({
      thread_id: thread.id, conversation_id: conversation.id, run_id: running.run_id, message_id: turn.message_id, author: turn.author, text: turn.text,
    });
    if (written.kind === 'message_id_taken') return fail({ code: 'message_id_taken' });
    if (written.kind === 'repeated') return ok(unsteered(written.answer));
    await bus.publish(written.event).catch(() => {});
    return ok(written.answer);
  };
}

export type SteerTurn = ReturnType<typeof turnSteerer>;
