import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import * as acp from '@agentclientprotocol/sdk';
import type { Logger } from 'pino';
import { briefedPrompt } from '../../domain/history-brief.ts';
import type { TurnRequest, TurnResult } from '../../ports/agent-runner.ts';
import type { AgentProcess } from './agent-process.ts';
import { applyPosture } from './posture.ts';
import type { HeldProcess } from './process-pool.ts';
import { forkSession, offersFork } from './session-fork.ts';
import { sessionState } from './session-state.ts';
import { openTurnRoute } from './turn-route.ts';

/** What every turn of one runner shares. */
export interface TurnSettings {
  readonly log: Logger;
  /** How long a cancelled turn may take to end before its agent process group is ended (default 5 s). */
  readonly cancelGraceMs?: number;
}

/** Why a turn cancelled before its session was ready rejects. */
export const notReady = () => new Error('the agent was not ready yet when the turn was cancelled');

/** `work`, unless `signal` aborts first (or has): then rejects at once, and `work` goes on unwatched. */
export async function unlessAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
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

/** How a turn's session was opened: continued (known, loaded, resumed), `forked` from another, or `fresh`. */
type Opened = 'continued' | 'forked' | 'fresh';

/** The turn's session: the given one when this process knows it, else a loaded, a resumed, a forked or a fresh one. */
async function sessionFor(proc: AgentProcess, request: TurnRequest, log: Logger): Promise<{ sessionId: string; opened: Opened }> {
  if (request.sessionId !== null && proc.sessions.has(request.sessionId)) return { sessionId: request.sessionId, opened: 'continued' };
  const cwd = resolve(request.cwd);
  await mkdir(cwd, { recursive: true });
  let sessionId: string | null = null;
  let opened: Opened = 'continued';
  if (request.sessionId !== null && proc.capabilities.loadSession === true) {
    const loading = proc.agent.request(acp.methods.agent.session.load, { sessionId: request.sessionId, cwd, mcpServers: [] });
    try {
      const loaded = await proc.bounded(loading, 'session/load');
      const state = sessionState(loaded);
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
      proc.sessions.set(request.sessionId, sessionState(resumed));
      sessionId = request.sessionId;
    } catch (error) {
      if (!proc.alive()) throw error;
      log.info({ err: error, sessionId: request.sessionId }, 'the agent could not resume the session; starting a new one');
    }
  }
  // A session to fork, asked for only now: an agent that offers `session/fork` starts from a copy of it.
  if (sessionId === null && request.forkFrom !== undefined && offersFork(proc)) {
    const source = await request.forkFrom();
    if (source !== null) sessionId = await forkSession(proc, source, cwd, log);
    if (sessionId !== null) opened = 'forked';
  }
  if (sessionId === null) {
    const created = await proc.bounded(proc.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] }), 'session/new');
    const state = sessionState(created);
    proc.sessions.set(created.sessionId, state);
    sessionId = created.sessionId;
    opened = 'fresh';
  }
  // A turn cancelled meanwhile has rejected already: its caller is told of no session.
  if (request.signal?.aborted) throw notReady();
  await request.onSession(sessionId);
  return { sessionId, opened };
}

/** The prompt as sent: a fresh session of a thread with a past starts from the history brief; a forked one knows it. */
async function promptFor(request: TurnRequest, opened: Opened): Promise<string> {
  if (opened === 'forked') await request.onForked?.();
  if (opened !== 'fresh' || request.history === undefined) return request.prompt;
  const history = await request.history();
  if (history === null) return request.prompt;
  await request.onBriefed?.();
  return briefedPrompt(history, request.prompt);
}

/**
 * One turn in a process the pool holds: its session opened (or loaded, resumed), the posture
 * applied, the prompt sent, the session's updates routed to the request until the agent answers.
 * A cancel (the request's signal) is sent as ACP `session/cancel`; an agent that does not end the
 * turn within the grace is ended with its process group, or, serving other sessions' turns, the
 * session is given up.
 */
export async function agentTurn(held: HeldProcess, request: TurnRequest, settings: TurnSettings): Promise<TurnResult> {
  const { proc, redact } = held;
  const { sessionId, opened } = await unlessAborted(sessionFor(proc, request, settings.log), request.signal);
  if (proc.routes.has(sessionId)) throw new Error(`a turn is already running in session ${sessionId}`);
  const turnLog = settings.log.child({ agent: request.agent.id, sessionId });
  // The process's only turn: its output goes a line at a time while it runs, and its first update holds the
  // rest while it is stored and published (agent-input.ts). Beside other turns it holds nothing of theirs.
  const alone = proc.routes.size === 0;
  const disarm = alone ? proc.armInput() : () => {};
  const route = openTurnRoute(request, turnLog, redact, alone ? proc.holdInput : undefined);
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
    }, settings.cancelGraceMs ?? 5_000);
    grace.unref();
  };
  if (request.signal?.aborted) cancel();
  request.signal?.addEventListener('abort', cancel, { once: true });
  try {
    // What the agent did not take is reported, and the turn goes on in the posture the session has.
    for (const refusal of await applyPosture(proc, sessionId, request, turnLog)) await request.onPostureRefused?.(refusal);
    const prompt = await promptFor(request, opened);
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
    disarm();
    clearTimeout(grace);
    request.signal?.removeEventListener('abort', cancel);
    proc.routes.delete(sessionId);
  }
}
