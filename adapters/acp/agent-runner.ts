import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import * as acp from '@agentclientprotocol/sdk';
import type { Agent } from '../../domain/model.ts';
import type { AgentOffer } from '../../domain/vocabulary.ts';
import type { AgentOffers } from '../../ports/agent-offers.ts';
import type { AgentRunner, TurnRequest, TurnResult } from '../../ports/agent-runner.ts';
import { agentTurn, notReady, type TurnSettings, unlessAborted } from './agent-turn.ts';
import { setSessionMode } from './posture.ts';
import { offerOf } from './offer.ts';
import { createOfferCache } from './offer-cache.ts';
import { processPool, type ProcessPoolOptions } from './process-pool.ts';
import { sessionState } from './session-state.ts';
import { steerSession } from './steering.ts';

/**
 * Options of {@link createAcpAgentRunner}: how its processes are started, confined and kept (the pool's,
 * {@link ProcessPoolOptions}: the demo agent's argv, the service's environment read when an agent starts,
 * the start time-out, the prestart hold, the sandbox and its bounds), and how turns and offers are timed.
 */
export interface AcpAgentRunnerOptions extends Omit<ProcessPoolOptions, 'probeStarted'> {
  /** How long a cancelled turn may take to end before its agent process group is ended (default 5 s). */
  readonly cancelGraceMs?: number;
  /** How long an agent may take to start and open its probe session before it is unavailable (default 10 s). */
  readonly offerTimeoutMs?: number;
  /** How long an unavailable agent is answered as such before it is asked again, in the background (default 30 s). */
  readonly offerRetryMs?: number;
  /** How long an agent may take to answer a steer before it counts as taken (default 10 s). */
  readonly steerTimeoutMs?: number;
}

/** The ACP runner, which also learns what each agent offers from the agent itself. */
export interface AcpAgentRunner extends AgentRunner {
  readonly offers: AgentOffers;
  /** Agent processes alive (or starting) now, and starts that replaced an earlier process of the same agent (metrics). */
  readonly stats: () => { readonly alive: number; readonly restarts: number };
  /**
   * Starts these agents' processes now, before the catalog can be read (a start does, from its world
   * file, while the database opens). Each is taken by the first use of an agent with its id that
   * starts the same process (`sameAgentProcess`); one that another agent of that id finds, or that
   * nothing takes within `prestartHoldMs`, is ended. Agents already running are left as they are.
   */
  readonly prestart: (agents: readonly Agent[]) => void;
}

/**
 * An {@link AgentRunner} over the Agent Client Protocol: one child process per agent id (the
 * {@link processPool}), whose sessions share its one connection, so turns run concurrently; each
 * turn is an {@link agentTurn} in it. What an agent offers is learned from a probe session of its own.
 */
export function createAcpAgentRunner(options: AcpAgentRunnerOptions): AcpAgentRunner {
  const log = options.log.child({ component: 'acp' });
  const pool = processPool({ ...options, log, probeStarted: (agent) => offerCache.refresh(agent) });
  const turns: TurnSettings = { log, ...(options.cancelGraceMs === undefined ? {} : { cancelGraceMs: options.cancelGraceMs }) };

  /**
   * Learns what an agent offers: starts it if it is not running and opens a session in a scratch
   * directory of this runner (no project's), whose answer says what the agent advertises. Only this
   * session is learned from: a turn's session changes its own options (Codex's efforts follow its
   * model), never what the agent offers. The process stays up for the turns that follow.
   */
  async function probe(agent: Agent): Promise<AgentOffer> {
    return pool.inUse(pool.probeKey(agent), async () => {
      const { proc } = await pool.processFor(agent, pool.probeKey(agent), () => pool.probeDirectory(agent));
      const cwd = await pool.probeDirectory(agent);
      const created = await proc.bounded(proc.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] }), 'session/new');
      return { ...offerOf(sessionState(created), null), steering: proc.steering };
    });
  }

  const offerCache = createOfferCache({ probe, log, timeoutMs: options.offerTimeoutMs ?? 10_000, retryMs: options.offerRetryMs ?? 30_000 });

  return {
    offers: offerCache.offers,
    stats: pool.stats,
    prestart: pool.prestart,

    async runTurn(request: TurnRequest): Promise<TurnResult> {
      if (pool.closed()) throw new Error('the agent runner is closed');
      // A cancel (or an idle time-out) is honoured while the agent starts and opens the session: the
      // turn rejects at once; the start and the session request go on, bounded, since other turns
      // may wait on the same process.
      if (request.signal?.aborted) throw notReady();
      const cwd = resolve(request.cwd);
      const key = pool.keyOf(request.agent, cwd);
      return pool.inUse(key, async () => {
        const held = await unlessAborted(pool.processFor(request.agent, key, () => mkdir(cwd, { recursive: true }).then(() => cwd)), request.signal);
        return agentTurn(held, request, turns);
      });
    },

    async setMode(agent: Agent, sessionId: string, mode: string) {
      // Under a sandbox the agent has a process per directory: the session is the one that knows it.
      const proc = (await pool.processesOf(agent)).find((p) => p !== null && p.alive() && p.sessions.has(sessionId)) ?? null;
      if (proc === null) return null;
      const refusal = await setSessionMode(proc, sessionId, mode);
      if (refusal !== null) log.warn({ agent: agent.id, sessionId, ...refusal }, 'the agent did not take the mode');
      return refusal;
    },

    async steer(agent: Agent, sessionId: string, text: string) {
      // The process whose turn runs the session: under a sandbox, one of several of the agent's.
      const proc = (await pool.processesOf(agent)).find((p) => p !== null && p.alive() && p.routes.has(sessionId)) ?? null;
      if (proc === null) return 'promptRequired';
      return steerSession(proc, sessionId, text, log.child({ agent: agent.id }), options.steerTimeoutMs ?? 10_000);
    },

    async close(): Promise<void> {
      offerCache.close();
      await pool.close();
    },
  };
}
