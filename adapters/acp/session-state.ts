import type * as acp from '@agentclientprotocol/sdk';
import type { SessionModels, SessionState } from './agent-process.ts';

/** What an agent's answer to `session/new`, `session/load` or `session/resume` says of the session. */
export function sessionState(answer: acp.NewSessionResponse | acp.LoadSessionResponse): SessionState {
  return { modes: answer.modes ?? null, configOptions: answer.configOptions ?? [], models: modelsOf(answer) };
}

/** The `models` field an agent may still send beside the typed answer; null when absent or not well formed. */
function modelsOf(answer: object): SessionModels | null {
  const models = (answer as { models?: unknown }).models as Partial<SessionModels> | null | undefined;
  if (models == null || !Array.isArray(models.availableModels)) return null;
  const available = models.availableModels.filter((model) => typeof model?.modelId === 'string');
  return { availableModels: available, currentModelId: typeof models.currentModelId === 'string' ? models.currentModelId : '' };
}
