import type { WireEvent } from '../domain/events.ts';
import type { Conversation, DirectiveOrigin, Id, Message, MovedTo, Run, Thread } from '../domain/model.ts';
import type { NewConsoleThread } from './console-threads.ts';
import type { QueuedDirective } from './queue-edits.ts';
import type { TurnLease } from './turn-leases.ts';

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
  /**
   * The schedule or hook that sent it, stored on its ledger message (and its queued item while it waits, so the
   * message keeps it when the item runs); absent or null: a person's directive.
   */
  readonly origin?: DirectiveOrigin | null;
}

/** What a directive steered into a running turn writes (contract section 11), once the agent took it. */
export interface SteeredWrite {
  readonly thread_id: Id;
  readonly conversation_id: Id;
  /** The running run the text went into: its ledger message's `steered` event and its model messages name it. */
  readonly run_id: Id;
  readonly message_id: string | null;
  readonly author: string;
  readonly text: string;
}

/** What a directive steered into the running turn answers (202). */
export interface SteeredAnswer {
  readonly thread_id: Id;
  readonly key: string | null;
  readonly conversation_id: Id;
  readonly run_id: Id;
  readonly steered: true;
}

/** The outcome of writing a steered directive: written, or the answer a retry already got. */
export type SteeredOutcome =
  | { readonly kind: 'steered'; readonly answer: SteeredAnswer; readonly message: Message; readonly event: WireEvent }
  | { readonly kind: 'repeated'; readonly answer: DirectiveAnswer }
  | { readonly kind: 'message_id_taken' };

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
export type DirectiveAnswer = StartedAnswer | QueuedAnswer | SteeredAnswer;

/**
 * A directive that opens a new console thread (contract section 4, a first directive to a new key) in the plain
 * case: the thread and its conversation, and the directive's turn on it, started under `lease` (as `writeDirective`
 * starts one: the user's ledger message, a `running` run, the prompt, the answer kept under `message_id`, the
 * `message` and `run_started` events). Its author is the thread's owner; it picks no posture of its own.
 */
export interface ThreadOpening {
  /** The thread to open: `key` is the directive's key, its conversation the one the turn runs on. */
  readonly thread: NewConsoleThread;
  readonly message_id: string | null;
  readonly text: string;
  readonly directory: string | null;
  readonly lease: TurnLease;
  readonly origin: DirectiveOrigin | null;
}

/** A thread opened with its first turn started: its rows, and what `writeDirective` answers for the turn. */
export interface OpenedThread {
  readonly thread: Thread;
  readonly conversation: Conversation;
  readonly started: StartedOutcome;
}

/** A directive's turn written and started (`writeDirective`'s `started`). */
export type StartedOutcome = Extract<DirectiveOutcome, { readonly kind: 'started' }>;

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
 * The writes that start turns from directives, each one transaction with its checks inside. Of
 * those that race on one thread (directives, summons, teleports, in any mix: move-writes.ts), each
 * sees the others whole: the busy check and the thread's latest conversation are one decision, taken
 * under the thread's lock (a thread row first, then its conversations and runs: one order, so no
 * deadlock), and at most one turn of a thread ever runs.
 */
export interface DirectiveWrites {
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
   * Opens threads with their first turns, all written together or none: what a batch of first directives to new
   * keys writes (a look's scheduled fires), as `createConsoleThread` then `writeDirective` would for each, in one
   * write. Answers, in their order, each thread opened, or null where nothing was written for it: its owner has a
   * thread with that key already (opened by an earlier send of the same directive, or by a race), or the key is a
   * thread's id. A null is for the caller's one-by-one path, which decides it as any directive.
   */
  openThreads(openings: readonly ThreadOpening[]): Promise<(OpenedThread | null)[]>;
  /**
   * The answer kept for `message_id` on the thread: `repeated` when its author is `author`, `message_id_taken`
   * when another's, null when none was kept. Read before a steer, so a retried one is never sent again.
   */
  keptAnswer(threadId: Id, messageId: string, author: string): Promise<{ readonly kind: 'repeated'; readonly answer: DirectiveAnswer } | { readonly kind: 'message_id_taken' } | null>;
  /**
   * Writes a directive the running turn took (contract section 11) atomically: when `message_id` was seen on the
   * thread, `repeated` (its author's) or `message_id_taken`, and nothing is written; else the user's ledger message,
   * the text as a `user` model message of the run, the answer, and the `steered` event (`{run_id, message}`).
   */
  writeSteered(write: SteeredWrite): Promise<SteeredOutcome>;
}
