import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as acp from '@agentclientprotocol/sdk';
import type { Logger } from 'pino';
import { agentEnvironment, agentSecrets, passedSecrets, sameAgentProcess } from '../../domain/agent-env.ts';
import type { Agent } from '../../domain/model.ts';
import type { AgentOffer } from '../../domain/vocabulary.ts';
import { briefedPrompt } from '../../domain/history-brief.ts';
import type { AgentOffers } from '../../ports/agent-offers.ts';
import type { AgentRunner, TurnRequest, TurnResult } from '../../ports/agent-runner.ts';
import { type AgentProcess, type SessionModels, type SessionState, startAgentProcess } from './agent-process.ts';
import { applyPosture, setSessionMode } from './posture.ts';
import { redactor } from './agent-diagnostics.ts';
import { offerOf } from './offer.ts';
import { createOfferCache } from './offer-cache.ts';
import { openTurnRoute } from './turn-route.ts';

/** Options of {@link createAcpAgentRunner}. */
export interface AcpAgentRunnerOptions {
  readonly log: Logger;
  /** The argv of the agent whose `command` is null; by default the bundled demo agent under tsx. */
  readonly demoAgent?: readonly string[];
  /**
   * The service's environment, read when an agent starts: the source of the allow-listed variables
   * (`PATH`, `HOME`, `LANG`, `LC_*`, `TMPDIR`) and of each agent's `env_pass` names. The composition
   * root passes `process.env`; absent, agents get only their own `env` literals.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** How long a cancelled turn may take to end before its agent process group is ended (default 5 s). */
  readonly cancelGraceMs?: number;
  /**
   * How long an agent may leave `initialize`, `session/new` or `session/load` unanswered before it is
   * taken for broken: its process group is ended and the turn fails (default 30 s; real agents start
   * in 3 to 8 s).
   */
  readonly startTimeoutMs?: number;
  /** How long an agent may take to start and open its probe session before it is unavailable (default 10 s). */
  readonly offerTimeoutMs?: number;
  /** How long an unavailable agent is answered as such before it is asked again, in the background (default 30 s). */
  readonly offerRetryMs?: number;
  /** How long a process started ahead (`prestart`) waits to be taken before it is ended (default 60 s). */
  readonly prestartHoldMs?: number;
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

/** The bundled demo agent, run with this Node and tsx resolved from here (not from the cwd). */
function defaultDemoAgent(): readonly string[] {
  // From the sources (tests, tsx) the agent is TypeScript run through tsx; from dist/ it is compiled JavaScript.
  if (import.meta.url.endsWith('.js')) return [process.execPath, fileURLToPath(new URL('../../src/demo/acp-agent.js', import.meta.url))];
  const script = fileURLToPath(new URL('../../src/demo/acp-agent.ts', import.meta.url));
  return [process.execPath, '--import', import.meta.resolve('tsx'), script];
}

/**
 * An {@link AgentRunner} over the Agent Client Protocol: one child process per agent id, started
 * on first use (and `initialize`d once), started again by the next turn after it exits. All the
 * sessions of an agent share its process and its one connection, so turns run concurrently.
 */
export function createAcpAgentRunner(options: AcpAgentRunnerOptions): AcpAgentRunner {
  const log = options.log.child({ component: 'acp' });
  const demoAgent = options.demoAgent ?? defaultDemoAgent();
  const processes = new Map<string, Promise<AgentProcess>>();
  /**
   * Each process's redactor, made from the `env_pass` values it was started with (the service's
   * environment is read when an agent starts, not again for every turn: reading `process.env` whole is slow).
   */
  const redactors = new WeakMap<Promise<AgentProcess>, (text: string) => string>();
  /** Agents a process was started for, so a later start of one counts as a restart. */
  const startedBefore = new Set<string>();
  let restarts = 0;
  let scratch: Promise<string> | null = null;
  let closed = false;
  /** Aborted by `close`: starts still waiting for `initialize` end their process at once. */
  const closing = new AbortController();

  /** Spawns `agent`'s process (with its environment built now), and the redactor of what it sends. */
  function spawnFor(agent: Agent): { started: Promise<AgentProcess>; redact: (text: string) => string } {
    const agentLog = log.child({ agent: agent.id });
    const { env, missing } = agentEnvironment(agent, options.env ?? {});
    // Names only: a value may be a secret.
    if (missing.length > 0) agentLog.warn({ missing }, 'env_pass names variables the service environment does not hold');
    const started = startAgentProcess(agent.command ?? demoAgent, agentLog, {
      env, secrets: agentSecrets(agent, env), startTimeoutMs: options.startTimeoutMs, signal: closing.signal,
    });
    return { started, redact: redactor(passedSecrets(agent, env)) };
  }

  /** Processes started ahead of the catalog (`prestart`), by agent id, each with the agent it was started as. */
  const ahead = new Map<string, { readonly agent: Agent; readonly started: Promise<AgentProcess>; readonly redact: (text: string) => string; readonly hold: NodeJS.Timeout }>();

  /** Ends a process started ahead that nothing took. */
  function endAhead(id: string): Promise<void> {
    const entry = ahead.get(id);
    if (entry === undefined) return Promise.resolve();
    ahead.delete(id);
    clearTimeout(entry.hold);
    return entry.started.then((proc) => proc.stop(), () => {});
  }

  function start(agent: Agent): Promise<AgentProcess> {
    const early = ahead.get(agent.id);
    let spawned: { started: Promise<AgentProcess>; redact: (text: string) => string };
    if (early !== undefined && sameAgentProcess(early.agent, agent)) {
      ahead.delete(agent.id);
      clearTimeout(early.hold);
      spawned = early;
    } else {
      // Started as another agent of this id (the catalog is not the world file read at start): not this one's.
      void endAhead(agent.id);
      spawned = spawnFor(agent);
    }
    const { started } = spawned;
    processes.set(agent.id, started);
    redactors.set(started, spawned.redact);
    if (startedBefore.has(agent.id)) restarts += 1;
    else startedBefore.add(agent.id);
    const forget = () => {
      if (processes.get(agent.id) === started) processes.delete(agent.id);
    };
    started.then((proc) => {
      // A new process may offer otherwise (an upgrade, new credentials): it is asked, and what was known is answered meanwhile.
      offerCache.refresh(agent);
      return proc.exited.then(forget);
    }, forget);
    return started;
  }

  /**
   * Learns what an agent offers: starts it if it is not running and opens a session in a scratch
   * directory of this runner (no project's), whose answer says what the agent advertises. Only this
   * session is learned from: a turn's session changes its own options (Codex's efforts follow its
   * model), never what the agent offers. The process stays up for the turns that follow.
   */
  async function probe(agent: Agent): Promise<AgentOffer> {
    const { proc } = await processFor(agent);
    scratch ??= mkdtemp(join(tmpdir(), 'agent-offers-'));
    const cwd = join(await scratch, agent.id.replace(/[^A-Za-z0-9._-]/g, '_'));
    await mkdir(cwd, { recursive: true });
    const created = await proc.bounded(proc.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] }), 'session/new');
    return offerOf(stateOf(created), null);
  }

  const offerCache = createOfferCache({ probe, log, timeoutMs: options.offerTimeoutMs ?? 10_000, retryMs: options.offerRetryMs ?? 30_000 });

  /** The agent's live process (started when none is), and the redactor of what it sends. */
  async function processFor(agent: Agent): Promise<{ proc: AgentProcess; redact: (text: string) => string }> {
    // A process may have died before its exit was noticed: try once more with a fresh one.
    for (let attempt = 0; ; attempt++) {
      if (closed) throw new Error('the agent runner is closed');
      const entry = processes.get(agent.id) ?? start(agent);
      const proc = await entry;
      if (proc.alive()) return { proc, redact: redactors.get(entry)! };
      if (processes.get(agent.id) === entry) processes.delete(agent.id);
      if (attempt === 1) throw new Error(`the agent ${agent.id} exits as soon as it starts`);
    }
  }

  /** The turn's session: the given one when this process knows it, else a loaded, a resumed or (`fresh`) new one. */
  async function sessionFor(proc: AgentProcess, request: TurnRequest): Promise<{ sessionId: string; fresh: boolean }> {
    if (request.sessionId !== null && proc.sessions.has(request.sessionId)) return { sessionId: request.sessionId, fresh: false };
    const cwd = resolve(request.cwd);
    await mkdir(cwd, { recursive: true });
    let sessionId: string | null = null;
    let fresh = false;
    if (request.sessionId !== null && proc.capabilities.loadSession === true) {
      const loading = proc.agent.request(acp.methods.agent.session.load, { sessionId: request.sessionId, cwd, mcpServers: [] });
      try {
        const loaded = await proc.bounded(loading, 'session/load');
        const state = stateOf(loaded);
        proc.sessions.set(request.sessionId, state);
        sessionId = request.sessionId;
      } catch (error) {
        if (!proc.alive()) throw error;
        log.info({ err: error, sessionId: request.sessionId }, 'the agent could not load the session; starting a new one');
      }
    }
    // An agent that keeps its sessions but does not replay them resumes one (ACP `session/resume`).
    if (sessionId === null && request.sessionId !== null && proc.capabilities.sessionCapabilities?.resume != null) {
      const resuming = proc.agent.request(acp.methods.agent.session.resume, { sessionId: request.sessionId, cwd });
      try {
        const resumed = await proc.bounded(resuming, 'session/resume');
        proc.sessions.set(request.sessionId, stateOf(resumed));
        sessionId = request.sessionId;
      } catch (error) {
        if (!proc.alive()) throw error;
        log.info({ err: error, sessionId: request.sessionId }, 'the agent could not resume the session; starting a new one');
      }
    }
    if (sessionId === null) {
      const created = await proc.bounded(proc.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] }), 'session/new');
      const state = stateOf(created);
      proc.sessions.set(created.sessionId, state);
      sessionId = created.sessionId;
      fresh = true;
    }
    // A turn cancelled meanwhile has rejected already: its caller is told of no session.
    if (request.signal?.aborted) throw notReady();
    await request.onSession(sessionId);
    return { sessionId, fresh };
  }

  /** The prompt as sent: a fresh session of a thread with a past starts from the history brief. */
  async function promptFor(request: TurnRequest, fresh: boolean): Promise<string> {
    if (!fresh || request.history === undefined) return request.prompt;
    const history = await request.history();
    if (history === null) return request.prompt;
    await request.onBriefed?.();
    return briefedPrompt(history, request.prompt);
  }

  return {
    offers: offerCache.offers,
    stats: () => ({ alive: processes.size, restarts }),

    prestart(agents: readonly Agent[]): void {
      for (const agent of agents) {
        if (closed || processes.has(agent.id) || ahead.has(agent.id)) continue;
        const spawned = spawnFor(agent);
        // A failed start is answered to whoever takes it (or to no one): never unhandled meanwhile.
        spawned.started.catch(() => {});
        const hold = setTimeout(() => void endAhead(agent.id), options.prestartHoldMs ?? 60_000);
        hold.unref();
        ahead.set(agent.id, { agent, ...spawned, hold });
      }
    },

    async runTurn(request: TurnRequest): Promise<TurnResult> {
      if (closed) throw new Error('the agent runner is closed');
      // A cancel (or an idle time-out) is honoured while the agent starts and opens the session: the
      // turn rejects at once; the start and the session request go on, bounded, since other turns
      // may wait on the same process.
      if (request.signal?.aborted) throw notReady();
      const { proc, redact } = await unlessAborted(processFor(request.agent), request.signal);
      const { sessionId, fresh } = await unlessAborted(sessionFor(proc, request), request.signal);
      if (proc.routes.has(sessionId)) throw new Error(`a turn is already running in session ${sessionId}`);
      const turnLog = log.child({ agent: request.agent.id, sessionId });
      const route = openTurnRoute(request, turnLog, redact);
      proc.routes.set(sessionId, route);
      let grace: NodeJS.Timeout | undefined;
      let abandon!: (error: Error) => void;
      const abandoned = new Promise<never>((_, reject) => (abandon = reject));
      abandoned.catch(() => {});
      const cancel = () => {
        turnLog.info('cancelling the turn');
        void proc.agent.notify(acp.methods.agent.session.cancel, { sessionId }).catch(() => {});
        grace = setTimeout(() => {
          // An agent that ignores the cancel is ended with its process group, unless it is running
          // other sessions' turns: those are not this cancel's to end. Then the session is given up.
          if ([...proc.routes.keys()].some((id) => id !== sessionId)) {
            turnLog.warn('the agent did not end its cancelled turn; giving up its session (the agent serves other turns)');
            proc.sessions.delete(sessionId);
            abandon(new Error('the agent did not end its cancelled turn'));
          } else {
            turnLog.warn('the agent did not end its cancelled turn: stopping its process');
            void proc.stop();
          }
        }, options.cancelGraceMs ?? 5_000);
        grace.unref();
      };
      if (request.signal?.aborted) cancel();
      request.signal?.addEventListener('abort', cancel, { once: true });
      try {
        // What the agent did not take is reported, and the turn goes on in the posture the session has.
        for (const refusal of await applyPosture(proc, sessionId, request, turnLog)) await request.onPostureRefused?.(refusal);
        const prompt = await promptFor(request, fresh);
        await request.beforePrompt?.();
        const answer = await Promise.race([
          proc.guard(proc.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: prompt }] })),
          abandoned,
        ]);
        await route.settle();
        return { sessionId, stopReason: answer.stopReason };
      } catch (error) {
        // What arrived before the failure is still delivered, in order, before the turn rejects.
        await route.settle().catch(() => {});
        throw error;
      } finally {
        clearTimeout(grace);
        request.signal?.removeEventListener('abort', cancel);
        proc.routes.delete(sessionId);
      }
    },

    async setMode(agent: Agent, sessionId: string, mode: string) {
      const entry = processes.get(agent.id);
      const proc = entry ? await entry.catch(() => null) : null;
      if (proc === null || !proc.alive() || !proc.sessions.has(sessionId)) return null;
      const refusal = await setSessionMode(proc, sessionId, mode);
      if (refusal !== null) log.warn({ agent: agent.id, sessionId, ...refusal }, 'the agent did not take the mode');
      return refusal;
    },

    async close(): Promise<void> {
      closed = true;
      offerCache.close();
      closing.abort();
      const early = [...ahead.keys()].map(endAhead);
      const running = [...processes.values()];
      processes.clear();
      await Promise.all([...early, ...running.map(async (entry) => (await entry.catch(() => null))?.stop())]);
      if (scratch !== null) await rm(await scratch, { recursive: true, force: true }).catch(() => {});
    },
  };
}

/** Why a turn cancelled before its session was ready rejects. */
const notReady = () => new Error('the agent was not ready yet when the turn was cancelled');

/** `work`, unless `signal` aborts first (or has): then rejects at once, and `work` goes on unwatched. */
async function unlessAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  let off = () => {};
  const aborted = new Promise<never>((_, reject) => {
    const abort = () => reject(notReady());
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    off = () => signal.removeEventListener('abort', abort);
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    off();
  }
}

function stateOf(answer: acp.NewSessionResponse | acp.LoadSessionResponse): SessionState {
  return { modes: answer.modes ?? null, configOptions: answer.configOptions ?? [], models: modelsOf(answer) };
}

/** The `models` field an agent may still send beside the typed answer; null when absent or not well formed. */
function modelsOf(answer: object): SessionModels | null {
  const models = (answer as { models?: unknown }).models as Partial<SessionModels> | null | undefined;
  if (models == null || !Array.isArray(models.availableModels)) return null;
  const available = models.availableModels.filter((model) => typeof model?.modelId === 'string');
  return { availableModels: available, currentModelId: typeof models.currentModelId === 'string' ? models.currentModelId : '' };
}
