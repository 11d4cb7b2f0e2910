import type { ServerResponse } from 'node:http';
import { fileTaskOf, sendSse, startFakeModel, type FakeModel, type SeenRequest } from './server.ts';

/** How the fake Codex model writes a file: an `apply_patch` edit, or a shell command run outside the sandbox. */
export type CodexWrite = 'apply_patch' | 'escalated_command';

/**
 * A fake OpenAI Responses API for Codex (`POST /v1/responses`, server-sent events). A prompt that
 * names a file task is answered with one tool call writing that file; the request that carries the
 * tool's output is answered with a short text, which ends the turn.
 */
export function startFakeCodexModel(write: () => CodexWrite = () => 'apply_patch'): Promise<FakeModel> {
  let n = 0;
  return startFakeModel((request, res) => {
    if (request.method !== 'POST' || !request.url.startsWith('/v1/responses')) return false;
    n += 1;
    const input: any[] = Array.isArray(request.body?.input) ? request.body.input : [];
    const last = input.at(-1);
    const task = fileTaskOf(lastUserText(input));
    if (task === null || last?.type === 'function_call_output' || last?.type === 'custom_tool_call_output') {
      respond(res, `resp_${n}`, [{ type: 'message', role: 'assistant', id: `msg_${n}`, content: [{ type: 'output_text', text: 'Done.', annotations: [] }] }]);
      return true;
    }
    const callId = `call_${n}`;
    if (write() === 'apply_patch') {
      const patch = `*** Begin Patch\n*** Add File: ${task.name}\n+${task.text}\n*** End Patch\n`;
      // Codex offers apply_patch as a freeform (custom) tool to the models that take one, else as a function.
      const tool = (request.body?.tools ?? []).find((candidate: any) => candidate.name === 'apply_patch');
      respond(res, `resp_${n}`, [
        tool?.type === 'custom'
          ? { type: 'custom_tool_call', id: `ctc_${n}`, call_id: callId, name: 'apply_patch', input: patch }
          : { type: 'function_call', id: `fc_${n}`, call_id: callId, name: 'apply_patch', arguments: JSON.stringify({ input: patch }) },
      ]);
    } else {
      const cmd = `printf '%s\\n' '${task.text.replace(/'/g, '')}' > ${task.name}`;
      const args = { cmd, sandbox_permissions: 'require_escalated', justification: `Write ${task.name} as asked` };
      respond(res, `resp_${n}`, [{ type: 'function_call', id: `fc_${n}`, call_id: callId, name: 'exec_command', arguments: JSON.stringify(args) }]);
    }
    return true;
  });
}

/** The text of the last user message in a Responses `input`. */
function lastUserText(input: readonly any[]): string {
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i];
    if (item?.type === 'message' && item.role === 'user' && Array.isArray(item.content)) {
      return item.content.map((part: any) => (typeof part?.text === 'string' ? part.text : '')).join('\n');
    }
  }
  return '';
}

/** A whole response as Codex reads it: created, each output item added and done (text as deltas), completed. */
function respond(res: ServerResponse, id: string, items: readonly any[]): void {
  const events: { event: string; data: unknown }[] = [
    { event: 'response.created', data: { type: 'response.created', response: { id } } },
  ];
  items.forEach((item, index) => {
    events.push({ event: 'response.output_item.added', data: { type: 'response.output_item.added', output_index: index, item } });
    if (item.type === 'message') {
      for (const part of item.content) {
        events.push({ event: 'response.output_text.delta', data: { type: 'response.output_text.delta', output_index: index, item_id: item.id, delta: part.text } });
      }
    }
    events.push({ event: 'response.output_item.done', data: { type: 'response.output_item.done', output_index: index, item } });
  });
  events.push({
    event: 'response.completed',
    data: {
      type: 'response.completed',
      response: { id, usage: { input_tokens: 10, input_tokens_details: null, output_tokens: 5, output_tokens_details: null, total_tokens: 15 } },
    },
  });
  sendSse(res, events);
}

/** The names of the tools a Codex request offered (for diagnostics). */
export const toolNames = (request: SeenRequest): string[] =>
  (request.body?.tools ?? []).map((tool: any) => tool.name ?? tool.type).filter(Boolean);
