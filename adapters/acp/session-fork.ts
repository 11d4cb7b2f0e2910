import type * as acp from '@agentclientprotocol/sdk';
import type { Logger } from 'pino';
import type { AgentProcess } from './agent-process.ts';
import { sessionState } from './session-state.ts';

/** ACP's `session/fork`: unstable in the SDK this service pins, so named here rather than through its typed methods. */
export const FORK_METHOD = 'session/fork';

/** Whether the agent advertises `session/fork` (`agentCapabilities.sessionCapabilities.fork`, present and not null). */
export function offersFork(proc: AgentProcess): boolean {
  const capabilities = proc.capabilities.sessionCapabilities as { readonly fork?: unknown } | null | undefined;
  return capabilities?.fork != null;
}

/**
 * Forks `source` into a new session of `proc` working in `cwd`: the new session's id, or null when the agent
 * refused or answered something else (the caller opens a new session instead). Rejects only when the process died.
 */
export async function forkSession(proc: AgentProcess, source: string, cwd: string, log: Logger): Promise<string | null> {
  try {
    const answer = await proc.bounded(proc.agent.request<unknown>(FORK_METHOD, { sessionId: source, cwd, mcpServers: [] }), FORK_METHOD);
    const sessionId = answer !== null && typeof answer === 'object' ? (answer as { sessionId?: unknown }).sessionId : undefined;
    if (typeof sessionId !== 'string' || sessionId === '') {
      log.info({ source }, 'the agent answered session/fork without a session id; starting a new session');
      return null;
    }
    proc.sessions.set(sessionId, sessionState(answer as acp.NewSessionResponse));
    return sessionId;
  } catch (error) {
    if (!proc.alive()) throw error;
    log.info({ err: error, source }, 'the agent could not fork the session; starting a new one');
    return null;
  }
}
