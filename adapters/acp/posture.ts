import * as acp from '@agentclientprotocol/sdk';
import type { Logger } from 'pino';
import type { AgentProcess } from './agent-process.ts';

/** A conversation's posture; null leaves that part as the session has it. */
export interface Posture {
  readonly mode: string | null;
  readonly model: string | null;
  readonly effort: string | null;
}

/**
 * Brings a session to the conversation's posture before a prompt (contract section 5): the mode
 * with `session/set_mode`, model and effort with `session/set_config_option`. Whatever the agent
 * does not offer is skipped; what the session already has is not sent again. `log` names the session.
 */
export async function applyPosture(proc: AgentProcess, sessionId: string, posture: Posture, log: Logger): Promise<void> {
  if (posture.mode !== null) await setSessionMode(proc, sessionId, posture.mode, log);
  if (posture.model !== null && !(await setSelectOption(proc, sessionId, 'model', posture.model))) {
    log.debug({ model: posture.model }, 'the agent offers no such model option; left as is');
  }
  if (posture.effort !== null && !(await setSelectOption(proc, sessionId, 'thought_level', posture.effort))) {
    log.debug({ effort: posture.effort }, 'the agent offers no such effort option; left as is');
  }
}

/** Sets a session's mode: through its modes, else through a config option of category `mode`. */
export async function setSessionMode(proc: AgentProcess, sessionId: string, mode: string, log: Logger): Promise<void> {
  const state = proc.sessions.get(sessionId);
  if (!state) return;
  const modes = state.modes;
  if (modes && modes.availableModes.some((offered) => offered.id === mode)) {
    if (modes.currentModeId === mode) return;
    await proc.guard(proc.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: mode }));
    // Agents may or may not echo a current_mode_update for a change the client asked for.
    modes.currentModeId = mode;
    return;
  }
  // The spec prefers config options to modes; an agent may offer only those.
  if (!(await setSelectOption(proc, sessionId, 'mode', mode))) log.debug({ mode }, 'the agent offers no such mode; left as is');
}

/** Sets the select option of `category` to `value` when offered; false when the session has none. */
async function setSelectOption(proc: AgentProcess, sessionId: string, category: string, value: string): Promise<boolean> {
  const state = proc.sessions.get(sessionId);
  const option = state?.configOptions.find((candidate) => candidate.category === category && candidate.type === 'select');
  if (!state || !option || option.type !== 'select' || !selectValues(option.options).includes(value)) return false;
  if (option.currentValue === value) return true;
  const answer = await proc.guard(
    proc.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: option.id, value }),
  );
  // The answer is the full, current set: one option can change others.
  state.configOptions = answer.configOptions;
  return true;
}

/** Every value of a select, whether its options are flat or grouped. */
function selectValues(options: acp.SessionConfigSelectOptions): string[] {
  const values: string[] = [];
  for (const entry of options as (acp.SessionConfigSelectOption | acp.SessionConfigSelectGroup)[]) {
    if ('group' in entry) values.push(...entry.options.map((option) => option.value));
    else values.push(entry.value);
  }
  return values;
}
