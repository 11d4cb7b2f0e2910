import type { ServerResponse } from 'node:http';
import { fileTaskOf, heldCalls, HOLD_MARKER, sendSse, startFakeModel, type FakeModel, type SeenRequest } from './server.ts';

/** How the fake Codex model writes a file: an `apply_patch` edit, or a shell command run outside the sandbox. */
export type CodexWrite = 'apply_patch' | 'escalated_command';

/**
 * A fake OpenAI Responses API for Codex (`POST /v1/responses`, server-sent events). A prompt that
 * names a file task is answered with one tool call writing that file; the request that carries the
 * tool's output is answered with a short text, which ends the turn. The first call whose last user message
 * says {@link HOLD_MARKER} is held open until `holds.release()`, so a test can steer the turn while it waits on its model.
 */
export async function startFakeCodexModel(write: () => CodexWrite = () => 'apply_patch'): Promise<FakeModel> {
  let n = 0;
  const holds = heldCalls();
  let holding = true;
  const fake = await startFakeModel((request, res) => {
    if (request.method !== 'POST' || !request.url.startsWith('/v1/responses')) return false;
    n += 1;
    const input: any[] = Array.isArray(request.body?.input) ? request.body.input : [];
    const last = input.at(-1);
    const said = lastUserText(input);
    const tools: any[] = Array.isArray(request.body?.tools) ? request.body.tools : [];
    if (tools.length === 0) {
      // Not the agent's loop: a side call that offers no tools (Codex 0.166 asks for the thread's title in one).
      respond(res, `resp_${n}`, [{ type: 'message', role: 'assistant', id: `msg_${n}`, content: [{ type: 'output_text', text: '{"title": "A file task"}', annotations: [] }] }]);
      return true;
    }
    if (holding && said.includes(HOLD_MARKER)) {
      // Once: the call that follows a steer carries the marker too (the steered text is a user message after it).
      holding = false;
      const id = `resp_${n}`;
      holds.hold(() => respond(res, id, [{ type: 'message', role: 'assistant', id: `msg_${n}`, content: [{ type: 'output_text', text: 'Still thinking.', annotations: [] }] }]));
      return true;
    }
    const task = fileTaskOf(said);
    if (task === null || last?.type === 'function_call_output' || last?.type === 'custom_tool_call_output') {
      respond(res, `resp_${n}`, [{ type: 'message', role: 'assistant', id: `msg_${n}`, content: [{ type: 'output_text', text: 'Done.', annotations: [] }] }]);
      return true;
    }
    const callId = `call_${n}`;
    if (write() === 'apply_patch') {
      const patch = `*** Begin Patch\n*** Add File: ${task.name}\n+${task.text}\n*** End Patch\n`;
      // Codex offers apply_patch as a freeform (custom) tool to the models that take one, else as a function;
      // to a model its catalog does not know (0.166), neither: the model calls it through its shell tool, which Codex intercepts.
      const tool = tools.find((candidate: any) => candidate.name === 'apply_patch');
      respond(res, `resp_${n}`, [
        tool === undefined
          ? { type: 'function_call', id: `fc_${n}`, call_id: callId, name: 'exec_command', arguments: JSON.stringify({ cmd: `apply_patch <<'EOF'\n${patch}EOF\n` }) }
          : tool.type === 'custom'
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
  return { ...fake, holds };
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
