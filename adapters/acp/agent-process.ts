import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Readable, Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import * as acp from '@agentclientprotocol/sdk';
import type { Logger } from 'pino';
import { AUTH_REQUIRED, authenticationReason, redactor, startupReason } from './agent-diagnostics.ts';
import type { AgentOffer } from '../../domain/vocabulary.ts';
import { offerOf } from './offer.ts';

/** What the client knows about one session of a process, kept current from the agent's updates. */
export interface SessionState {
  modes: acp.SessionModeState | null;
  configOptions: acp.SessionConfigOption[];
  /**
   * The session's `models` field (ACP's earlier, unstable model list, which Claude Code and Gemini CLI
   * still send; the SDK's types no longer name it, but passes it through), or null.
   */
  models: SessionModels | null;
}

/** ACP's unstable `models` field of a session: the models it offers and the current one. */
export interface SessionModels {
  availableModels: { modelId: string; name?: string }[];
  currentModelId: string;
}

/** Where a running turn receives its session's updates and permission requests. */
export interface TurnRoute {
  update(update: acp.SessionUpdate): void;
  permission(request: acp.RequestPermissionRequest): Promise<acp.RequestPermissionResponse>;
}

/** One agent process and its single ACP connection; every session of the agent is multiplexed on it. */
export interface AgentProcess {
  readonly pid: number | undefined;
  readonly agent: acp.ClientContext;
  readonly capabilities: acp.AgentCapabilities;
  /** Sessions this process made or loaded: a session id it does not know must be started again. */
  readonly sessions: Map<string, SessionState>;
  /** The running turn of each session. */
  readonly routes: Map<string, TurnRoute>;
  /** What the agent advertised, from its latest session (null before its first): a restarted agent learns anew. */
  readonly offer: AgentOffer | null;
  /**
   * Learns what the agent offers from a session's state: `fresh` for a new session's answer (its
   * mode is the one sessions start in), false for a later change (the lists are refreshed).
   */
  learn(state: SessionState, fresh: boolean): void;
  /** Resolves, with a sentence saying how, once the process has ended. */
  readonly exited: Promise<string>;
  alive(): boolean;
  /** Waits for `request`, but never longer than the process lives; errors say what happened. */
  guard<T>(request: Promise<T>): Promise<T>;
  /** Ends the process (TERM, then KILL) and waits until it has exited. */
  stop(): Promise<void>;
}

/**
 * Agent process groups still alive, ended with this process however it exits: a hard exit (the
 * shutdown deadline, process.exit) skips `stop`, and detached groups would outlive it. Only
 * `kill -9` of the service escapes this; an agent then ends when its stdin closes, or not at all.
 */
const liveGroups = new Set<number>();
let endGroupsOnExit = false;
function trackGroup(pid: number): void {
  liveGroups.add(pid);
  if (endGroupsOnExit) return;
  endGroupsOnExit = true;
  process.once('exit', () => {
    for (const group of liveGroups) {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  });
}

// Unreferenced: a pending wait must not keep the server alive.
const delay = <T>(ms: number, value: T) => sleep(ms, value, { ref: false });

/**
 * Spawns an agent with exactly `env` as its environment (never the service's own: see
 * `agentEnvironment`), connects to its stdio and runs `initialize`; rejects if it dies or refuses
 * first, with a reason that says so (`the agent could not start: ...`). `secrets` (the values of the
 * agent's own variables: see `agentSecrets`) never reach a log line: what the agent writes is redacted.
 */
export async function startAgentProcess(
  argv: readonly string[],
  log: Logger,
  env: Readonly<Record<string, string>>,
  secrets: readonly string[] = [],
): Promise<AgentProcess> {
  const [command, ...args] = argv;
  if (command === undefined) throw new Error('the agent has an empty command');
  // Its own process group: what the agent starts (a bundled CLI, shells) ends with it (see `stop`).
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env, detached: true });
  if (child.pid !== undefined) trackGroup(child.pid);
  const plog = log.child({ agentPid: child.pid });
  let ended = false;
  let stopping = false;
  const redact = redactor(secrets);
  // What `initialize` offered, named when the agent later wants authentication.
  let authMethods: readonly acp.AuthMethod[] = [];
  const exited = new Promise<string>((resolve) => {
    child.once('error', (error) => resolve(`the agent process could not start: ${error.message}`));
    child.once('exit', (code, signal) =>
      resolve(code !== null ? `the agent process exited with status ${code}` : `the agent process was stopped by ${signal}`),
    );
  }).then((reason) => {
    ended = true;
    // Whatever the agent left running in its group (a shell, a bundled CLI) ends with it, crash or not.
    signalGroup('SIGKILL');
    if (child.pid !== undefined) liveGroups.delete(child.pid);
    // An exit nobody asked for is worth a warning: the next turn restarts the agent.
    if (stopping) plog.info(reason);
    else plog.warn(reason);
    return reason;
  });
  // A dead child's pipes error (EPIPE); without listeners that would crash this server.
  for (const stream of [child.stdin, child.stdout, child.stderr]) stream.on('error', (error) => plog.debug({ err: error }, 'agent pipe error'));
  // The agent's stderr is its diagnostics: to the debug log, line by line, bounded, its secrets hidden.
  createInterface({ input: child.stderr }).on('line', (line) => plog.debug({ stderr: redact(line.slice(0, 2000)) }, 'agent stderr'));

  const sessions = new Map<string, SessionState>();
  const routes = new Map<string, TurnRoute>();
  let offer: AgentOffer | null = null;
  const learn = (state: SessionState, fresh: boolean): void => {
    offer = offerOf(state, fresh ? null : offer);
  };
  const app = acp
    .client({ name: 'agent-console' })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      const state = sessions.get(params.sessionId);
      if (track(state, params.update)) learn(state!, false);
      routes.get(params.sessionId)?.update(params.update);
    })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
      const route = routes.get(params.sessionId);
      return route ? route.permission(params) : { outcome: { outcome: 'cancelled' } };
    });
  const output = Readable.toWeb(child.stdout) as unknown as ReadableStream<Uint8Array>;
  const connection = app.connect(acp.ndJsonStream(Writable.toWeb(child.stdin), output));
  void exited.then(() => connection.close());

  async function guard<T>(request: Promise<T>): Promise<T> {
    try {
      return await Promise.race([request, exited.then((reason) => Promise.reject(new Error(reason)))]);
    } catch (error) {
      if (error instanceof acp.RequestError) {
        // Its message is the agent's own text, which may hold an upstream (model provider) body: logged, not recorded.
        plog.info({ code: error.code, message: redact(error.message.slice(0, 2000)) }, 'the agent answered an error');
        if (error.code === AUTH_REQUIRED) throw new Error(authenticationReason(authMethods), { cause: error });
        throw new Error(`the agent answered the request with error ${error.code}`, { cause: error });
      }
      // The connection closes when stdout ends, usually just before the exit event: wait for it
      // briefly so the message says how the process ended.
      const reason = await Promise.race([exited, delay(2000, null)]);
      throw new Error(reason ?? `the agent connection failed: ${(error as Error).message}`, { cause: error });
    }
  }

  /** Signals the agent's whole process group; the child alone if the group is gone. */
  const signalGroup = (signal: NodeJS.Signals): void => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
      else child.kill(signal);
    } catch {
      child.kill(signal);
    }
  };

  async function stop(): Promise<void> {
    if (ended) return;
    stopping = true;
    signalGroup('SIGTERM');
    if ((await Promise.race([exited, delay(3000, null)])) === null) signalGroup('SIGKILL');
    await exited;
    // Children that outlived the agent in its group (a shell it started) go too.
    signalGroup('SIGKILL');
  }

  try {
    const init = await guard(
      connection.agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        // This client serves no files and no terminals: agents use their own.
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        clientInfo: { name: 'agent-console', version: '0.1.0' },
      }),
    );
    authMethods = init.authMethods ?? [];
    if (init.protocolVersion !== acp.PROTOCOL_VERSION) throw new Error(`the agent speaks ACP version ${init.protocolVersion}, not ${acp.PROTOCOL_VERSION}`);
    plog.info({ agentInfo: init.agentInfo ?? null }, 'agent process started');
    const capabilities = init.agentCapabilities ?? {};
    return {
      pid: child.pid, agent: connection.agent, capabilities, sessions, routes, exited, alive: () => !ended, guard, stop, learn,
      get offer() {
        return offer;
      },
    };
  } catch (error) {
    await stop();
    throw new Error(startupReason(error), { cause: error });
  }
}

/**
 * Keeps a session's known mode and config options current, so posture is only sent when it differs;
 * answers whether the update changed them (what the agent offers is then learned again).
 */
function track(state: SessionState | undefined, update: acp.SessionUpdate): boolean {
  if (!state) return false;
  if (update.sessionUpdate === 'current_mode_update' && state.modes) {
    state.modes.currentModeId = update.currentModeId;
    return true;
  }
  if (update.sessionUpdate === 'config_option_update') {
    state.configOptions = update.configOptions;
    return true;
  }
  return false;
}
