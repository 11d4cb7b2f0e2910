import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as acp from '@agentclientprotocol/sdk';
import type { Logger } from 'pino';
import { agentEnvironment, agentSecrets } from '../../domain/agent-env.ts';
import type { Agent } from '../../domain/model.ts';
import type { AgentRunner, TurnRequest, TurnResult } from '../../ports/agent-runner.ts';
import { type AgentProcess, type SessionState, startAgentProcess } from './agent-process.ts';
import { applyPosture, setSessionMode } from './posture.ts';
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
}

/** The bundled demo agent, run with this Node and tsx resolved from here (not from the cwd). */
function defaultDemoAgent(): readonly string[] {
  const script = fileURLToPath(new URL('../../src/demo/acp-agent.ts', import.meta.url));
  return [process.execPath, '--import', import.meta.resolve('tsx'), script];
}

/**
 * An {@link AgentRunner} over the Agent Client Protocol: one child process per agent id, started
 * on first use (and `initialize`d once), started again by the next turn after it exits. All the
 * sessions of an agent share its process and its one connection, so turns run concurrently.
 */
export function createAcpAgentRunner(options: AcpAgentRunnerOptions): AgentRunner {
  const log = options.log.child({ component: 'acp' });
  const demoAgent = options.demoAgent ?? defaultDemoAgent();
  const processes = new Map<string, Promise<AgentProcess>>();
  let closed = false;

  function start(agent: Agent): Promise<AgentProcess> {
    const agentLog = log.child({ agent: agent.id });
    const { env, missing } = agentEnvironment(agent, options.env ?? {});
    // Names only: a value may be a secret.
    if (missing.length > 0) agentLog.warn({ missing }, 'env_pass names variables the service environment does not hold');
    const started = startAgentProcess(agent.command ?? demoAgent, agentLog, env, agentSecrets(agent, env));
    processes.set(agent.id, started);
    const forget = () => {
      if (processes.get(agent.id) === started) processes.delete(agent.id);
    };
    started.then((proc) => proc.exited.then(forget), forget);
    return started;
  }

  async function processFor(agent: Agent): Promise<AgentProcess> {
    // A process may have died before its exit was noticed: try once more with a fresh one.
    for (let attempt = 0; ; attempt++) {
      if (closed) throw new Error('the agent runner is closed');
      const entry = processes.get(agent.id) ?? start(agent);
      const proc = await entry;
      if (proc.alive()) return proc;
      if (processes.get(agent.id) === entry) processes.delete(agent.id);
      if (attempt === 1) throw new Error(`the agent ${agent.id} exits as soon as it starts`);
    }
  }

  /** The turn's session: the given one when this process knows it, else a loaded or new one. */
  async function sessionFor(proc: AgentProcess, request: TurnRequest): Promise<string> {
    if (request.sessionId !== null && proc.sessions.has(request.sessionId)) return request.sessionId;
    const cwd = resolve(request.cwd);
    await mkdir(cwd, { recursive: true });
    let sessionId: string | null = null;
    if (request.sessionId !== null && proc.capabilities.loadSession === true) {
      const loading = proc.agent.request(acp.methods.agent.session.load, { sessionId: request.sessionId, cwd, mcpServers: [] });
      try {
        const loaded = await proc.guard(loading);
        proc.sessions.set(request.sessionId, stateOf(loaded));
        sessionId = request.sessionId;
      } catch (error) {
        if (!proc.alive()) throw error;
        log.info({ err: error, sessionId: request.sessionId }, 'the agent could not load the session; starting a new one');
      }
    }
    if (sessionId === null) {
      const created = await proc.guard(proc.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] }));
      proc.sessions.set(created.sessionId, stateOf(created));
      sessionId = created.sessionId;
    }
    await request.onSession(sessionId);
    return sessionId;
  }

  return {
    async runTurn(request: TurnRequest): Promise<TurnResult> {
      if (closed) throw new Error('the agent runner is closed');
      const proc = await processFor(request.agent);
      const sessionId = await sessionFor(proc, request);
      if (proc.routes.has(sessionId)) throw new Error(`a turn is already running in session ${sessionId}`);
      const turnLog = log.child({ agent: request.agent.id, sessionId });
      const route = openTurnRoute(request, turnLog);
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
        await applyPosture(proc, sessionId, request, turnLog);
        const answer = await Promise.race([
          proc.guard(proc.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: request.prompt }] })),
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

    async setMode(agent: Agent, sessionId: string, mode: string): Promise<void> {
      const entry = processes.get(agent.id);
      const proc = entry ? await entry.catch(() => null) : null;
      if (proc === null || !proc.alive() || !proc.sessions.has(sessionId)) return;
      await setSessionMode(proc, sessionId, mode, log.child({ agent: agent.id, sessionId }));
    },

    async close(): Promise<void> {
      closed = true;
      const running = [...processes.values()];
      processes.clear();
      await Promise.all(running.map(async (entry) => (await entry.catch(() => null))?.stop()));
    },
  };
}

function stateOf(answer: acp.NewSessionResponse | acp.LoadSessionResponse): SessionState {
  return { modes: answer.modes ?? null, configOptions: answer.configOptions ?? [] };
}
