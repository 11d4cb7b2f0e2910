import type * as acp from '@agentclientprotocol/sdk';
import type { AgentOffer } from '../../domain/vocabulary.ts';
import type { SessionState } from './agent-process.ts';

/** The parts of a posture, as ACP config options carry them. */
export type PosturePart = 'mode' | 'model' | 'effort';

type SelectOption = Extract<acp.SessionConfigOption, { type: 'select' }>;

const CATEGORY: Record<PosturePart, string> = { mode: 'mode', model: 'model', effort: 'thought_level' };
// Agents that leave an option's category out still name it plainly (Codex: `reasoning_effort`).
const IDS: Record<PosturePart, readonly string[]> = { mode: ['mode'], model: ['model'], effort: ['thought_level', 'reasoning_effort', 'effort'] };

/** The select option that carries `part`: one of its category, else one with a well-known id; null when the session has none. */
export function postureOption(options: readonly acp.SessionConfigOption[], part: PosturePart): SelectOption | null {
  const selects = options.filter((option): option is SelectOption => option.type === 'select');
  return selects.find((option) => option.category === CATEGORY[part]) ?? selects.find((option) => IDS[part].includes(option.id)) ?? null;
}

/** Every value of a select, whether its options are flat or grouped. */
export function selectValues(option: SelectOption): string[] {
  const values: string[] = [];
  for (const entry of option.options as (acp.SessionConfigSelectOption | acp.SessionConfigSelectGroup)[]) {
    if ('group' in entry) values.push(...entry.options.map((choice) => choice.value));
    else values.push(entry.value);
  }
  return [...new Set(values)];
}

/**
 * What a session advertises: its modes (ACP modes, else the `mode` config option), its models (the
 * `model` config option, else the session's `models` field) and efforts (the `thought_level` option, or one named like it). The mode a
 * new session starts in comes from a fresh session only: `previous` keeps it when a session's later
 * update refreshes the lists.
 */
export function offerOf(state: SessionState, previous: AgentOffer | null): AgentOffer {
  const modeOption = postureOption(state.configOptions, 'mode');
  const model = postureOption(state.configOptions, 'model');
  const effort = postureOption(state.configOptions, 'effort');
  const modes = state.modes !== null ? [...new Set(state.modes.availableModes.map((mode) => mode.id))] : modeOption === null ? [] : selectValues(modeOption);
  const current = state.modes?.currentModeId ?? (modeOption === null ? null : String(modeOption.currentValue));
  const kept = previous?.currentMode ?? null;
  return {
    modes,
    currentMode: kept !== null && modes.includes(kept) ? kept : current !== null && modes.includes(current) ? current : (modes[0] ?? null),
    // The `model` option, else the session's `models` field (Gemini CLI sends only that).
    models: model !== null ? selectValues(model) : [...new Set((state.models?.availableModels ?? []).map((entry) => entry.modelId))],
    efforts: effort === null ? [] : selectValues(effort),
  };
}
