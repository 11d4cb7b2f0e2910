import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentSandbox } from '../../adapters/acp/sandbox.ts';
import type { SandboxProbe } from '../../adapters/acp/sandbox-probe.ts';
import type { Config } from '../config.ts';

/** How agents are confined, as `/readyz` and the start's log line say it. */
export interface SandboxState {
  /** `bubblewrap`: every agent runs sandboxed; `none`: the machine offers no sandbox; `off`: AGENT_SANDBOX=off. */
  readonly kind: 'bubblewrap' | 'none' | 'off';
  readonly detail: string;
}

/** The directory holding the service's package.json: its installation, which the demo agent runs from. */
function installation(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

/**
 * The sandbox agents run in, from the probe's answer (null when AGENT_SANDBOX is off): hidden are the
 * service's DATA_DIR, its HOME (keys, shell history, tools' tokens), its TMPDIR and its world file;
 * shown again read-only are its installation and Node's, should they lie under one of those.
 */
export function agentSandbox(config: Pick<Config, 'dataDir' | 'world'>, env: Readonly<Record<string, string | undefined>>, probe: SandboxProbe | null): { sandbox: AgentSandbox | null; state: SandboxState } {
  if (probe === null) return { sandbox: null, state: { kind: 'off', detail: 'AGENT_SANDBOX=off: agents run as the service runs' } };
  if (!probe.ok) return { sandbox: null, state: { kind: 'none', detail: probe.reason } };
  const dataDir = resolve(config.dataDir);
  // Never `/`: hiding it would hide everything, the agent's own program with it.
  const homeLike = [env.HOME, env.TMPDIR].filter((dir): dir is string => dir !== undefined && dir !== '' && resolve(dir) !== '/');
  const hide = [dataDir, ...homeLike, ...(config.world === null ? [] : [resolve(config.world)])];
  const show = [installation(), dirname(dirname(process.execPath))];
  return {
    sandbox: { bwrap: probe.bwrap, hide, show, homes: join(dataDir, 'agent-homes') },
    state: { kind: 'bubblewrap', detail: `agents run in a bubblewrap sandbox (${probe.bwrap}): DATA_DIR, the service's HOME and TMPDIR and its world file hidden` },
  };
}
