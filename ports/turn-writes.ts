import type { WireEvent } from '../domain/events.ts';
import type { Address, Conversation, Id, Message, MovedTo, Run, Thread } from '../domain/model.ts';
import type { Busy } from '../domain/operations.ts';
import type { Delivery } from './delivery-outbox.ts';
import type { QueuedDirective } from './directive-queue.ts';
import type { TurnLease } from './turn-leases.ts';

/** A conversation's fields when it is written. */
export interface NewConversation {
  readonly agent: string;
  readonly model: string | null;
  readonly permission_mode: string | null;
  readonly effort: string | null;
  /** Where it lives on its thread's channel; null: the thread itself (`{channel, id: thread id}`). */
  readonly address: Address | null;
}

/** A thread opened by a move (teleport): no key, on any channel, with its first conversation. */
export interface NewThread {
  /** The source thread's owner: a conversation stays its owner's wherever a member moves it. */
  readonly owner: string;
  /** Members besides the source's own, which the landing thread keeps (the mover, when not the owner). */
  readonly members: readonly string[];
  readonly channel: string;
  readonly project: string | null;
  readonly title: string;
  readonly conversation: NewConversation;
}

/**
 * A teleport or a summon, written as one transaction: the landing thread (teleport: a fork of the
 * source at its latest visible message, so the source's history shows there), the new conversation
 * (a teleport's carries the moved one's agent session), the moved conversation's new address, ledger
 * lines, the `gateway` events, the delivery to the destination's channel, and the new conversation's
 * first turn. Ids are chosen by the caller, so the gateway event can name them before anything is written.
 */
export interface MoveWrite {
  /** The thread the conversation leaves (teleport) or is handed over on (summon); checked not busy inside. */
  readonly source_thread_id: Id;
  /**
   * The conversation that moves (teleport), checked inside to be the source's latest and still here;
   * it records `moved_to` and its address becomes the landing's. Null for a summon. A summon also
   * checks that the source's latest conversation has not moved away.
   */
  readonly moving: Id | null;
  /**
   * Summon: the conversation it hands over from, as the caller read it (the source's latest then),
   * checked inside to be the latest still; `changed` when another took its place. Null for a teleport,
   * whose `moving` is checked so.
   */
  readonly replaces: Id | null;
  /** Teleport: the thread it lands in, opened with this id as a fork of the source; null for a summon (in place). */
  readonly landing: (NewThread & { readonly id: Id }) | null;
  /** The new conversation, on the landing thread when there is one, else on the source. */
  readonly conversation: NewConversation & { readonly id: Id };
  /** A system line for the source thread's ledger (where a teleport went, a summon's hand-over), or null. */
  readonly ledger: string | null;
  /** A system line for the landing thread's ledger (where the conversation came from), or null. */
  readonly landing_ledger: string | null;
  /** The delivery to the destination's channel, stored in the outbox with the move; null for none (the console). */
  readonly delivery: Delivery | null;
  /** The `gateway` event's data, stored on the source thread, then on the landing thread. */
  readonly gateway: Readonly<Record<string, unknown>>;
  /** The new conversation's first turn (a summon's brief, a teleport's prompt), claimed with the move; null for none. */
  readonly turn: { readonly text: string; readonly directory: string | null; readonly lease: TurnLease } | null;
}

/** The outcome of a move: written (with what to publish and start), or refused because the source is busy. */
export type MoveOutcome =
  | {
      readonly kind: 'moved';
      /** The thread the conversation is on now (the landing thread, or the source). */
      readonly thread: Thread;
      readonly conversation: Conversation;
      /** Every event stored, in order: publish them. */
      readonly events: readonly WireEvent[];
      /** The first turn's run, when one was asked for: start it. */
      readonly run: Run | null;
    }
  | { readonly kind: 'busy'; readonly busy: Busy }
  /** The source's conversation moved away before this move: nothing was written. */
  | { readonly kind: 'moved_away'; readonly moved_to: MovedTo }
  /** The conversation that was to move is no longer the source's latest (a summon came first): nothing was written. */
  | { readonly kind: 'changed' }
  /** A conversation that has not moved away already lives at the landing address (a chat thread): nothing was written. */
  | { readonly kind: 'occupied' };

/** What a directive writes before its run is started, in one transaction. */
export interface DirectiveWrite {
  readonly thread_id: Id;
  readonly conversation_id: Id;
  /** The client's id for the directive, for idempotency; null: not deduplicated. */
  readonly message_id: string | null;
  /** The user who sent it: a `message_id` on a thread is its author's alone (another's reuse is `message_id_taken`). */
  readonly author: string;
  readonly text: string;
  /** The run's working directory, learned from the session (the project's directory). */
  readonly directory: string | null;
  /** Stored on the conversation first; null changes nothing. */
  readonly permission_mode: string | null;
  /** Who claims the turn (an instance id), and for how long before it must renew the lease. */
  readonly lease: TurnLease;
  /**
   * What to do when the thread is busy (a turn runs, or directives are queued): absent or null, refuse
   * (`busy`, or `queue_not_empty`); `queue`, store it last in the thread's queue; `interrupt`, store it
   * first, and answer the running turn to cancel. `author` is the user who sent it.
   */
  readonly when_busy?: { readonly mode: 'queue' | 'interrupt'; readonly author: string } | null;
}

/** What a directive that started a turn answers (202). */
export interface StartedAnswer {
  readonly thread_id: Id;
  readonly key: string | null;
  readonly conversation_id: Id;
  readonly run_id: Id;
}

/** What a queued directive answers (202): no run yet, its queued item and place instead. */
export interface QueuedAnswer {
  readonly thread_id: Id;
  readonly key: string | null;
  readonly conversation_id: Id;
  readonly queued: { readonly id: Id; readonly position: number };
}

/** What a directive answers (202), stored so a retry with the same `message_id` answers it again. */
export type DirectiveAnswer = StartedAnswer | QueuedAnswer;

/** The outcome of writing a directive: a new run, or the answer a retry already got. */
export type DirectiveOutcome =
  | {
      readonly kind: 'started';
      readonly answer: StartedAnswer;
      readonly message: Message;
      readonly run: Run;
      /** The `message` event (`{run_id, message}`), stored in the same transaction: publish it. */
      readonly event: WireEvent;
      /**
       * The run's `run_started` event (`{run_id, conversation_id}`, the seq after `event`), stored in the same
       * transaction with the prompt (the text) as the run's first model message: publish it after `event`, before anything the agent does.
       */
      readonly runStarted: WireEvent;
      /** The conversation's agent session, read under the transaction's lock: the turn continues it (null: none yet). */
      readonly sessionId: string | null;
    }
  | { readonly kind: 'repeated'; readonly answer: DirectiveAnswer }
  /** Another user sent a directive with this `message_id` on this thread: nothing was written, and their answer is not told. */
  | { readonly kind: 'message_id_taken' }
  | {
      readonly kind: 'queued';
      readonly answer: QueuedAnswer;
      readonly item: QueuedDirective;
      /** The `queued` event (data: the item), stored in the same transaction: publish it. */
      readonly event: WireEvent;
      /** An interrupt: the run of the turn running now, to cancel; else null. */
      readonly interrupts: Id | null;
    }
  | { readonly kind: 'busy' }
  /** No turn runs, but directives are queued (about to start): a directive that does not queue is refused. */
  | { readonly kind: 'queue_not_empty' }
  /** The thread already has `QUEUE_LIMIT` (domain/bounds.ts) directives queued: nothing was written. */
  | { readonly kind: 'queue_full' }
  /** The conversation was teleported away: nothing was written. */
  | { readonly kind: 'moved_away'; readonly moved_to: MovedTo }
  /** The conversation is no longer the thread's latest (a summon replaced it since it was read): nothing was written. */
  | { readonly kind: 'changed' };

/**
 * The writes that start turns or move conversations, each one transaction with its checks inside.
 * Of those that race on one thread (directives, summons, teleports, in any mix), each sees the others
 * whole: the busy check and the thread's latest conversation are one decision, taken under the
 * thread's lock (a thread row first, then its conversations and runs: one order, so no deadlock), and
 * at most one turn of a thread ever runs.
 */
export interface TurnWrites {
  /**
   * Writes a directive atomically: when `message_id` was seen on this thread from the same author,
   * answers `repeated` with the first answer and writes nothing (from another author,
   * `message_id_taken`, and writes nothing); when the conversation moved away, `moved_away`; when
   * a turn runs on any conversation of the thread, `busy` (or, with nothing running but directives
   * queued, `queue_not_empty`) unless `when_busy` asks to queue; when the conversation is no longer
   * the thread's latest, `changed`. Queued (`when_busy`, on a busy thread): past `QUEUE_LIMIT` (domain/bounds.ts)
   * items `queue_full`, else stores the user's ledger message, the queued item, the answer and the
   * `queued` event, and answers `queued`. Else stores the posture, the user's ledger message, a `running` run, claims the turn under
   * `lease`, records the answer, stores the `message` event, then the run's `run_started` event and the
   * text as the run's first model message (the prompt), and answers `started` with the session to continue.
   * A queued directive gets neither until it is dequeued and its turn starts. Nothing is written unless all of it is.
   */
  writeDirective(write: DirectiveWrite): Promise<DirectiveOutcome>;
  /**
   * Writes a move atomically: when the source's latest conversation moved away, answers
   * `moved_away`; when the source thread has a turn running, items pending on any of its
   * conversations, or directives queued, `busy`; when the conversation it moves or replaces is no longer the latest,
   * `changed`; either way nothing is written. Else writes everything {@link MoveWrite} names and
   * answers `moved`.
   */
  writeMove(move: MoveWrite): Promise<MoveOutcome>;
}
