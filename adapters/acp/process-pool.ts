import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { agentEnvironment, agentSecrets, passedSecrets, sameAgentProcess } from '../../domain/agent-env.ts';
import type { Agent } from '../../domain/model.ts';
import { type AgentProcess, startAgentProcess } from './agent-process.ts';
import { redactor, startupReason } from './agent-diagnostics.ts';
import { type AgentSandbox, sandboxedSpawn } from './sandbox.ts';
import { processLifetimes } from './process-lifetimes.ts';

/** Options of {@link processPool}: how agent processes are started, confined and kept. */
export interface ProcessPoolOptions {
  readonly log: Logger;
  /** The argv of the agent whose `command` is null; by default the bundled demo agent (compiled under dist/, else under tsx). */
  readonly demoAgent?: readonly string[];
  /**
   * The service's environment, read when an agent starts: the source of the allow-listed variables
   * (`PATH`, `HOME`, `LANG`, `LC_*`, `TMPDIR`) and of each agent's `env_pass` names. The composition
   * root passes `process.env`; absent, agents get only their own `env` literals.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * How long an agent may leave `initialize`, `session/new` or `session/load` unanswered before it is
   * taken for broken: its process group is ended and the turn fails (default 30 s; real agents start
   * in 3 to 8 s).
   */
  readonly startTimeoutMs?: number;
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
  /** Told of `agent`'s probe process being started: what a new process offers may differ (an upgrade, new credentials). */
  readonly probeStarted: (agent: Agent) => void;
}

/** A process of the pool taken for use, with the redactor of what it sends. */
export interface HeldProcess {
  readonly proc: AgentProcess;
  readonly redact: (text: string) => string;
}

/** The agent processes of one runner: started, held, reused, restarted after they exit, and ended. */
export interface ProcessPool {
  /** The key of `agent`'s process for a turn in `cwd`: the agent id, or under a sandbox the agent id and `cwd`. */
  readonly keyOf: (agent: Agent, cwd: string) => string;
  /** The key of the process of `agent` that its probe session uses. */
  readonly probeKey: (agent: Agent) => string;
  /** The scratch directory of the runner's own probe session of `agent` (made on first use). */
  readonly probeDirectory: (agent: Agent) => Promise<string>;
  /** Runs `work` with the process of `key` counted in use: under a sandbox, it is never ended meanwhile. */
  readonly inUse: <T>(key: string, work: () => Promise<T>) => Promise<T>;
  /** The agent's live process under `key` (started in `cwd` when none is), and the redactor of what it sends. */
  readonly processFor: (agent: Agent, key: string, cwd: () => Promise<string>) => Promise<HeldProcess>;
  /** The agent's processes alive or starting, each null when its start failed. */
  readonly processesOf: (agent: Agent) => Promise<(AgentProcess | null)[]>;
  /** Starts these agents' processes ahead of their first use (see `AcpAgentRunner.prestart`). */
  readonly prestart: (agents: readonly Agent[]) => void;
  /** Whether `close` was called. */
  readonly closed: () => boolean;
  /** Processes alive (or starting) now, and starts that replaced an earlier process of the same key. */
  readonly stats: () => { readonly alive: number; readonly restarts: number };
  /** Ends every process (those started ahead too) and removes the scratch directory. */
  readonly close: () => Promise<void>;
}

/** The bundled demo agent, run with this Node and tsx resolved from here (not from the cwd). */
function defaultDemoAgent(): readonly string[] {
  // From the sources (tests, tsx) the agent is TypeScript run through tsx; from dist/ it is compiled JavaScript.
  if (import.meta.url.endsWith('.js')) return [process.execPath, fileURLToPath(new URL('../../src/demo/acp-agent.js', import.meta.url))];
  const script = fileURLToPath(new URL('../../src/demo/acp-agent.ts', import.meta.url));
  return [process.execPath, '--import', import.meta.resolve('tsx'), script];
}

/** The probe's key under a sandbox, beside working directories (absolute paths, which never hold a NUL). */
const PROBE = '\0probe';

/**
 * One child process per agent id, started on first use (and `initialize`d once), started again by
 * the next use after it exits. Under a sandbox (`options.sandbox`), one process per agent and
 * working directory, each seeing only its own, and the probe's in its scratch directory; idle ones
 * end (see {@link processLifetimes}).
 */
export function processPool(options: ProcessPoolOptions): ProcessPool {
  const { log } = options;
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
      if (key === probeKey(agent)) options.probeStarted(agent);
      return proc.exited.then(forget);
    }, forget);
    return started;
  }

  async function probeDirectory(agent: Agent): Promise<string> {
    scratch ??= mkdtemp(join(tmpdir(), 'agent-offers-'));
    const cwd = join(await scratch, agent.id.replace(/[^A-Za-z0-9._-]/g, '_'));
    await mkdir(cwd, { recursive: true });
    return cwd;
  }

  async function processFor(agent: Agent, key: string, cwd: () => Promise<string>): Promise<HeldProcess> {
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

  return {
    keyOf,
    probeKey,
    probeDirectory,
    inUse,
    processFor,
    processesOf: (agent) => Promise.all([...processes].filter(([key]) => isKeyOf(key, agent)).map(([, entry]) => entry.catch(() => null))),
    closed: () => closed,
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

    async close(): Promise<void> {
      closed = true;
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
