import type { WireEvent } from '../domain/events.ts';
import type { Address, Conversation, Id, MovedTo, Run, Thread } from '../domain/model.ts';
import type { Busy } from '../domain/moves.ts';
import type { Delivery } from './delivery-outbox.ts';
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

/**
 * Moves of conversations (teleport, summon), each one transaction with its checks inside. A move
 * races with its thread's other moves and directives (directive-writes.ts) and sees them whole: the
 * busy check and the thread's latest conversation are one decision, taken under the thread's lock (a
 * thread row first, then its conversations and runs: one order, so no deadlock).
 */
export interface MoveWrites {
  /**
   * Writes a move atomically: when the source's latest conversation moved away, answers
   * `moved_away`; when the source thread has a turn running, items pending on any of its
   * conversations, or directives queued, `busy`; when the conversation it moves or replaces is no longer the latest,
   * `changed`; either way nothing is written. Else writes everything {@link MoveWrite} names and
   * answers `moved`.
   */
  writeMove(move: MoveWrite): Promise<MoveOutcome>;
}
