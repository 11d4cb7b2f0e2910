import type * as acp from '@agentclientprotocol/sdk';
import type { ToolCall, ToolCallContent } from '../../domain/model.ts';
import type { PermissionAsk, PermissionDecision, TurnUpdate } from '../../ports/agent-runner.ts';

/** The port's view of an ACP `session/update`, or null for the kinds a turn does not report. */
export function toTurnUpdate(update: acp.SessionUpdate): TurnUpdate | null {
  switch (update.sessionUpdate) {
    case 'agent_message_chunk':
      return update.content.type === 'text' ? { kind: 'text', text: update.content.text } : null;
    case 'agent_thought_chunk':
      return update.content.type === 'text' ? { kind: 'thought', text: update.content.text } : null;
    case 'tool_call':
      return { kind: 'tool_call', call: toToolCall(update) };
    case 'tool_call_update':
      return { kind: 'tool_call_update', call: toToolCall(update) };
    case 'plan':
      return { kind: 'plan', entries: update.entries.map((entry) => ({ content: entry.content, priority: entry.priority, status: entry.status })) };
    case 'usage_update':
      return { kind: 'usage', used: update.used, size: update.size, cost: update.cost ? { amount: update.cost.amount, currency: update.cost.currency } : null };
    case 'available_commands_update':
      return {
        kind: 'commands',
        commands: update.availableCommands.map((command) => ({ name: command.name, description: command.description, hint: command.input?.hint ?? null })),
      };
    case 'current_mode_update':
      return { kind: 'mode', mode: update.currentModeId };
    default:
      return null;
  }
}

/**
 * A tool call or tool call update as the agent sent it, `toolCallId` named `id`: fields the agent
 * left out or sent as null (unchanged, in an update) are left out; `_meta` is dropped everywhere.
 */
export function toToolCall(call: acp.ToolCall | acp.ToolCallUpdate): ToolCall {
  const out: { -readonly [K in keyof ToolCall]: ToolCall[K] } = { id: call.toolCallId };
  if (typeof call.title === 'string') out.title = call.title;
  if (typeof call.kind === 'string') out.kind = call.kind;
  if (typeof call.status === 'string') out.status = call.status;
  if (typeof call.name === 'string') out.name = call.name;
  if (Array.isArray(call.content)) out.content = call.content.map(toContent);
  if (Array.isArray(call.locations)) {
    out.locations = call.locations.map((location) => (location.line === undefined ? { path: location.path } : { path: location.path, line: location.line }));
  }
  if (call.rawInput !== undefined) out.rawInput = call.rawInput;
  if (call.rawOutput !== undefined) out.rawOutput = call.rawOutput;
  return out;
}

function toContent(item: acp.ToolCallContent): ToolCallContent {
  switch (item.type) {
    case 'diff':
      return item.oldText === undefined ? { type: 'diff', path: item.path, newText: item.newText } : { type: 'diff', path: item.path, oldText: item.oldText, newText: item.newText };
    case 'terminal':
      return { type: 'terminal', terminalId: item.terminalId };
    default:
      // An ACP content block (text, image, resource...), as `{type: "content", content}`.
      return { type: 'content', content: withoutMeta(item.content as unknown as Record<string, unknown>) };
  }
}

function withoutMeta(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([key]) => key !== '_meta'));
}

/** A tool call as known after `next`: what `next` carries replaces what was known, the rest stays. */
export function mergeToolCall(known: ToolCall | undefined, next: ToolCall): ToolCall {
  return known === undefined ? next : { ...known, ...next };
}

/**
 * The port's view of an ACP `session/request_permission`. `known` is what the turn's updates said
 * of the same tool call: an agent may send the diff there and only the id with the ask.
 */
export function toPermissionAsk(request: acp.RequestPermissionRequest, known?: ToolCall): PermissionAsk {
  const toolCall = mergeToolCall(known, toToolCall(request.toolCall));
  return {
    title: toolCall.title ?? 'The agent asks for permission',
    options: request.options.map((option) => ({ id: option.optionId, name: option.name, kind: option.kind })),
    tool_call: toolCall,
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
