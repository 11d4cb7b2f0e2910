import type { ToolCall } from '../../domain/model.ts';
import { boundedRecord, boundedStrings, boundedText, MAX_REPLY } from '../../domain/bounds.ts';
import { runError } from '../../domain/run-errors.ts';
import { REPLACEMENT, splitTrailingHigh, storableText, storableValue } from '../../domain/text.ts';
import type { TurnUpdate } from '../../ports/agent-runner.ts';
import { waited } from '../clock.ts';
import type { Emit } from './emit.ts';
import type { InFlight, TurnDeps, TurnOrder } from './turn-types.ts';
import { finish, type Outcome } from './turn-end.ts';
import { failureOf } from './run-failure.ts';
import { FORKED } from './history.ts';

/**
 * One turn: `run_started`, the agent's updates and asks as stored rows and events (made
 * storable, bounded), then the outcome handed to {@link finish}. Nothing more is recorded for a run
 * whose lease was lost.
 */
export async function runTurn(deps: TurnDeps, request: TurnOrder, entry: InFlight): Promise<void> {
  const { writer, runner, waiters, log, clock } = deps;
  const { threadId, conversation, run } = request;
  const runId = run.id;
  const touch = () => {
    entry.lastActivity = clock.now();
  };
  // Nothing more is stored for a run whose lease was lost: the sweeper that took it has ended it.
  const emit: Emit = (thread, type, data) => (entry.lost ? Promise.resolve(null as never) : deps.emit(thread, type, data));
  let reply = '';
  // A high surrogate that ended a chunk waits for the low one that begins the next.
  let held = '';
  let outcome: Outcome;
  // Set when this turn lets its run go with the prompt unsent: nothing is recorded, its lease lapses,
  // and a sweep starts it again (or ends it, when another turn took the prompt).
  let letGo = false;
  // The prompt of a dequeued directive's run is the agent's once taken; until then, storage failing lets the run go too.
  let taken = request.unsent !== true;
  const beforePrompt = async (): Promise<void> => {
    // Taking it records it as the run's model message: a turn that let the run go recorded nothing.
    if (await takePrompt(deps, entry, runId, request.cwd)) return void (taken = true);
    letGo = true;
    throw new Error('the prompt of this run was not taken here');
  };
  // Before a thread's first turn, the worktree as it was (taken once: the adapter skips it when the thread has checkpoints).
  await deps.checkpoint?.({ threadId, runId: null, messageId: null, directory: request.cwd });
  // The agent's silence is counted from here: a slow checkpoint is not the agent idling.
  touch();
  try {
    // A directive's turn had `run_started`, the prompt's model message and the session's id stored and read with
    // the directive (DirectiveWrites.writeDirective): nothing is waited for here. Else (a dequeued directive, a move's
    // turn) one round trip before the agent is asked, not three: independent writes and a read, all done (and stored) before the runner starts.
    const sessionId = request.started !== undefined ? request.started.sessionId : (await Promise.all([
      emit(threadId, 'run_started', { run_id: runId, conversation_id: conversation.id }),
      // A dequeued directive's prompt is recorded as it is taken, just before the agent gets it.
      request.unsent !== true ? writer.appendModelMessage(runId, { role: 'user', content: request.prompt }) : null,
      writer.sessionOf(conversation.id),
    ]))[2];
    // A line of the service's own in the ledger, told at once.
    const say = async (text: string): Promise<void> => {
      touch();
      const message = await writer.appendMessage(threadId, { role: 'system', text, artifact_id: null });
      await emit(threadId, 'message', { run_id: runId, message });
    };
    const result = await runner.runTurn({
      agent: request.agent,
      sessionId,
      cwd: request.cwd,
      prompt: request.prompt,
      mode: request.mode,
      model: conversation.model,
      effort: conversation.effort,
      signal: entry.controller.signal,
      onSession: (sessionId) => {
        entry.sessionId = sessionId;
        return writer.setSession(conversation.id, sessionId);
      },
      ...(request.history === undefined ? {} : { history: request.history }),
      ...(request.forkFrom === undefined ? {} : { forkFrom: request.forkFrom, onForked: () => say(FORKED) }),
      ...(request.unsent === true ? { beforePrompt } : {}),
      // Said in the ledger: this agent did not continue a session that knew the thread.
      onBriefed: () => say(request.briefedNote ?? BRIEFED),
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
        if (entry.asking++ === 0) entry.askedAt = clock.now();
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
    if (letGo || (!taken && entry.cancelled === null && failureOf(error).code === 'storage_failed')) {
      log.warn({ run: runId }, 'the prompt of a queued directive could not be taken here; its lease will lapse and a sweep starts it again');
      entry.lost = true;
      waiters.cancelRun(runId);
      return;
    }
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
  // However it ended, the worktree as the turn left it: recorded before the run reads as ended, and before the next turn starts.
  await deps.checkpoint?.({ threadId, runId, messageId: request.messageId ?? null, directory: request.cwd });
  await finish(deps, entry, threadId, runId, outcome);
}

/**
 * Takes the run's unsent prompt (recording `directory` as where the run runs), retried while storage fails, for at most one lease: true when the
 * agent may have it. False when another turn took it, the turn was lost, or storage stayed down (the
 * sweep starts the run again once its lease lapses). A cancel meanwhile throws: the run ends cancelled.
 */
async function takePrompt(deps: TurnDeps, entry: InFlight, runId: string, directory: string): Promise<boolean> {
  const deadline = deps.clock.now() + deps.leaseMs;
  for (let wait = 100; ; wait = Math.min(wait * 2, 2_000)) {
    try {
      return await deps.writer.takeUnsentPrompt(runId, deps.holder, directory);
    } catch (error) {
      if (entry.cancelled !== null) throw error;
      if (entry.lost || deps.clock.now() + wait > deadline) return false;
      deps.log.warn({ err: error, run: runId }, 'taking the prompt of a queued directive failed; trying again');
      await waited(deps.clock, wait);
    }
  }
}

/** The ledger line of a turn whose agent starts a fresh session from the thread's history. */
export const BRIEFED = "The agent could not continue a session that knows this thread: it starts a new one from a brief of the thread's recent history.";

/** A tool call within the stored bounds: its bulky parts dropped (and `truncated` set) when it is still too large. */
const boundedCall = (call: ToolCall): ToolCall => boundedRecord(call, ['rawOutput', 'content', 'rawInput']);
