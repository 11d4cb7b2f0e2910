import type { Logger } from '../../ports/logger.ts';
import type { AddressLanding } from '../../ports/address-landing.ts';
import type { ChannelPort, DeliveryLanding } from '../../ports/channel-port.ts';
import type { Clock } from '../../ports/clock.ts';
import type { DeliveryOutbox } from '../../ports/delivery-outbox.ts';

export interface DeliveryDispatchOptions {
  readonly outbox: DeliveryOutbox;
  readonly channels: ChannelPort;
  readonly log: Logger;
  /** This instance's id: the holder of the deliveries it claims. */
  readonly holder: string;
  /** How often the outbox is looked at when nothing pokes it (retries, and what another instance left). */
  readonly intervalMs: number;
  /** The first retry's wait; each refusal doubles it, up to `maxRetryMs`. */
  readonly retryMs: number;
  readonly maxRetryMs: number;
  /** How long a claimed delivery is this instance's before another may take it (a channel call's bound). */
  readonly claimMs: number;
  /** When the next look comes round, and when a channel's answer is late. */
  readonly clock: Clock;
  /** Moves what is stored at a delivery's address to where the channel says it landed (the storage writer's). */
  readonly landAt?: AddressLanding['landAt'];
}

/** How many deliveries one pass hands over before it lets a poke or a close in. */
const BATCH = 20;

/**
 * Hands the outbox's due deliveries to their channels: at once when a move pokes it, and every
 * `intervalMs` for retries. Each delivery is claimed just before its channel is asked, and the channel
 * gets a third of the claim to answer, so no claim lapses while its delivery is still being handed over
 * (another instance would then post it too). A delivery the channel took is removed; one it refused, or
 * did not answer in time, is put back with a doubled wait. The channel's own idempotency (by delivery id)
 * makes a repeat after a lost or late answer harmless. A delivery the platform landed at an address of its
 * own (a new Slack thread) has what is stored at its provisional address moved there first (`landAt`).
 */
export function deliveryDispatcher(options: DeliveryDispatchOptions) {
  const { outbox, channels, log } = options;
  let running: Promise<void> | null = null;
  let again = false;
  let closed = false;
  const answerMs = Math.max(1, Math.floor(options.claimMs / 3));

  const backoff = (attempts: number) => Math.min(options.retryMs * 2 ** attempts, options.maxRetryMs);

  /** The channel's answer, or a rejection once `answerMs` have passed without one. */
  function delivered(delivery: Parameters<ChannelPort['deliver']>[0]): Promise<DeliveryLanding | void> {
    let notLate = () => {};
    const late = new Promise<never>((_, reject) => {
      notLate = options.clock.after(answerMs, () => reject(new Error(`the channel did not answer within ${answerMs} ms`)));
    });
    return Promise.race([channels.deliver(delivery), late]).finally(notLate);
  }

  async function pass(): Promise<void> {
    for (let handled = 0; handled < BATCH && !closed; handled++) {
      const [delivery] = await outbox.claimDue(options.holder, options.claimMs, 1);
      if (delivery === undefined) return;
      try {
        const landing = await delivered(delivery);
        // Landed elsewhere than decided: moved there before the delivery is let go, so a failed move is a retry
        // (the channel, idempotent by id, answers the same landing and posts nothing more).
        const at = landing?.address;
        if (at !== undefined && options.landAt !== undefined && (at.channel !== delivery.address.channel || at.id !== delivery.address.id)) {
          await options.landAt(delivery.address, at);
        }
        await outbox.delivered(delivery.id);
        log.info({ delivery: delivery.id, channel: delivery.channel, attempts: delivery.attempts + 1 }, 'delivered to the channel');
      } catch (error) {
        const wait = backoff(delivery.attempts);
        log.warn({ err: error, delivery: delivery.id, channel: delivery.channel, attempts: delivery.attempts + 1, retryInMs: wait }, 'the channel did not take the delivery; retrying later');
        await outbox.retryLater(delivery.id, wait);
      }
    }
    // A full batch: there may be more due; the next pass takes them.
    again = !closed;
  }

  /** Runs a pass now, or right after the one running (a poke during a pass is not lost). */
  function poke(): void {
    if (closed) return;
    if (running !== null) {
      again = true;
      return;
    }
    running = pass()
      .catch((error: unknown) => log.warn({ err: error }, 'the delivery outbox could not be read'))
      .finally(() => {
        running = null;
        if (again) {
          again = false;
          poke();
        }
      });
  }

  const stopLooking = options.clock.every(options.intervalMs, poke);

  return {
    poke,
    /** Stops looking; a pass under way finishes. */
    async close(): Promise<void> {
      closed = true;
      stopLooking();
      await running;
    },
  };
}

export type DeliveryDispatcher = ReturnType<typeof deliveryDispatcher>;
