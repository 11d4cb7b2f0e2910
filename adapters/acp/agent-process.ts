import { spawn } from 'node:child_process';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import * as acp from '@agentclientprotocol/sdk';
import type { Logger } from 'pino';
import { AgentRequestError, AUTH_REQUIRED, authenticationReason, lineSplitter, redactor, startupReason } from './agent-diagnostics.ts';
import { agentInput } from './agent-input.ts';

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
  /** The agent advertised steering (`_meta.steering.supported: true` in its `initialize` answer): it takes `_session/steering`. */
  readonly steering: boolean;
  /** Sessions this process made or loaded: a session id it does not know must be started again. */
  readonly sessions: Map<string, SessionState>;
  /** The running turn of each session. */
  readonly routes: Map<string, TurnRoute>;
  /** Resolves, with a sentence saying how, once the process has ended. */
  readonly exited: Promise<string>;
  alive(): boolean;
  /**
   * Waits for `request`, but never longer than the process lives; errors say what happened. An
   * error the agent answered rejects as an `AgentRequestError`, without the agent's own text.
   */
  guard<T>(request: Promise<T>): Promise<T>;
  /**
   * `guard`, bounded by the start-up time limit (for `session/new` and `session/load`): an agent
   * that has not answered `what` by then is taken for broken, and its process group is ended
   * before this rejects (`the agent did not answer <what> within ...`).
   */
  bounded<T>(request: Promise<T>, what: string): Promise<T>;
  /** Ends the process (TERM, then KILL) and waits until it has exited. */
  stop(): Promise<void>;
  /** Hands the agent's output on a line at a time until the returned function is called (agent-input.ts). */
  armInput(): () => void;
  /** Reads nothing more of what the agent sends until `until` settles (at most 100 ms: agent-input.ts). */
  holdInput(until: Promise<unknown>): void;
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

/** How much of a stderr line reaches the log (after its secrets are hidden). */
const LOGGED_STDERR_LINE = 2000;

/** Options of {@link startAgentProcess}. */
export interface AgentProcessOptions {
  /** The process's whole environment: never the service's own (see `agentEnvironment`). */
  readonly env: Readonly<Record<string, string>>;
  /** The values of the agent's own variables (see `agentSecrets`): what the agent writes reaches the log without them. */
  readonly secrets?: readonly string[];
  /** How long `initialize`, and each `bounded` request, may go unanswered before the process group is ended (default 30 s). */
  readonly startTimeoutMs?: number;
  /** Aborted to give the start up (the runner closes): the process is ended and the start rejects at once. */
  readonly signal?: AbortSignal;
}

const LATE = Symbol('late');

/** A time limit as a reason says it. */
const duration = (ms: number) => (ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`);

/**
 * Spawns an agent with exactly `options.env` as its environment, connects to its stdio and runs
 * `initialize`; rejects if it dies, refuses or stays silent past the start-up time limit first,
 * with a reason that says so (`the agent could not start: ...`), once its process group has ended.
 */
export async function startAgentProcess(argv: readonly string[], log: Logger, options: AgentProcessOptions): Promise<AgentProcess> {
  const { env, secrets = [], startTimeoutMs = 30_000, signal } = options;
  const [command, ...args] = argv;
  if (command === undefined) throw new Error('the agent has an empty command');
  // Its own process group: what the agent starts (a bundled CLI, shells) ends with it (see `stop`).
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env, detached: true });
  if (child.pid !== undefined) trackGroup(child.pid);
  const plog = log.child({ agentPid: child.pid });
  let ended = false;
  let stopping = false;
  /** Set once a bound has taken the agent for broken and ends it (see `bounded`). */
  let overdue = false;
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
  // The agent's stderr is its diagnostics: to the debug log, line by line, its secrets hidden, then
  // cut (cut first, a secret across the cut would show its start). Lines are split here, not by
  // readline, so a line without end is held only up to MAX_STDERR_LINE.
  const lines = lineSplitter((line) => {
    if (plog.isLevelEnabled('debug')) plog.debug({ stderr: redact(line).slice(0, LOGGED_STDERR_LINE) }, 'agent stderr');
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => lines.push(chunk));
  child.stderr.on('end', () => lines.end());

  const sessions = new Map<string, SessionState>();
  const routes = new Map<string, TurnRoute>();
  const app = acp
    .client({ name: 'agent-console' })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      const state = sessions.get(params.sessionId);
      track(state, params.update);
      routes.get(params.sessionId)?.update(params.update);
    })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
      const route = routes.get(params.sessionId);
      return route ? route.permission(params) : { outcome: { outcome: 'cancelled' } };
    });
  const input = agentInput(child.stdout);
  const connection = app.connect(acp.ndJsonStream(Writable.toWeb(child.stdin), input.readable));
  // What the agent wrote before it exited (its last answer) is read, and handled, before its exit counts:
  // at most 2 s later than the exit.
  const gone = exited.then(async (reason) => {
    await Promise.race([input.drained.then(() => new Promise((resolve) => setImmediate(resolve))), delay(2000, null)]);
    return reason;
  });
  void gone.then(() => connection.close());

  async function guard<T>(request: Promise<T>): Promise<T> {
    try {
      return await Promise.race([request, gone.then((reason) => Promise.reject(new Error(reason)))]);
    } catch (error) {
      if (error instanceof acp.RequestError) {
        // Its message is the agent's own text, which may hold an upstream (model provider) body: logged, not recorded.
        // Redacted whole, then cut; never kept as a cause, which `{ err }` lines would print whole.
        plog.info({ code: error.code, message: redact(error.message).slice(0, 2000) }, 'the agent answered an error');
        if (error.code === AUTH_REQUIRED) throw new AgentRequestError(authenticationReason(authMethods), error.code);
        throw new AgentRequestError(`the agent answered the request with error ${error.code}`, error.code);
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

  async function bounded<T>(request: Promise<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<typeof LATE>((resolve) => {
      timer = setTimeout(resolve, startTimeoutMs, LATE);
      timer.unref();
    });
    try {
      // Another bounded request of this process (the runner's probe session beside a turn's) may reach its
      // bound a moment earlier and end the process: this one, sent before, went unanswered too, and is refused
      // at its own bound as what it asked (`did not answer session/load`), not as how the process ended
      // (`stopped by SIGTERM`), whichever of its time-out and the exit comes first. It waits no longer than alone.
      const sentInTime = !overdue;
      const answered = guard(request).catch((error: unknown) =>
        sentInTime && overdue && !(error instanceof AgentRequestError) ? late : Promise.reject(error));
      const answer = await Promise.race([answered, late]);
      if (answer !== LATE) return answer as T;
    } finally {
      clearTimeout(timer);
    }
    plog.warn({ request: what, ms: startTimeoutMs }, 'the agent did not answer in time: stopping its process');
    overdue = true;
    await stop();
    throw new Error(`the agent did not answer ${what} within ${duration(startTimeoutMs)}`);
  }

  async function stop(): Promise<void> {
    if (ended) return;
    stopping = true;
    signalGroup('SIGTERM');
    if ((await Promise.race([exited, delay(3000, null)])) === null) signalGroup('SIGKILL');
    await exited;
    // Children that outlived the agent in its group (a shell it started) go too.
    signalGroup('SIGKILL');
  }

  // A close of the runner while this start waits ends it at once.
  let giveUp = () => {};
  const givenUp = new Promise<never>((_, reject) => {
    giveUp = () => reject(new Error('the agent runner is closed'));
  });
  givenUp.catch(() => {});
  if (signal?.aborted) giveUp();
  signal?.addEventListener('abort', giveUp, { once: true });
  try {
    const initializing = connection.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      // This client serves no files and no terminals: agents use their own.
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: 'agent-console', version: '0.1.0' },
    });
    const init = await Promise.race([bounded(initializing, 'initialize'), givenUp]);
    authMethods = init.authMethods ?? [];
    if (init.protocolVersion !== acp.PROTOCOL_VERSION) throw new Error(`the agent speaks ACP version ${init.protocolVersion}, not ${acp.PROTOCOL_VERSION}`);
    plog.info({ agentInfo: init.agentInfo ?? null }, 'agent process started');
    const capabilities = init.agentCapabilities ?? {};
    const steering = advertisesSteering(init);
    return { pid: child.pid, agent: connection.agent, capabilities, steering, sessions, routes, exited, alive: () => !ended, guard, bounded, stop, armInput: input.arm, holdInput: input.hold };
  } catch (error) {
    await stop();
    if (signal?.aborted) throw new Error('the agent runner is closed');
    throw new Error(startupReason(error), { cause: error });
  } finally {
    signal?.removeEventListener('abort', giveUp);
  }
}

/**
 * Whether an `initialize` answer advertises steering: `_meta.steering.supported: true` at its top level, where
 * Claude Code's and Codex's adapters put it (beside `agentCapabilities`), or inside `agentCapabilities._meta`.
 */
export function advertisesSteering(init: acp.InitializeResponse): boolean {
  const supported = (meta: unknown) => {
    const steering = meta !== null && typeof meta === 'object' ? (meta as { steering?: unknown }).steering : undefined;
    return steering !== null && typeof steering === 'object' && (steering as { supported?: unknown }).supported === true;
  };
  return supported(init._meta) || supported(init.agentCapabilities?._meta);
}

/**
 * Keeps a session's known mode and config options current, so posture is only sent when it differs;
 * answers whether the update changed them.
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
