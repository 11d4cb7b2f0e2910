import type { ServerResponse } from 'node:http';
import { fileTaskOf, sendSse, startFakeModel, type FakeModel } from './server.ts';

/**
 * A fake Gemini API for Gemini CLI (`POST /v1beta/models/<model>:generateContent` and
 * `:streamGenerateContent?alt=sse`). Requests that ask for JSON (the model router's complexity
 * check and the like) get an object filled from their schema; a conversation whose last user turn
 * names a file task gets a `write_file` call; one whose last turn is a function response, and
 * anything else, a short text.
 */
export function startFakeGeminiModel(): Promise<FakeModel> {
  return startFakeModel((request, res) => {
    const match = /^\/v1beta\/models\/([^/:?]+):(generateContent|streamGenerateContent|countTokens)/.exec(request.url);
    if (request.method !== 'POST' || match === null) return false;
    const body = request.body ?? {};
    if (match[2] === 'countTokens') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ totalTokens: 10 }));
      return true;
    }
    const schema = body.generationConfig?.responseJsonSchema ?? body.generationConfig?.responseSchema;
    let parts: any[];
    if (schema !== undefined || body.generationConfig?.responseMimeType === 'application/json') {
      parts = [{ text: JSON.stringify(fill(schema ?? { type: 'object' })) }];
    } else {
      const contents: any[] = Array.isArray(body.contents) ? body.contents : [];
      const last = contents.at(-1);
      const lastParts: any[] = last?.parts ?? [];
      const answered = lastParts.some((part) => part?.functionResponse !== undefined);
      const task = fileTaskOf(lastParts.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('\n'));
      parts =
        task !== null && !answered && offers(body, 'write_file')
          ? [{ functionCall: { name: 'write_file', args: { file_path: task.name, content: `${task.text}\n` } } }]
          : [{ text: 'Done.' }];
    }
    answer(res, match[2] === 'streamGenerateContent', parts);
    return true;
  });
}

function offers(body: any, name: string): boolean {
  return (body.tools ?? []).some((tool: any) => (tool?.functionDeclarations ?? []).some((declaration: any) => declaration?.name === name));
}

/** A value of a JSON schema's shape: what a JSON-mode answer holds (the router gets a low complexity). */
function fill(schema: any): unknown {
  const type = String(schema?.type ?? 'object').toLowerCase();
  if (Array.isArray(schema?.enum) && schema.enum.length > 0) return schema.enum.includes('user') ? 'user' : schema.enum[0];
  if (type === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(schema?.properties ?? {})) out[key] = key === 'next_speaker' ? 'user' : fill(value);
    return out;
  }
  if (type === 'array') return [];
  if (type === 'number' || type === 'integer') return 1;
  if (type === 'boolean') return false;
  return 'simple';
}

function answer(res: ServerResponse, stream: boolean, parts: any[]): void {
  const data = {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: 'gemini-fake',
  };
  if (stream) sendSse(res, [{ data }]);
  else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(data));
}
