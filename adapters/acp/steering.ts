import type { Logger } from 'pino';
import type { SteerOutcome } from '../../ports/agent-runner.ts';
import type { AgentProcess } from './agent-process.ts';

/** The ACP extension request that sends a message into a running turn (contract section 11). */
export const STEERING_METHOD = '_session/steering';

/**
 * Sends `text` into the turn running in `sessionId` of `proc`. Nothing is sent when the agent did not
 * advertise steering (`unsupported`) or no turn of the session is in flight in this process (`promptRequired`:
 * it ended meanwhile). `idleBehavior: "promptRequired"` goes both where the contract puts it and where
 * Claude Code's and Codex's adapters read it (`_meta.steering.idleBehavior`): without it they start a turn of
 * their own when none runs, which this service would never see. Once sent, anything but `injected` or
 * `promptRequired` (another answer, an error, no answer within `timeoutMs`) is `other`: the agent may have it.
 */
export async function steerSession(proc: AgentProcess, sessionId: string, text: string, log: Logger, timeoutMs: number): Promise<SteerOutcome> {
  if (!proc.steering) return 'unsupported';
  if (!proc.alive() || !proc.routes.has(sessionId)) return 'promptRequired';
  const params = {
    sessionId,
    prompt: [{ type: 'text', text }],
    idleBehavior: 'promptRequired',
    _meta: { steering: { idleBehavior: 'promptRequired' } },
  };
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(resolve, timeoutMs, 'late');
    timer.unref();
  });
  try {
    const answer = await Promise.race([proc.guard(proc.agent.request<unknown>(STEERING_METHOD, params)), late]);
    if (answer === 'late') {
      log.warn({ sessionId, ms: timeoutMs }, 'the agent did not answer the steer in time; it may have it');
      return 'other';
    }
    const outcome = answer !== null && typeof answer === 'object' ? (answer as { outcome?: unknown }).outcome : undefined;
    if (outcome === 'injected' || outcome === 'promptRequired') return outcome;
    log.info({ sessionId, outcome: typeof outcome === 'string' ? outcome.slice(0, 100) : null }, 'the agent answered the steer otherwise; it counts as taken');
    return 'other';
  } catch (error) {
    log.info({ err: error, sessionId }, 'the steer failed after it was sent; it counts as taken');
    return 'other';
  } finally {
    clearTimeout(timer);
  }
}
