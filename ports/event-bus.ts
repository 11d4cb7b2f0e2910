import type { WireEvent } from '../domain/events.ts';
import type { Id } from '../domain/model.ts';
import type { SteerOutcome } from './agent-runner.ts';

/**
 * What a steer sent to the instance running a turn came to: the runner's outcome; `asking`, the turn waits on
 * an approval or a question; `unreached`, no instance running the turn took it in time (nothing was sent).
 */
export type SteerAnswer = SteerOutcome | 'asking' | 'unreached';

/**
 * Signals that cross service instances besides events: a console thread's row was written for a
 * key (a socket waiting on that key starts delivering), and pending items were answered (the
 * instance running that agent resumes it).
 */
export type BusSignal =
  | { readonly kind: 'thread_created'; readonly owner: string; readonly key: string; readonly thread_id: Id }
  | { readonly kind: 'pending_answered'; readonly answers: readonly PendingAnswer[] }
  /** A user asked to stop a run: the instance that runs its turn cancels it. */
  | { readonly kind: 'cancel_requested'; readonly run_id: Id }
  /**
   * A directive asks to steer a run's turn (contract section 11): the instance holding it (`holder`; null: whichever
   * runs it) sends the text into it unless `deadline` (ms since the epoch, by the asker's clock) has passed, and
   * answers `steer_answered`.
   */
  | {
      readonly kind: 'steer_requested'; readonly request: Id; readonly run_id: Id; readonly holder: string | null;
      readonly text: string; readonly message_id: string | null; readonly deadline: number;
    }
  /** What the steer `request` came to, for the instance that asked. */
  | { readonly kind: 'steer_answered'; readonly request: Id; readonly answer: SteerAnswer }
  /**
   * A user's credentials changed (a session ended, a token revoked, the user deactivated): each instance
   * checks the credential of that user's live sockets again, and closes those that no longer name them.
   */
  | { readonly kind: 'credentials_changed'; readonly user: string }
  /**
   * Local only, never sent: this instance's bus connection came back after a loss. Signals and
   * events sent meanwhile may be lost, so whoever waits on one checks storage again.
   */
  | { readonly kind: 'reconnected' };

/** The answer to one pending item: the option chosen (approval) or the text given (question). */
export type PendingAnswer =
  | { readonly id: Id; readonly option: string }
  | { readonly id: Id; readonly answer: string };

/**
 * Fan-out of stored events and signals to every subscriber, on this instance and, for the
 * PostgreSQL adapter, on every instance sharing the database. Across instances an event may be
 * lost, repeated (a re-sent announcement) or reordered: a subscriber that needs every event once
 * fills gaps from the EventLog and skips a `seq` it has. Signals are at most once.
 */
export interface EventBus {
  /** Publishes an event already stored in the EventLog. */
  publish(event: WireEvent): Promise<void>;
  /** Calls `listener` with each event of the thread published from now on; answers the unsubscribe. */
  subscribe(threadId: Id, listener: (event: WireEvent) => void): () => void;
  /** Sends a signal to every instance (this one included). */
  signal(signal: BusSignal): Promise<void>;
  /** Calls `listener` with every signal from now on; answers the unsubscribe. */
  onSignal(listener: (signal: BusSignal) => void): () => void;
  /** Stops delivering and lets go of its connection (if any); nothing is published after. */
  close(): Promise<void>;
}
