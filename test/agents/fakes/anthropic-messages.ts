import type { ServerResponse } from 'node:http';
import { fileTaskOf, heldCalls, HOLD_MARKER, sendSse, startFakeModel, type FakeModel } from './server.ts';

/**
 * A fake Anthropic Messages API for Claude Code (`HEAD /`, `POST /v1/messages?beta=true`, streamed
 * or not). A request that offers the Write tool and whose last user message names a file task is
 * answered with a Write of that file in the session's working directory; a request whose last user
 * message carries a tool result, and any other request (titles, summaries), with a short text. The first
 * call of the agent's loop (tools offered) whose user text says {@link HOLD_MARKER} is held open until
 * `holds.release()`, so a test can steer the turn while it waits on its model.
 */
export async function startFakeAnthropicModel(): Promise<FakeModel> {
  let n = 0;
  const holds = heldCalls();
  let holding = true;
  const fake = await startFakeModel((request, res) => {
    if (request.method === 'HEAD' || (request.method === 'GET' && request.url === '/')) {
      res.writeHead(200).end();
      return true;
    }
    if (request.method !== 'POST') return false;
    if (request.url.startsWith('/v1/messages/count_tokens')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ input_tokens: 10 }));
      return true;
    }
    if (!request.url.startsWith('/v1/messages')) return false;
    n += 1;
    const body = request.body ?? {};
    const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
    // Claude Code 2.1 sends its environment as a `system` message after the user's: the turn is the others.
    const turn = messages.filter((message) => message?.role !== 'system');
    const last = turn.at(-1);
    const blocks: any[] = typeof last?.content === 'string' ? [{ type: 'text', text: last.content }] : (last?.content ?? []);
    const answered = blocks.some((block) => block?.type === 'tool_result');
    const task = fileTaskOf(blocks.map((block) => (block?.type === 'text' ? block.text : '')).join('\n'));
    const offersWrite = (body.tools ?? []).some((tool: any) => tool?.name === 'Write');
    const said = blocks.map((block) => (block?.type === 'text' ? block.text : '')).join('\n');
    if (holding && offersWrite && said.includes(HOLD_MARKER)) {
      // Once: the call that follows a steer carries the marker too (the steered text joins the same user turn).
      holding = false;
      const id = `msg_${n}`;
      holds.hold(() => reply(res, body, id, { type: 'text', text: 'Still thinking.' }, 'end_turn'));
      return true;
    }
    if (task !== null && !answered && offersWrite) {
      const cwd = /working directory: (\S+)/i.exec(systemText(body.system, messages))?.[1];
      const filePath = cwd ? `${cwd.replace(/\/$/, '')}/${task.name}` : task.name;
      reply(res, body, `msg_${n}`, { type: 'tool_use', id: `toolu_${n}`, name: 'Write', input: { file_path: filePath, content: `${task.text}\n` } }, 'tool_use');
    } else {
      reply(res, body, `msg_${n}`, { type: 'text', text: 'Done.' }, 'end_turn');
    }
    return true;
  });
  return { ...fake, holds };
}

/** The system prompt, and the `system` messages Claude Code 2.1 sends among the others (its environment: the working directory). */
function systemText(system: unknown, messages: readonly any[]): string {
  const text = (content: unknown): string => {
    if (typeof content === 'string') return content;
    if (Array.isArray(content)) return content.map((block: any) => (typeof block?.text === 'string' ? block.text : '')).join('\n');
    return '';
  };
  return [text(system), ...messages.filter((message) => message?.role === 'system').map((message) => text(message.content))].join('\n');
}

const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

/** One assistant message of one content block, as a stream of events or as one JSON body. */
function reply(res: ServerResponse, body: any, id: string, block: any, stopReason: 'tool_use' | 'end_turn'): void {
  const model = typeof body.model === 'string' ? body.model : 'claude-sonnet-4-5';
  if (body.stream !== true) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id, type: 'message', role: 'assistant', model, content: [block], stop_reason: stopReason, stop_sequence: null, usage }));
    return;
  }
  const start = block.type === 'tool_use' ? { ...block, input: {} } : { type: 'text', text: '' };
  const delta = block.type === 'tool_use' ? { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } : { type: 'text_delta', text: block.text };
  sendSse(res, [
    { event: 'message_start', data: { type: 'message_start', message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } } },
    { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: start } },
    { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta } },
    { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
    { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 5 } } },
    { event: 'message_stop', data: { type: 'message_stop' } },
  ]);
}
