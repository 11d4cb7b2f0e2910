import * as acp from '@agentclientprotocol/sdk';
import type { Logger } from 'pino';
import type { PostureRefusal } from '../../ports/agent-runner.ts';
import { AgentRequestError } from './agent-diagnostics.ts';
import type { AgentProcess } from './agent-process.ts';
import { type PosturePart, postureOption, selectValues } from './offer.ts';

/** A conversation's posture; null leaves that part as the session has it. */
export interface Posture {
  readonly mode: string | null;
  readonly model: string | null;
  readonly effort: string | null;
}

/**
 * Brings a session to the conversation's posture before a prompt (contract section 5): the mode
 * with `session/set_mode`, model and effort with `session/set_config_option`; what the session
 * already has is not sent again. Answers what the agent did not take (a value this session does not
 * offer, or a change it answered with an error): the caller reports it, and the turn goes on.
 * `log` names the session.
 */
export async function applyPosture(proc: AgentProcess, sessionId: string, posture: Posture, log: Logger): Promise<PostureRefusal[]> {
  const refusals: PostureRefusal[] = [];
  const note = (refusal: PostureRefusal | null) => {
    if (refusal === null) return;
    log.warn(refusal, 'the agent did not take a part of the posture');
    refusals.push(refusal);
  };
  if (posture.mode !== null) note(await setSessionMode(proc, sessionId, posture.mode));
  if (posture.model !== null) note(await setSessionModel(proc, sessionId, posture.model));
  if (posture.effort !== null) note(await setSelectOption(proc, sessionId, 'effort', posture.effort));
  return refusals;
}

/** Sets a session's mode: through its modes, else through a config option of category `mode`. */
export async function setSessionMode(proc: AgentProcess, sessionId: string, mode: string): Promise<PostureRefusal | null> {
  const state = proc.sessions.get(sessionId);
  if (!state) return null;
  const modes = state.modes;
  if (modes && modes.availableModes.some((offered) => offered.id === mode)) {
    if (modes.currentModeId === mode) return null;
    const refused = await refusalOf('mode', mode, proc.guard(proc.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: mode })));
    // Agents may or may not echo a current_mode_update for a change the client asked for.
    if (refused === null) modes.currentModeId = mode;
    return refused;
  }
  // The spec prefers config options to modes; an agent may offer only those.
  return setSelectOption(proc, sessionId, 'mode', mode);
}

/** Sets a session's model: through its `model` config option, else through its `models` field (`session/set_model`). */
async function setSessionModel(proc: AgentProcess, sessionId: string, model: string): Promise<PostureRefusal | null> {
  const state = proc.sessions.get(sessionId);
  if (!state) return null;
  const models = state.models;
  if (postureOption(state.configOptions, 'model') !== null || models === null || !models.availableModels.some((m) => m.modelId === model)) {
    return setSelectOption(proc, sessionId, 'model', model);
  }
  if (models.currentModelId === model) return null;
  // Not in the SDK's method list any more: sent by name, as the agents that send `models` expect.
  const refused = await refusalOf('model', model, proc.guard(proc.agent.request('session/set_model', { sessionId, modelId: model })));
  if (refused === null) models.currentModelId = model;
  return refused;
}

/** Sets the select option carrying `part` to `value`; a refusal when the session does not offer it or the agent refuses. */
async function setSelectOption(proc: AgentProcess, sessionId: string, part: PosturePart, value: string): Promise<PostureRefusal | null> {
  const state = proc.sessions.get(sessionId);
  if (!state) return null;
  const option = postureOption(state.configOptions, part);
  if (option === null || !selectValues(option).includes(value)) return { part, value, reason: `the agent's session does not offer ${part} ${value}` };
  if (option.currentValue === value) return null;
  let answer: acp.SetSessionConfigOptionResponse | undefined;
  const refused = await refusalOf(part, value, proc.guard(proc.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: option.id, value })).then((a) => {
    answer = a;
  }));
  // The answer is the full, current set: one option can change others, and what the agent offers with them.
  if (answer !== undefined) state.configOptions = answer.configOptions;
  return refused;
}

/**
 * Null once `request` succeeds; a refusal when the agent answered it with an error. Anything else
 * (the process ended, the connection failed) rejects: the turn cannot go on.
 */
async function refusalOf(part: PosturePart, value: string, request: Promise<unknown>): Promise<PostureRefusal | null> {
  try {
    await request;
    return null;
  } catch (error) {
    // `guard` has logged the agent's own text; only its code is recorded.
    if (error instanceof AgentRequestError) return { part, value, reason: `the agent refused it: error ${error.code}` };
    throw error;
  }
}
