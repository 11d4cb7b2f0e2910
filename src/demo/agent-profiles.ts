/**
 * What the bundled demo agent advertises, per profile: it serves every agent without a `command`,
 * and the world picks the profile with the agent's `env` (`DEMO_AGENT_PROFILE`), so what the demo
 * offers for `codex` is shaped like what Codex advertises (REFERENCES.md, "Real agents offline"),
 * and likewise for `claude`. The service learns these from the agent, as it does from real ones.
 */
export interface DemoProfile {
  /** ACP modes; a session starts in the first. */
  readonly modes: readonly string[];
  /** Values of the `model` config option (category `model`); a session starts with the first. */
  readonly models: readonly string[];
  /** Values of the effort config option; a session starts with the first. */
  readonly efforts: readonly string[];
  /** The effort option's id and category: Codex names it `reasoning_effort` and leaves the category out. */
  readonly effortOption: { readonly id: string; readonly category: string | null };
  /** Whether the modes are also a `mode` config option, and `set_mode` is answered with a `config_option_update` (Codex). */
  readonly modeOption: boolean;
  /**
   * Whether it advertises steering (`_meta.steering.supported` in its `initialize` answer) and takes `_session/steering`:
   * Claude Code's adapter does; the `codex` profile does not, as the pinned Codex adapter does not (the fallback to the queue).
   */
  readonly steering: boolean;
}

export const DEMO_PROFILES: Readonly<Record<string, DemoProfile>> = {
  claude: {
    modes: ['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions'],
    models: ['opus', 'sonnet', 'haiku'],
    efforts: ['low', 'medium', 'high'],
    effortOption: { id: 'effort', category: 'thought_level' },
    modeOption: false,
    steering: true,
  },
  codex: {
    modes: ['read-only', 'auto', 'full-access'],
    models: ['gpt-5-codex', 'gpt-5'],
    efforts: ['low', 'medium', 'high'],
    effortOption: { id: 'reasoning_effort', category: null },
    modeOption: true,
    steering: false,
  },
};

/** The profile an agent without `DEMO_AGENT_PROFILE` gets. */
export const DEFAULT_DEMO_PROFILE = 'claude';
