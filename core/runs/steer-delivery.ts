import type { Id } from '../../domain/model.ts';
import type { SteerOutcome } from '../../ports/agent-runner.ts';
import type { Clock } from '../../ports/clock.ts';
import type { BusSignal, EventBus, SteerAnswer } from '../../ports/event-bus.ts';
import type { Logger } from '../../ports/logger.ts';
import type { NewId } from '../../ports/new-id.ts';

/** A steer for the turn of a run, wherever it runs. */
export interface SteerRequest {
  readonly run_id: Id;
  /** The instance holding the run's turn (its lease's holder), as storage says; null: unknown. */
  readonly holder: string | null;
  readonly text: string;
  readonly message_id: string | null;
}

/** Sends a steer to the instance that runs the turn and answers what it came to (see {@link steerDelivery}). */
export type DeliverSteer = (steer: SteerRequest) => Promise<SteerAnswer>;

/**
 * How long the instance running a turn may take to receive a steer before it must no longer send it
 * (measured against the asker's clock), and how long after that the asker waits for the answer: more
 * than the runner takes at most to answer one (the ACP runner's 10 s), so an answer that comes is never late.
 */
export const STEER_TIMING: Readonly<{ acceptMs: number; answerMs: number }> = Object.freeze({ acceptMs: 3_000, answerMs: 15_000 });

/**
 * Steering across instances (contract section 11), as a cancel reaches them, but answered: a run this
 * instance holds is steered here (one it holds but no longer runs is ending: `promptRequired`); else a
 * `steer_requested` bus signal asks every instance, the holder sends it (only while the request's deadline has
 * not passed) and signals `steer_answered`.
 *
 * Exactly once: nothing is sent after the deadline, and the asker waits past it for as long as the runner
 * may take to answer, so `unreached` (nothing was sent; the directive is queued instead) is answered only
 * when no instance took the request in time, or when the answer itself was lost on the bus (signals are at
 * most once; then the agent may have it too: the one case a steer can reach the agent twice).
 */
export function steerDelivery(deps: {
  readonly bus: EventBus;
  readonly clock: Clock;
  readonly newId: NewId;
  readonly log: Logger;
  /** This instance's id: the holder of the turns it runs. */
  readonly holder: string;
  /** Steers a run this instance runs; null when it runs elsewhere (core/runs/turns.ts `steer`). */
  readonly local: (runId: Id, text: string, messageId: string | null) => Promise<SteerOutcome | 'asking' | null>;
  readonly timing?: { readonly acceptMs: number; readonly answerMs: number };
}) {
  const { bus, clock, log } = deps;
  const timing = deps.timing ?? STEER_TIMING;
  const waiting = new Map<Id, (answer: SteerAnswer) => void>();

  /** Steers a run here: one this instance holds but no longer runs has ended (or is ending) here. */
  const here = async (steer: { run_id: Id; text: string; message_id: string | null }): Promise<SteerAnswer> =>
    (await deps.local(steer.run_id, steer.text, steer.message_id)) ?? 'promptRequired';

  /** Answers a request for a run this instance holds (or runs, when the asker knew no holder); ignores the rest. */
  async function serve(signal: Extract<BusSignal, { kind: 'steer_requested' }>): Promise<void> {
    let answer: SteerAnswer | null;
    if (signal.holder !== null && signal.holder !== deps.holder) return;
    if (clock.now() > signal.deadline) {
      // Whoever asked may have stopped waiting: nothing is sent, and it is told so if it still listens.
      log.warn({ run: signal.run_id }, 'a steer came after its deadline; it was not sent');
      answer = 'unreached';
    } else {
      answer = signal.holder === null ? await deps.local(signal.run_id, signal.text, signal.message_id) : await here(signal);
    }
    if (answer === null) return;
    await bus.signal({ kind: 'steer_answered', request: signal.request, answer }).catch((error: unknown) => {
      log.warn({ err: error, run: signal.run_id }, 'the answer to a steer could not be signalled');
    });
  }

  return {
    /** Reads the bus's signals: requests this instance serves, answers it waits for. */
    onSignal(signal: BusSignal): void {
      if (signal.kind === 'steer_answered') waiting.get(signal.request)?.(signal.answer);
      else if (signal.kind === 'steer_requested' && !waiting.has(signal.request)) void serve(signal);
    },

    deliver: (async (steer) => {
      if (steer.holder === deps.holder) return here(steer);
      const local = await deps.local(steer.run_id, steer.text, steer.message_id);
      if (local !== null) return local;
      const request = deps.newId();
      let cancel = () => {};
      const answered = new Promise<SteerAnswer>((resolve) => {
        waiting.set(request, resolve);
        cancel = clock.after(timing.acceptMs + timing.answerMs, () => resolve('unreached'));
      });
      try {
        await bus.signal({
          kind: 'steer_requested', request, run_id: steer.run_id, holder: steer.holder, text: steer.text, message_id: steer.message_id, deadline: clock.now() + timing.acceptMs,
        });
      } catch (error) {
        log.warn({ err: error, run: steer.run_id }, 'a steer could not be signalled; it is queued instead');
        waiting.delete(request);
        cancel();
        return 'unreached';
      }
      try {
        return await answered;
      } finally {
        waiting.delete(request);
        cancel();
      }
    }) satisfies DeliverSteer,
  };
}

export type SteerDelivery = ReturnType<typeof steerDelivery>;
