import type { Logger } from 'pino';
import type { Agent, Conversation, Run } from '../../domain/model.ts';
import type { AgentRunner, TurnUpdate } from '../../ports/agent-runner.ts';
import type { ConsoleWriter } from '../../ports/console-writer.ts';
import type { Emit } from './emit.ts';
import type { PendingWaiters } from './pending-waiters.ts';

/** One kick: a run just written, and what its turn needs. */
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
}

/**
 * Runs kicks in the background and turns what the agent does into stored rows and wire events:
 * `run_started` first, then messages, approvals, `run_finished` or `run_error`, and `reflex_asleep`
 * last, whatever happened.
 */
export function kicker(deps: KickDeps) {
  const inFlight = new Set<Promise<void>>();
  return {
    /** Starts a kick and returns at once: the directive is answered while it runs. */
    kick(request: KickRequest): void {
      const running: Promise<void> = runKick(deps, request)
        .catch((error: unknown) => deps.log.error({ err: error, run: request.run.id }, 'kick failed'))
        .finally(() => inFlight.delete(running));
      inFlight.add(running);
    },
    /** Waits for every kick in flight (shutdown). */
    async drain(): Promise<void> {
      await Promise.allSettled([...inFlight]);
    },
  };
}

export type Kicker = ReturnType<typeof kicker>;

async function runKick({ writer, runner, emit, waiters, log }: KickDeps, request: KickRequest): Promise<void> {
  const { threadId, conversation, run } = request;
  const runId = run.id;
  let reply = '';
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
      onSession: (sessionId) => writer.setSession(conversation.id, sessionId),
      onUpdate: async (update: TurnUpdate) => {
        if (update.kind === 'text') reply += update.text;
        if (update.kind === 'tool_call') await writer.appendModelMessage(runId, { role: 'tool', content: update.title });
        await emit(threadId, 'message', update.kind === 'text' ? { run_id: runId, delta: update.text } : { run_id: runId, update });
      },
      onPermission: async (ask) => {
        const pending = await writer.addPending({
          kind: 'approval',
          conversation_id: conversation.id,
          run_id: runId,
          title: ask.title,
          options: ask.options.map(({ id, name }) => ({ id, name })),
        });
        // Waiting before announcing: an answer cannot arrive before anyone listens for it.
        const decision = waiters.wait(pending.id, runId);
        await emit(threadId, 'approval_requested', { run_id: runId, pending });
        return decision;
      },
    });
    if (reply !== '') {
      await writer.appendModelMessage(runId, { role: 'assistant', content: reply });
      const message = await writer.appendMessage(threadId, { role: 'assistant', text: reply, artifact_id: null });
      await emit(threadId, 'message', { run_id: runId, message });
    }
    const finished = await writer.finishRun(runId, 'succeeded', null);
    await emit(threadId, 'run_finished', { run_id: runId, stop_reason: result.stopReason, run: finished });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    log.warn({ run: runId, reason }, 'run failed');
    // Ending the run clears the turn: if storage fails here, the thread would stay busy, so it is tried twice.
    const failed = await writer.finishRun(runId, 'failed', reason).catch(() => writer.finishRun(runId, 'failed', reason));
    await emit(threadId, 'run_error', { run_id: runId, error: reason, run: failed });
  } finally {
    waiters.cancelRun(runId);
    await emit(threadId, 'reflex_asleep', { run_id: runId });
  }
}
