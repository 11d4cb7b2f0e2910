import type { Logger } from 'pino';
import type { Agent, Conversation, Run, RunStatus } from '../../domain/model.ts';
import { runError, type RunErrorCode } from '../../domain/run-errors.ts';
import { boundedRecord, boundedStrings, boundedText, MAX_REPLY } from '../../domain/bounds.ts';
import type { ToolCall } from '../../domain/model.ts';
import { REPLACEMENT, splitTrailingHigh, storableText, storableValue } from '../../domain/text.ts';
import type { AgentRunner, TurnUpdate } from '../../ports/agent-runner.ts';
import type { ConsoleWriter } from '../../ports/console-writer.ts';
import type { Emit } from './emit.ts';
import type { PendingWaiters } from './pending-waiters.ts';
import { failureOf } from './run-failure.ts';

/** One kick: a run just written (its turn claimed under this instance's lease), and what its turn needs. */
export interface KickRequest {
  readonly threadId: string;
  readonly conversation: Conversation;
  readonly run: Run;
  readonly agent: Agent;
  readonly prompt: string;
  readonly cwd: string;
  /** The posture in force for this turn (the directive's, else the conversation's). */
  readonly mode: string | null;
}

export interface KickDeps {
  readonly writer: ConsoleWriter;
  readonly runner: AgentRunner;
  readonly emit: Emit;
  readonly waiters: PendingWaiters;
  readonly log: Logger;
  /** This instance's id: the holder of the turns it claims. */
  readonly holder: string;
  /** A turn's lease; it is renewed every third of it while the kick runs. */
  readonly leaseMs: number;
  /** A turn whose agent sends nothing (and asks nothing) that long is cancelled. */
  readonly idleMs: number;
}

/** What this instance knows of a kick in flight. */
interface InFlight {
  readonly controller: AbortController;
  lastActivity: number;
  /** Open permission asks, and when the oldest began: waiting for a person is not agent silence. */
  asking: number;
  askedAt: number;
  /** When the lease was last renewed (or claimed): past one lease without renewal, the turn may be swept elsewhere. */
  renewedAt: number;
  /** Why the turn is being cancelled, once it is. */
  cancelled: { readonly code: RunErrorCode; readonly reason: string } | null;
  /** The lease was lost (swept elsewhere): nothing more is recorded for the run. */
  lost: boolean;
  /** The turn was released: nothing is held any more. */
  released: boolean;
}

/**
 * Runs kicks in the background and turns what the agent does into stored rows and wire events:
 * `run_started` first, then messages and approvals, then `run_finished`, `run_error` or
 * `run_cancelled`, and `reflex_asleep` last, whatever happened; only then is the turn released.
 * While a kick runs its lease is renewed; an idle agent is cancelled.
 */
export function kicker(deps: KickDeps) {
  const inFlight = new Set<Promise<void>>();
  const running = new Map<string, InFlight>();

  /** Stops a run here for good: it was swept elsewhere, or may be (its lease went unrenewed for a whole lease). */
  const lose = (id: string, entry: InFlight, why: string): void => {
    if (entry.lost || entry.released) return;
    deps.log.warn({ run: id }, why);
    entry.lost = true;
    cancel(id, 'turn_lease_expired');
  };

  const renew = setInterval(() => {
    const ids = [...running.keys()];
    if (ids.length === 0) return;
    const at = Date.now();
    deps.writer.renewTurns(deps.holder, ids, deps.leaseMs).then((held) => {
      for (const id of ids) {
        const entry = running.get(id);
        if (entry === undefined) continue;
        if (held.includes(id)) entry.renewedAt = at;
        // Swept elsewhere (this instance was taken for dead): stop the agent, record nothing more.
        else lose(id, entry, 'the turn lease was lost; stopping the run here');
      }
    }, (error: unknown) => {
      deps.log.warn({ err: error }, 'renewing turn leases failed');
      // Unrenewed for a whole lease, a turn may already be swept by another instance: running on
      // would end it twice, and let a new turn start beside this one.
      for (const id of ids) {
        const entry = running.get(id);
        if (entry !== undefined && Date.now() - entry.renewedAt > deps.leaseMs) lose(id, entry, 'the turn lease could not be renewed for a whole lease; stopping the run here');
      }
    });
  }, Math.max(100, Math.floor(deps.leaseMs / 3)));
  renew.unref();

  const idle = setInterval(() => {
    const now = Date.now();
    for (const [id, entry] of running) {
      if (entry.cancelled !== null) continue;
      const seconds = Math.round(deps.idleMs / 1000);
      // An ask waits for a person, not the agent: it has a deadline of its own, of the same length.
      if (entry.asking > 0) {
        if (now - entry.askedAt > deps.idleMs) cancel(id, 'approval_timeout', `no answer came for ${seconds} s; the turn was cancelled`);
      } else if (now - entry.lastActivity > deps.idleMs) {
        cancel(id, 'agent_idle', `the agent sent nothing for ${seconds} s; the turn was cancelled`);
      }
    }
  }, Math.max(50, Math.min(5_000, Math.floor(deps.idleMs / 4))));
  idle.unref();

  /** Cancels a run this instance runs; answers whether it runs here. */
  function cancel(runId: string, code: RunErrorCode, reason?: string): boolean {
    const entry = running.get(runId);
    if (entry === undefined) return false;
    if (entry.cancelled !== null) return true;
    entry.cancelled = { code, reason: runError(code, reason) };
    entry.controller.abort();
    // Asks still open are answered `cancelled`, as ACP wants once a turn is cancelled.
    deps.waiters.cancelRun(runId);
    return true;
  }

  return {
    /** Starts a kick and returns at once: the directive is answered while it runs. */
    kick(request: KickRequest): void {
      const now = Date.now();
      const entry: InFlight = {
        controller: new AbortController(), lastActivity: now, asking: 0, askedAt: now, renewedAt: now, cancelled: null, lost: false, released: false,
      };
      running.set(request.run.id, entry);
      const kicked: Promise<void> = runKick(deps, request, entry)
        .catch((error: unknown) => deps.log.error({ err: error, run: request.run.id }, 'kick failed'))
        .finally(() => {
          running.delete(request.run.id);
          inFlight.delete(kicked);
        });
      inFlight.add(kicked);
    },
    /** Whether this instance runs the run now. */
    runs: (runId: string): boolean => running.has(runId),
    /** Cancels a run if this instance runs it (a user's cancel reaches every instance). */
    cancel: (runId: string): boolean => cancel(runId, 'cancelled'),
    /** Waits for every kick in flight (shutdown). */
    async drain(): Promise<void> {
      await Promise.allSettled([...inFlight]);
      clearInterval(renew);
      clearInterval(idle);
    },
  };
}

export type Kicker = ReturnType<typeof kicker>;

async function runKick(deps: KickDeps, request: KickRequest, entry: InFlight): Promise<void> {
  const { writer, runner, waiters, log } = deps;
  const { threadId, conversation, run } = request;
  const runId = run.id;
  const touch = () => {
    entry.lastActivity = Date.now();
  };
  // Nothing more is stored for a run whose lease was lost: the sweeper that took it has ended it.
  const emit: Emit = (thread, type, data) => (entry.lost ? Promise.resolve(null as never) : deps.emit(thread, type, data));
  let reply = '';
  // A high surrogate that ended a chunk waits for the low one that begins the next.
  let held = '';
  let outcome: { status: Exclude<RunStatus, 'running'>; error: string | null; stopReason: string | null };
  try {
    await emit(threadId, 'run_started', { run_id: runId, conversation_id: conversation.id });
    await writer.appendModelMessage(runId, { role: 'user', content: request.prompt });
    const result = await runner.runTurn({
      agent: request.agent,
      sessionId: await writer.sessionOf(conversation.id),
      cwd: request.cwd,
      prompt: request.prompt,
      mode: request.mode,
      model: conversation.model,
      effort: conversation.effort,
      signal: entry.controller.signal,
      onSession: (sessionId) => writer.setSession(conversation.id, sessionId),
      // A posture the agent did not take reaches the console; the turn goes on in the session's own.
      onPostureRefused: async (refusal) => {
        touch();
        await emit(threadId, 'posture_refused', { run_id: runId, conversation_id: conversation.id, ...refusal });
      },
      onUpdate: async (raw: TurnUpdate) => {
        touch();
        if (entry.lost) return;
        if (raw.kind === 'text') {
          reply += raw.text;
          const { ready, held: next } = splitTrailingHigh(held + raw.text);
          held = next;
          if (ready !== '') await emit(threadId, 'message', { run_id: runId, delta: storableText(ready) });
          return;
        }
        // Agent output nobody can send back is repaired, not refused: NULs and lone surrogates
        // replaced, and bounded (a tool call may carry a whole file, again in every update).
        const update = boundedStrings(storableValue(raw));
        switch (update.kind) {
          case 'tool_call':
          case 'tool_call_update':
            if (update.kind === 'tool_call') await writer.appendModelMessage(runId, { role: 'tool', content: update.call.title ?? '' });
            // The tool call as the agent sent it (an update: what changed), flat beside the run id.
            await emit(threadId, 'tool_call', { run_id: runId, update: update.kind === 'tool_call_update', ...boundedCall(update.call) });
            return;
          case 'plan':
            await emit(threadId, 'plan', { run_id: runId, entries: update.entries });
            return;
          case 'usage':
            await emit(threadId, 'usage', { run_id: runId, used: update.used, size: update.size, cost: update.cost });
            return;
          case 'commands':
            await emit(threadId, 'available_commands', { run_id: runId, commands: update.commands });
            return;
          default:
            // Thoughts and mode changes.
            await emit(threadId, 'message', { run_id: runId, update });
        }
      },
      onPermission: async (raw) => {
        touch();
        // An ask after the cancel is answered at once: nobody is left to answer it.
        if (entry.cancelled !== null || entry.lost) return { outcome: 'cancelled' } as const;
        const ask = boundedStrings(storableValue(raw));
        const pending = await writer.addPending({
          kind: 'approval',
          conversation_id: conversation.id,
          run_id: runId,
          title: ask.title,
          options: ask.options.map(({ id, name, kind }) => ({ id, name, kind })),
          tool_call: ask.tool_call === null ? null : boundedCall(ask.tool_call),
        });
        // Waiting before announcing: an answer cannot arrive before anyone listens for it.
        const decision = waiters.wait(pending.id, runId);
        if (entry.asking++ === 0) entry.askedAt = Date.now();
        try {
          await emit(threadId, 'approval_requested', { run_id: runId, pending });
          return await decision;
        } finally {
          entry.asking -= 1;
          touch();
        }
      },
    });
    if (held !== '') await emit(threadId, 'message', { run_id: runId, delta: REPLACEMENT });
    if (entry.cancelled === null && reply !== '') {
      const text = boundedText(storableText(reply), MAX_REPLY);
      await writer.appendModelMessage(runId, { role: 'assistant', content: text });
      const message = await writer.appendMessage(threadId, { role: 'assistant', text, artifact_id: null });
      await emit(threadId, 'message', { run_id: runId, message });
    }
    outcome = entry.cancelled !== null || result.stopReason === 'cancelled'
      ? { status: 'cancelled', error: entry.cancelled?.reason ?? runError('cancelled', 'the agent cancelled the turn'), stopReason: result.stopReason }
      : { status: 'succeeded', error: null, stopReason: result.stopReason };
  } catch (error) {
    if (entry.cancelled !== null) outcome = { status: 'cancelled', error: entry.cancelled.reason, stopReason: null };
    else {
      const failure = failureOf(error);
      if (failure.code === 'internal' || failure.code === 'storage_failed') log.warn({ err: error, run: runId }, 'run failed');
      else log.info({ run: runId, reason: failure.reason }, 'run failed');
      outcome = { status: 'failed', error: runError(failure.code, failure.reason), stopReason: null };
    }
  }
  waiters.cancelRun(runId);
  if (entry.lost) return;
  await finish(deps, entry, threadId, runId, outcome);
}

/** A tool call within the stored bounds: its bulky parts dropped (and `truncated` set) when it is still too large. */
const boundedCall = (call: ToolCall): ToolCall => boundedRecord(call, ['rawOutput', 'content', 'rawInput']);

/**
 * Ends the run, stores its last events, then releases the turn: each step retried while storage
 * is down (the lease is renewed meanwhile), for at most one lease; after that the turn is left to
 * lapse, and a sweeper on any instance ends what is left.
 */
async function finish(
  deps: KickDeps,
  entry: InFlight,
  threadId: string,
  runId: string,
  outcome: { status: Exclude<RunStatus, 'running'>; error: string | null; stopReason: string | null },
): Promise<void> {
  const deadline = Date.now() + deps.leaseMs;
  const step = async <T>(work: () => Promise<T>): Promise<T> => {
    for (let wait = 100; ; wait = Math.min(wait * 2, 2_000)) {
      try {
        return await work();
      } catch (error) {
        if (Date.now() + wait > deadline || entry.lost) throw error;
        deps.log.warn({ err: error, run: runId }, 'recording the end of a run failed; trying again');
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  };
  try {
    const ended = await step(() => deps.writer.finishRun(runId, outcome.status, outcome.error));
    if (ended.status !== outcome.status || ended.error !== outcome.error) {
      // Someone else ended it first (a sweeper that took this instance for dead): theirs are the last events.
      deps.log.warn({ run: runId }, 'the run was already ended elsewhere; recording nothing more');
      entry.lost = true;
      return;
    }
    const [code] = (outcome.error ?? '').split(':', 1);
    if (outcome.status === 'succeeded') await step(() => deps.emit(threadId, 'run_finished', { run_id: runId, stop_reason: outcome.stopReason, run: ended }));
    else if (outcome.status === 'cancelled') await step(() => deps.emit(threadId, 'run_cancelled', { run_id: runId, code, reason: outcome.error, run: ended }));
    else await step(() => deps.emit(threadId, 'run_error', { run_id: runId, code, error: outcome.error, run: ended }));
    await step(() => deps.emit(threadId, 'reflex_asleep', { run_id: runId }));
    await step(() => deps.writer.releaseTurn(runId));
    entry.released = true;
  } catch (error) {
    deps.log.warn({ err: error, run: runId }, 'the end of a run could not be recorded; its lease will lapse and be swept');
    entry.lost = true;
  }
}
