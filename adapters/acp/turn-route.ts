import type { Logger } from 'pino';
import type { ToolCall } from '../../domain/model.ts';
import type { TurnRequest } from '../../ports/agent-runner.ts';
import type { TurnRoute } from './agent-process.ts';
import { unredacted } from './agent-diagnostics.ts';
import { mergeToolCall, toPermissionAsk, toPermissionResponse, toTurnUpdate } from './update-mapping.ts';

/** A turn's route, plus `settle` to wait until everything received has been delivered. */
export interface OpenTurnRoute extends TurnRoute {
  /** Resolves once every update received so far is delivered; rejects with a delivery failure. */
  settle(): Promise<void>;
}

/**
 * Delivers one turn's updates to its caller strictly in order. The SDK starts notification handlers
 * in arrival order but does not wait for them, so each delivery is chained on the previous one; a
 * permission request waits for the updates before it (the tool call it is about comes first). The
 * turn's first update is what the person waits on: while it is delivered (stored, then published),
 * `hold` keeps the agent's next lines unread (agent-input.ts).
 */
export function openTurnRoute(
  request: Pick<TurnRequest, 'onUpdate' | 'onPermission'>,
  log: Logger,
  /** Hides the agent's own secrets (its env and env_pass values) in what it sends, before anyone stores or sees it. */
  redact: (text: string) => string = unredacted,
  /** Reads nothing more of the agent's output until the promise settles (AgentProcess.holdInput). */
  hold: (until: Promise<unknown>) => void = () => {},
): OpenTurnRoute {
  // An agent with no secrets (the usual case): each update is passed on as mapped, not copied string by string.
  const hide = redact === unredacted ? <T>(value: T): T => value : <T>(value: T): T => redactedValue(value, redact);
  let chain: Promise<void> = Promise.resolve();
  let delivered = 0;
  let failure: { readonly error: unknown } | null = null;
  // The turn's tool calls as known so far: a permission ask about one carries all of it.
  const calls = new Map<string, ToolCall>();
  const fail = (error: unknown) => {
    if (failure === null) log.warn({ err: error }, 'delivering a turn update failed');
    failure ??= { error };
  };

  return {
    update(update) {
      const found = toTurnUpdate(update);
      if (found === null) return;
      // A command's output can print the agent's key (`env`, a config file): it is hidden here.
      const mapped = hide(found);
      if (mapped.kind === 'tool_call' || mapped.kind === 'tool_call_update') calls.set(mapped.call.id, mergeToolCall(calls.get(mapped.call.id), mapped.call));
      chain = chain.then(async () => {
        // After a failed delivery the turn is lost to its caller: later updates would be out of order.
        if (failure === null) await request.onUpdate(mapped);
      }).catch(fail);
      if (delivered++ === 0) hold(chain);
    },
    async permission(params) {
      await chain;
      try {
        return toPermissionResponse(await request.onPermission(hide(toPermissionAsk(params, calls.get(params.toolCall.toolCallId)))), params);
      } catch (error) {
        // The agent still needs an answer; the turn fails once it ends.
        fail(error);
        return { outcome: { outcome: 'cancelled' } };
      }
    },
    async settle() {
      // Notifications read before the prompt's answer may still be passing the SDK's handler chain
      // (promise callbacks only): one macrotask lets them all reach `update`.
      await new Promise((resolve) => setImmediate(resolve));
      await chain;
      if (failure !== null) throw failure.error;
    },
  };
}

/** A JSON-like value with `redact` applied to every string in it (keys too). */
function redactedValue<T>(value: T, redact: (text: string) => string): T {
  if (typeof value === 'string') return redact(value) as T;
  if (Array.isArray(value)) return value.map((item) => redactedValue(item, redact)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [redact(key), redactedValue(item, redact)])) as T;
  }
  return value;
}
