import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Agent } from '../../domain/model.ts';
import type { AgentOffer, AgentOfferState } from '../../domain/vocabulary.ts';
import type { AgentOffers } from '../../ports/agent-offers.ts';

/** Options of {@link createOfferCache}. */
export interface OfferCacheOptions {
  /** Asks the agent (starting it if need be) what it offers, on a session of its own; rejects with why it could not. */
  readonly probe: (agent: Agent) => Promise<AgentOffer>;
  readonly log: Logger;
  /** How long a probe may take before the agent is unavailable (it goes on; a late answer is still kept). */
  readonly timeoutMs: number;
  /** How long an unavailable agent is answered as such before it is asked again (in the background). */
  readonly retryMs: number;
  /** The clock, for tests. */
  readonly now?: () => number;
}

interface Entry {
  offer: AgentOffer | null;
  unavailable: { readonly reason: string; readonly since: number } | null;
  /** The probe in flight, settled once it answers or its bound has passed; null when none runs. */
  asking: Promise<void> | null;
  /** Probes started, and the latest whose answer was taken: an older answer never replaces a newer one. */
  started: number;
  taken: number;
}

/**
 * What each agent offers, cached: reads answer what is known at once and the agent is asked in the
 * background (see {@link AgentOffers}); one probe per agent at a time. The latest answer wins: a
 * probe that fails or times out makes a known agent unavailable, a late success makes it offer again.
 */
export function createOfferCache(options: OfferCacheOptions) {
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  let closed = false;

  const entryOf = (id: string): Entry => {
    let entry = entries.get(id);
    if (entry === undefined) entries.set(id, (entry = { offer: null, unavailable: null, asking: null, started: 0, taken: 0 }));
    return entry;
  };

  const stateOf = (entry: Entry | undefined): AgentOfferState =>
    entry?.unavailable != null ? { kind: 'unavailable', reason: entry.unavailable.reason }
    : entry?.offer != null ? { kind: 'offered', offer: entry.offer }
    : { kind: 'unknown' };

  /** Starts a probe unless one is in flight; resolves once it has answered or its bound has passed. */
  function ask(agent: Agent): Promise<void> {
    const entry = entryOf(agent.id);
    if (entry.asking !== null) return entry.asking;
    const n = ++entry.started;
    const agentLog = options.log.child({ agent: agent.id });
    const take = (offer: AgentOffer | null, reason: string) => {
      if (n < entry.taken) return;
      entry.taken = n;
      if (offer !== null) entry.offer = offer;
      entry.unavailable = offer === null ? { reason, since: now() } : null;
    };
    const answered = options.probe(agent).then(
      (offer) => take(offer, ''),
      (error: unknown) => {
        agentLog.warn({ err: error }, 'the agent did not say what it offers; it is unavailable for now');
        take(null, unavailableReason(error));
      },
    );
    const bound = sleep(options.timeoutMs, undefined, { ref: false }).then(() => {
      if (entry.taken >= n) return;
      agentLog.warn({ ms: options.timeoutMs }, 'the agent did not say what it offers in time; it is unavailable for now');
      take(null, `the agent did not answer within ${seconds(options.timeoutMs)}`);
    });
    const asking = Promise.race([answered, bound]).finally(() => {
      if (entry.asking === asking) entry.asking = null;
    });
    entry.asking = asking;
    return asking;
  }

  const offers: AgentOffers = async (agent, { wait = false } = {}) => {
    if (closed) return { kind: 'unavailable', reason: 'the service is shutting down' };
    const entry = entries.get(agent.id);
    const known = stateOf(entry);
    const due = known.kind === 'unknown' || (entry?.unavailable != null && now() - entry.unavailable.since >= options.retryMs);
    const asking = due ? ask(agent) : null;
    // Only the first answer is ever waited for: afterwards what is known is answered, and refreshed behind.
    if (known.kind !== 'unknown' || !wait || asking === null) return known;
    await asking;
    return stateOf(entries.get(agent.id));
  };

  return {
    offers,
    /** Asks the agent again in the background (a new process of it has started); what is known stays answered meanwhile. */
    refresh(agent: Agent): void {
      if (!closed) void ask(agent);
    },
    close(): void {
      closed = true;
    },
  };
}

const seconds = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

/**
 * Why a probe failed, as the service says it to any user: only sentences of the service's own are
 * kept (an authentication need, a start that failed, an error code), never the agent's text, which
 * may quote a provider's body or a key; anything else is said plainly.
 */
export function unavailableReason(error: unknown): string {
  const message = error instanceof Error ? error.message : '';
  const own = [
    /^the agent needs authentication \(it offers [A-Za-z0-9._:, -]*\); give it credentials through its env or env_pass$/,
    /^the agent could not start: (its command was not found|its command is not executable|exited with status \d+|was stopped by SIG[A-Z0-9]+|speaks ACP version [\w.-]+, not [\w.-]+|did not answer initialize within [\d.]+ (s|ms))$/,
    /^the agent process (exited with status \d+|was stopped by SIG[A-Z0-9]+)$/,
    /^the agent answered the request with error -?\d+$/,
    /^the agent did not answer [a-z/]+ within [\d.]+ (s|ms)$/,
  ];
  if (own.some((pattern) => pattern.test(message))) return message;
  if (/^the agent could not start\b/.test(message)) return 'the agent could not start';
  if (/exits as soon as it starts$/.test(message)) return 'the agent exits as soon as it starts';
  return 'the agent could not open a session';
}
