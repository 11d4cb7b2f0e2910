import type * as acp from '@agentclientprotocol/sdk';
import type { PermissionAsk, PermissionDecision, TurnUpdate } from '../../ports/agent-runner.ts';

/** The port's view of an ACP `session/update`, or null for the kinds a turn does not report. */
export function toTurnUpdate(update: acp.SessionUpdate): TurnUpdate | null {
  switch (update.sessionUpdate) {
    case 'agent_message_chunk':
      return update.content.type === 'text' ? { kind: 'text', text: update.content.text } : null;
    case 'agent_thought_chunk':
      return update.content.type === 'text' ? { kind: 'thought', text: update.content.text } : null;
    case 'tool_call':
      return { kind: 'tool_call', id: update.toolCallId, title: update.title, status: update.status ?? null };
    case 'tool_call_update':
      return { kind: 'tool_call_update', id: update.toolCallId, title: update.title ?? null, status: update.status ?? null };
    case 'plan':
      return { kind: 'plan', entries: update.entries.map((entry) => ({ content: entry.content, status: entry.status })) };
    case 'current_mode_update':
      return { kind: 'mode', mode: update.currentModeId };
    default:
      return null;
  }
}

/** The port's view of an ACP `session/request_permission`. */
export function toPermissionAsk(request: acp.RequestPermissionRequest): PermissionAsk {
  return {
    title: request.toolCall.title ?? 'The agent asks for permission',
    options: request.options.map((option) => ({ id: option.optionId, name: option.name, kind: option.kind })),
  };
}

/**
 * The ACP answer to a permission request. An option the agent did not offer is answered as
 * cancelled: the agent could not act on it, and cancelled is the one outcome every agent handles.
 */
export function toPermissionResponse(decision: PermissionDecision, request: acp.RequestPermissionRequest): acp.RequestPermissionResponse {
  if (decision.outcome === 'selected' && request.options.some((option) => option.optionId === decision.optionId)) {
    return { outcome: { outcome: 'selected', optionId: decision.optionId } };
  }
  return { outcome: { outcome: 'cancelled' } };
}
