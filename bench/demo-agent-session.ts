// The demo agent as a bare ACP client talks to it (bench/turn-overhead.ts's bare side, and the relay of
// bench/turn-relay-process.ts): spawned as the service's runner spawns it (the compiled script, the
// allow-listed environment, its own process group), connected with the SDK, `initialize`d, one session open.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { agentEnvironment } from '../domain/agent-env.ts';

/** One open session of the demo agent: `prompt` resolves with the prompt's answer; `close` ends its process group. */
export interface DemoAgentSession {
  readonly prompt: (text: string) => Promise<unknown>;
  readonly close: () => Promise<void>;
}

/** Starts the demo agent at `script` and opens a session; each text chunk it sends is given to `onChunk`. */
export async function demoAgentSession(script: string, onChunk: (text: string) => void): Promise<DemoAgentSession> {
  // The demo world's `claude` agent has no `env` and no `env_pass`: the allow-listed variables alone.
  const { env } = agentEnvironment({}, process.env);
  const cwd = mkdtempSync(join(tmpdir(), 'console-bench-agent-'));
  const child = spawn(process.execPath, [script], { stdio: ['pipe', 'pipe', 'ignore'], env, detached: true });
  const exited = once(child, 'exit');
  const connection = acp
    .client({ name: 'bench-bare' })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      const update = params.update;
      if (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text') onChunk(update.content.text);
    })
    .onRequest(acp.methods.client.session.requestPermission, async () => ({ outcome: { outcome: 'cancelled' } }))
    .connect(acp.ndJsonStream(Writable.toWeb(child.stdin!), Readable.toWeb(child.stdout!) as unknown as ReadableStream<Uint8Array>));
  await connection.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  });
  const { sessionId } = await connection.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  return {
    prompt: (text) => connection.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] }),
    async close() {
      connection.close();
      const kill = (signal: NodeJS.Signals) => {
        try {
          process.kill(-child.pid!, signal);
        } catch {
          // Gone already.
        }
      };
      if (child.exitCode === null && child.signalCode === null) {
        const hard = setTimeout(() => kill('SIGKILL'), 15_000);
        kill('SIGTERM');
        await exited;
        clearTimeout(hard);
      }
      rmSync(cwd, { recursive: true, force: true });
    },
  };
}
