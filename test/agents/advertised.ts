import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';

/** What an agent offers in a new session: its modes, models and select config options. */
export interface Advertised {
  readonly modes: string[];
  readonly currentMode: string | null;
  /** The `models` field's ids, or null when the agent has none. */
  readonly models: string[] | null;
  readonly currentModel: string | null;
  /** Select config options by category: their values. */
  readonly configOptions: { id: string; category: string | null; values: string[]; current: string }[];
  /** Whether its `initialize` answer advertises steering (`_meta.steering.supported: true`, beside `agentCapabilities`). */
  readonly steering: boolean;
  /** Whether it offers ACP `session/fork` (`agentCapabilities.sessionCapabilities.fork`, present and not null). */
  readonly fork: boolean;
}

/**
 * Asks the agent itself, outside the service: spawns it (in its own process group, ended after),
 * runs `initialize` and `session/new` in `cwd`, and reads what the session advertises. The source
 * of truth the service's `/permissions` and `/routes` are compared with.
 */
export async function probeAdvertised(argv: readonly string[], env: Record<string, string>, cwd: string): Promise<Advertised> {
  mkdirSync(cwd, { recursive: true });
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ['pipe', 'pipe', 'ignore'], env, detached: true });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (const stream of [child.stdin, child.stdout]) stream!.on('error', () => {});
  const kill = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // gone
    }
  };
  const app = acp.client({ name: 'agent-tier-probe' }).onNotification(acp.methods.client.session.update, () => {});
  const connection = app.connect(acp.ndJsonStream(Writable.toWeb(child.stdin!), Readable.toWeb(child.stdout!) as unknown as ReadableStream<Uint8Array>));
  const timer = setTimeout(() => kill('SIGKILL'), 60_000);
  try {
    const init = await connection.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    });
    const session = await connection.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
    // `models` is an unstable ACP field, outside the SDK's stable types: read as the agents send it.
    const { models } = session as { models?: { availableModels: { modelId: string }[]; currentModelId: string } | null };
    const meta = (init._meta ?? {}) as { steering?: { supported?: unknown } };
    return {
      steering: meta.steering?.supported === true,
      fork: (init.agentCapabilities?.sessionCapabilities as { fork?: unknown } | null | undefined)?.fork != null,
      modes: session.modes?.availableModes.map((mode) => mode.id) ?? [],
      currentMode: session.modes?.currentModeId ?? null,
      models: models?.availableModels.map((model) => model.modelId) ?? null,
      currentModel: models?.currentModelId ?? null,
      configOptions: (session.configOptions ?? []).flatMap((option) =>
        option.type === 'select'
          ? [{ id: option.id, category: option.category ?? null, values: selectValues(option.options), current: option.currentValue }]
          : [],
      ),
    };
  } finally {
    clearTimeout(timer);
    kill('SIGTERM');
    const hard = setTimeout(() => kill('SIGKILL'), 3_000);
    await exited;
    clearTimeout(hard);
    kill('SIGKILL'); // whatever it left in its group
    connection.close();
  }
}

function selectValues(options: acp.SessionConfigSelectOptions): string[] {
  return (options as (acp.SessionConfigSelectOption | acp.SessionConfigSelectGroup)[]).flatMap((entry) =>
    'group' in entry ? entry.options.map((option) => option.value) : [entry.value],
  );
}
