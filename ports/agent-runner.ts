import type { Agent, PermissionOptionKind, ToolCall } from '../domain/model.ts';

/** Something a turn does, as it happens (from ACP `session/update`). */
export type TurnUpdate =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'thought'; readonly text: string }
  /** A new tool call, whole (ACP `tool_call`). */
  | { readonly kind: 'tool_call'; readonly call: ToolCall }
  /** What changed in a tool call (ACP `tool_call_update`): `id` and the fields the agent sent. */
  | { readonly kind: 'tool_call_update'; readonly call: ToolCall }
  /** The agent's whole plan, replacing the previous one. */
  | { readonly kind: 'plan'; readonly entries: readonly { readonly content: string; readonly priority: string; readonly status: string }[] }
  /** Context window use (`used` of `size` tokens) and the session's cumulative cost, when the agent reports it (ACP `usage_update`). */
  | { readonly kind: 'usage'; readonly used: number; readonly size: number; readonly cost: { readonly amount: number; readonly currency: string } | null }
  /** The slash commands the session offers now (ACP `available_commands_update`). */
  | { readonly kind: 'commands'; readonly commands: readonly { readonly name: string; readonly description: string; readonly hint: string | null }[] }
  | { readonly kind: 'mode'; readonly mode: string };

/** An agent asking the user before it acts (ACP `session/request_permission`). */
export interface PermissionAsk {
  readonly title: string;
  readonly options: readonly { readonly id: string; readonly name: string; readonly kind: PermissionOptionKind }[];
  /** The tool call asked about, merged over what the turn's earlier updates said of it (the diff, the command). */
  readonly tool_call: ToolCall;
}

/** The user's decision; `cancelled` when the turn ended first. */
export type PermissionDecision = { readonly outcome: 'selected'; readonly optionId: string } | { readonly outcome: 'cancelled' };

/**
 * A part of a conversation's posture the agent did not take: its session does not offer that value,
 * or the agent answered the change with an error. The turn goes on in the posture the session has.
 */
export interface PostureRefusal {
  readonly part: 'mode' | 'model' | 'effort';
  readonly value: string;
  /** Why, in a sentence of the service's own (the agent's error text is logged, never recorded). */
  readonly reason: string;
}

/** One prompt turn of one conversation. */
export interface TurnRequest {
  readonly agent: Agent;
  /** The session to continue, or null for a new one (then `cwd` is its working directory). */
  readonly sessionId: string | null;
  readonly cwd: string;
  readonly prompt: string;
  /** Set on the session before the prompt (`session/set_mode`); null leaves it. */
  readonly mode: string | null;
  /** Set through the session's config options where the agent offers them; null leaves them. */
  readonly model: string | null;
  readonly effort: string | null;
  /**
   * Asked for only when the turn runs in a new session although the thread has a past (no session was
   * asked for, or the one asked for could neither be continued nor loaded): the history brief the
   * prompt is prefixed with, or null for none. Absent: the prompt goes as it is.
   */
  readonly history?: () => Promise<string | null>;
  /** Told when the prompt went with the history brief (the agent did not continue a session that knew the thread). */
  readonly onBriefed?: () => void | Promise<void>;
  /**
   * Asked for only when the turn would open a new session and the agent offers ACP `session/fork`: a session of the
   * agent to fork instead (the new session starts as a copy of it, and the prompt goes without a brief), or null for
   * none. A fork the agent refuses falls back to a new session, briefed as above.
   */
  readonly forkFrom?: () => Promise<string | null>;
  /** Told when the session was forked from `forkFrom`'s (the prompt goes as it is). */
  readonly onForked?: () => void | Promise<void>;
  /** The session id, as soon as it is known (before the prompt is sent). */
  readonly onSession: (sessionId: string) => void | Promise<void>;
  readonly onUpdate: (update: TurnUpdate) => void | Promise<void>;
  readonly onPermission: (ask: PermissionAsk) => Promise<PermissionDecision>;
  /**
   * Awaited just before the prompt is sent, once the session is open and its posture set: a
   * rejection ends the turn with that error, and the prompt is never sent.
   */
  readonly beforePrompt?: () => Promise<void>;
  /** A part of the posture the agent did not take before the prompt; absent, refusals are only logged. */
  readonly onPostureRefused?: (refusal: PostureRefusal) => void | Promise<void>;
  /**
   * Aborted to cancel the turn: the agent is asked to stop (ACP `session/cancel`), and if it has not
   * ended its turn within the runner's grace period its process (group) is ended, so the turn
   * settles either way.
   */
  readonly signal?: AbortSignal;
}

/**
 * What a steer came to (ACP extension request `_session/steering`, contract section 11): `injected` into the
 * running turn; `promptRequired`, no turn of the session was running (it ended meanwhile, at the agent, or
 * here before the request went out) and nothing was taken; `unsupported`, the agent does not advertise
 * steering (`initialize`'s `_meta.steering.supported`), so nothing was sent; `other`, any other answer, an error or no answer
 * in time after it was sent: the agent may have it, so it counts as taken.
 */
export type SteerOutcome = 'injected' | 'promptRequired' | 'unsupported' | 'other';

/** How a turn ended. */
export interface TurnResult {
  readonly sessionId: string;
  readonly stopReason: string;
}

/**
 * Runs agent turns over the Agent Client Protocol: one agent process per agent (per agent and working
 * directory when agents are sandboxed), started on first use and again after it dies. A turn whose process dies, or whose agent answers an error, rejects.
 */
export interface AgentRunner {
  /** Runs one prompt turn in the conversation's session (continued, loaded, resumed or new), streaming what the agent does. */
  runTurn(request: TurnRequest): Promise<TurnResult>;
  /**
   * Switches a live session's posture (`session/set_mode`); a session that is not live is left alone.
   * Answers the refusal when the agent does not take the mode, else null.
   */
  setMode(agent: Agent, sessionId: string, mode: string): Promise<PostureRefusal | null>;
  /**
   * Sends `text` into the turn running in a live session (`_session/steering`, asking `promptRequired` when the
   * agent has no turn running): answers what it came to. Never sends unless the agent advertised steering and a
   * turn of the session is in flight; never rejects (a failure after the request went out is `other`).
   */
  steer(agent: Agent, sessionId: string, text: string): Promise<SteerOutcome>;
  /** Stops every agent process. */
  close(): Promise<void>;
}
