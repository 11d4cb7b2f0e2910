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
import { redactor, startupReason } from './agent-diagnostics.ts';
import { offerOf } from './offer.ts';
import { createOfferCache } from './offer-cache.ts';
import { openTurnRoute } from './turn-route.ts';
import { type AgentSandbox, sandboxedSpawn } from './sandbox.ts';
import { processLifetimes } from './process-lifetimes.ts';

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
  /**
   * Confines every agent process with bubblewrap (see {@link AgentSandbox}); absent, agents run as the
   * service runs. A sandbox shows an agent its session's working directory alone, so a sandboxed
   * agent has one process per working directory (a thread's worktree), not one per agent id.
   */
  readonly sandbox?: AgentSandbox;
  /** Sandboxed processes past which the least recently used idle one is ended before another starts (default 8). */
  readonly sandboxedProcesses?: number;
  /** How long a sandboxed process may run no turn before it is ended (default 10 min); its sessions are loaded again, or briefed. */
  readonly sandboxIdleMs?: number;
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
 * sessions of an agent share its process and its one connection, so turns run concurrently. Under
 * a sandbox (`options.sandbox`), one process per agent and working directory, each seeing only its
 * own, and the probe's in its scratch directory; idle ones end (see {@link processLifetimes}).
 */
export function createAcpAgentRunner(options: AcpAgentRunnerOptions): AcpAgentRunner {
  const log = options.log.child({ component: 'acp' });
  const demoAgent = options.demoAgent ?? defaultDemoAgent();
  const sandbox = options.sandbox ?? null;
  /**
   * Processes by key: the agent id, or under a sandbox the agent id and the working directory (each
   * sees only its own), the probe's under {@link PROBE} since its scratch directory is made lazily.
   */
  const processes = new Map<string, Promise<AgentProcess>>();
  const keyOf = (agent: Agent, cwd: string) => (sandbox === null ? agent.id : `${agent.id}\n${cwd}`);
  const probeKey = (agent: Agent) => (sandbox === null ? agent.id : `${agent.id}\n${PROBE}`);
  const isKeyOf = (key: string, agent: Agent) => key === agent.id || key.startsWith(`${agent.id}\n`);
  /** Sandboxed, processes pile up with working directories: idle ones are ended, and their count bounded. */
  const lifetimes = sandbox === null ? null : processLifetimes({
    log, idleMs: options.sandboxIdleMs ?? 600_000, bound: options.sandboxedProcesses ?? 8, ended: (key) => startedBefore.delete(key),
  });
  const inUse = <T>(key: string, work: () => Promise<T>): Promise<T> => lifetimes?.inUse(key, work) ?? work();
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

  /**
   * Spawns `agent`'s process (with its environment built now), and the redactor of what it sends;
   * under a sandbox, confined to the working directory `cwd` answers.
   */
  function spawnFor(agent: Agent, cwd: () => Promise<string>): { started: Promise<AgentProcess>; redact: (text: string) => string } {
    const agentLog = log.child({ agent: agent.id });
    const { env, missing } = agentEnvironment(agent, options.env ?? {});
    // Names only: a value may be a secret.
    if (missing.length > 0) agentLog.warn({ missing }, 'env_pass names variables the service environment does not hold');
    const argv = agent.command ?? demoAgent;
    const startAs = (how: { argv: readonly string[]; env: Record<string, string> }) => startAgentProcess(how.argv, agentLog, {
      env: how.env, secrets: agentSecrets(agent, env), startTimeoutMs: options.startTimeoutMs, signal: closing.signal,
    });
    // Unconfined, the process is spawned now (a start ahead is under way as `prestart` returns).
    const started = sandbox === null
      ? startAs({ argv, env })
      : cwd()
        .then((dir) => sandboxedSpawn(sandbox, { agentId: agent.id, argv, env, literals: agent.env ?? {}, cwd: dir, network: agent.network !== 'none' }))
        // Said as a failed spawn is (`its command was not found`), before bwrap would hide it behind a status of 1.
        .catch((error: unknown) => Promise.reject(new Error(startupReason(error), { cause: error })))
        .then(startAs);
    return { started, redact: redactor(passedSecrets(agent, env)) };
  }

  /** Processes started ahead of the catalog (`prestart`), by agent id, each with the agent it was started as. */
  const ahead = new Map<string, { readonly agent: Agent; readonly key: string; readonly started: Promise<AgentProcess>; readonly redact: (text: string) => string; readonly hold: NodeJS.Timeout }>();

  /** Ends a process started ahead that nothing took. */
  function endAhead(id: string): Promise<void> {
    const entry = ahead.get(id);
    if (entry === undefined) return Promise.resolve();
    ahead.delete(id);
    clearTimeout(entry.hold);
    return entry.started.then((proc) => proc.stop(), () => {});
  }

  function start(agent: Agent, key: string, cwd: () => Promise<string>): Promise<AgentProcess> {
    const early = ahead.get(agent.id);
    let spawned: { started: Promise<AgentProcess>; redact: (text: string) => string };
    if (early !== undefined && early.key === key && sameAgentProcess(early.agent, agent)) {
      ahead.delete(agent.id);
      clearTimeout(early.hold);
      spawned = early;
    } else {
      // Started as another agent of this id (the catalog is not the world file read at start): not this one's.
      if (early !== undefined && early.key === key) void endAhead(agent.id);
      lifetimes?.makeRoom(processes.size);
      spawned = spawnFor(agent, cwd);
    }
    const { started } = spawned;
    processes.set(key, started);
    redactors.set(started, spawned.redact);
    if (startedBefore.has(key)) restarts += 1;
    else startedBefore.add(key);
    const forget = () => {
      if (processes.get(key) !== started) return;
      processes.delete(key);
      lifetimes?.gone(key);
    };
    started.then((proc) => {
      lifetimes?.up(key, proc);
      // A new process may offer otherwise (an upgrade, new credentials): it is asked, and what was known is
      // answered meanwhile. Under a sandbox, only when the probe's own process starts: a thread's would start it again.
      if (key === probeKey(agent)) offerCache.refresh(agent);
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
    return inUse(probeKey(agent), async () => {
      const { proc } = await processFor(agent, probeKey(agent), () => probeDirectory(agent));
      const cwd = await probeDirectory(agent);
      const created = await proc.bounded(proc.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] }), 'session/new');
      return offerOf(stateOf(created), null);
    });
  }

  const offerCache = createOfferCache({ probe, log, timeoutMs: options.offerTimeoutMs ?? 10_000, retryMs: options.offerRetryMs ?? 30_000 });

  /** The scratch directory of the runner's own probe session of `agent` (made on first use). */
  async function probeDirectory(agent: Agent): Promise<string> {
    scratch ??= mkdtemp(join(tmpdir(), 'agent-offers-'));
    const cwd = join(await scratch, agent.id.replace(/[^A-Za-z0-9._-]/g, '_'));
    await mkdir(cwd, { recursive: true });
    return cwd;
  }

  /** The agent's live process under `key` (started in `cwd` when none is), and the redactor of what it sends. */
  async function processFor(agent: Agent, key: string, cwd: () => Promise<string>): Promise<{ proc: AgentProcess; redact: (text: string) => string }> {
    // A process may have died before its exit was noticed: try once more with a fresh one.
    for (let attempt = 0; ; attempt++) {
      if (closed) throw new Error('the agent runner is closed');
      const entry = processes.get(key) ?? start(agent, key, cwd);
      const proc = await entry;
      if (proc.alive()) return { proc, redact: redactors.get(entry)! };
      if (processes.get(key) === entry) processes.delete(key);
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

  /** One turn in the process of `key` (see `runTurn`). */
  async function turnIn(request: TurnRequest, key: string, cwd: string): Promise<TurnResult> {
    const { proc, redact } = await unlessAborted(processFor(request.agent, key, () => mkdir(cwd, { recursive: true }).then(() => cwd)), request.signal);
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
  }

  return {
    offers: offerCache.offers,
    stats: () => ({ alive: processes.size, restarts }),

    prestart(agents: readonly Agent[]): void {
      for (const agent of agents) {
        const key = probeKey(agent);
        if (closed || processes.has(key) || ahead.has(agent.id)) continue;
        // Under a sandbox the process started ahead is the probe's: a thread's needs its own directory.
        const spawned = spawnFor(agent, () => probeDirectory(agent));
        // A failed start is answered to whoever takes it (or to no one): never unhandled meanwhile.
        spawned.started.catch(() => {});
        const hold = setTimeout(() => void endAhead(agent.id), options.prestartHoldMs ?? 60_000);
        hold.unref();
        ahead.set(agent.id, { agent, key, ...spawned, hold });
      }
    },

    async runTurn(request: TurnRequest): Promise<TurnResult> {
      if (closed) throw new Error('the agent runner is closed');
      // A cancel (or an idle time-out) is honoured while the agent starts and opens the session: the
      // turn rejects at once; the start and the session request go on, bounded, since other turns
      // may wait on the same process.
      if (request.signal?.aborted) throw notReady();
      const cwd = resolve(request.cwd);
      const key = keyOf(request.agent, cwd);
      return inUse(key, () => turnIn(request, key, cwd));
    },

    async setMode(agent: Agent, sessionId: string, mode: string) {
      // Under a sandbox the agent has a process per directory: the session is the one that knows it.
      const entries = [...processes].filter(([key]) => isKeyOf(key, agent)).map(([, entry]) => entry.catch(() => null));
      const proc = (await Promise.all(entries)).find((p) => p !== null && p.alive() && p.sessions.has(sessionId)) ?? null;
      if (proc === null) return null;
      const refusal = await setSessionMode(proc, sessionId, mode);
      if (refusal !== null) log.warn({ agent: agent.id, sessionId, ...refusal }, 'the agent did not take the mode');
      return refusal;
    },

    async close(): Promise<void> {
      closed = true;
      offerCache.close();
      closing.abort();
      lifetimes?.close();
      const early = [...ahead.keys()].map(endAhead);
      const running = [...processes.values()];
      processes.clear();
      await Promise.all([...early, ...running.map(async (entry) => (await entry.catch(() => null))?.stop())]);
      if (scratch !== null) await rm(await scratch, { recursive: true, force: true }).catch(() => {});
    },
  };
}

/** The probe's key under a sandbox, beside working directories (absolute paths, which never hold a NUL). */
const PROBE = '\0probe';

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
