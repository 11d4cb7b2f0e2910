import type { Agent } from './model.ts';

/**
 * An environment variable name an agent's configuration may use: a letter or `_`, then letters,
 * digits and `_` (POSIX's portable names). Anything else (`A=B`, NUL, spaces) would split or
 * truncate the `NAME=value` pair the kernel receives.
 */
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,199}$/;

/**
 * Variables of the service's own environment every agent gets: what a program needs to find its
 * tools, its home, its locale and its temporary directory. Nothing else of the service's
 * environment (its `DATABASE_URL`, its credentials) reaches an agent unless the agent names it.
 */
export const AGENT_BASE_VARIABLES: readonly string[] = ['PATH', 'HOME', 'LANG', 'TMPDIR'];

const isBaseVariable = (name: string) => AGENT_BASE_VARIABLES.includes(name) || name.startsWith('LC_');

/** An agent process's environment, and the `env_pass` names the service's environment did not hold. */
export interface AgentEnvironment {
  readonly env: Record<string, string>;
  readonly missing: readonly string[];
}

/**
 * The environment of `agent`'s process, built from the service's environment `base`: the base
 * variables (`PATH`, `HOME`, `LANG`, `LC_*`, `TMPDIR`), then the agent's `env_pass` names, then its
 * literal `env` (which wins). A passed name `base` does not hold is left out and reported.
 */
export function agentEnvironment(
  agent: Pick<Agent, 'env' | 'env_pass'>,
  base: Readonly<Record<string, string | undefined>>,
): AgentEnvironment {
  // No prototype: a name such as `__proto__` is an own variable like any other.
  const env: Record<string, string> = Object.create(null);
  for (const [name, value] of Object.entries(base)) {
    if (value !== undefined && isBaseVariable(name) && ENV_NAME_PATTERN.test(name)) env[name] = value;
  }
  const missing: string[] = [];
  for (const name of agent.env_pass ?? []) {
    const value = Object.hasOwn(base, name) ? base[name] : undefined;
    if (value === undefined) missing.push(name);
    else env[name] = value;
  }
  for (const [name, value] of Object.entries(agent.env ?? {})) env[name] = value;
  return { env, missing };
}

/** The shortest literal `env` value taken for a secret: shorter ones are flags (`1`, `yes`), and hiding them would garble every line. */
export const MIN_LITERAL_SECRET = 4;

/**
 * The values of an agent's own variables, as its process got them in `env`: each `env_pass` value
 * (a secret by definition) and each literal `env` value of at least {@link MIN_LITERAL_SECRET}
 * characters. Whatever the agent writes to the log is stripped of them.
 */
export function agentSecrets(agent: Pick<Agent, 'env' | 'env_pass'>, env: Readonly<Record<string, string>>): string[] {
  const passed = (agent.env_pass ?? []).flatMap((name) => (Object.hasOwn(env, name) && env[name] !== '' ? [env[name]!] : []));
  const literals = Object.values(agent.env ?? {}).filter((value) => value.length >= MIN_LITERAL_SECRET);
  return [...passed, ...literals];
}

/**
 * The values an agent got through `env_pass` (the service's secrets, by definition), of at least
 * {@link MIN_LITERAL_SECRET} characters: hidden in everything the agent sends (its replies, tool
 * calls, asks) before it is stored or broadcast. Literal `env` values are configuration (base URLs,
 * homes, profiles), written in the world file: the agent may mention them.
 */
export function passedSecrets(agent: Pick<Agent, 'env_pass'>, env: Readonly<Record<string, string>>): string[] {
  return (agent.env_pass ?? []).flatMap((name) => (Object.hasOwn(env, name) && env[name]!.length >= MIN_LITERAL_SECRET ? [env[name]!] : []));
}

/**
 * Whether `a` and `b` start the same agent process: the same id, network, command, literal `env` and `env_pass`
 * names (in any order of keys; `env_pass` in its order, as it is passed). Models, efforts and modes are
 * what the process is asked for, not how it is started.
 */
export function sameAgentProcess(a: Pick<Agent, 'id' | 'command' | 'env' | 'env_pass' | 'network'>, b: Pick<Agent, 'id' | 'command' | 'env' | 'env_pass' | 'network'>): boolean {
  const sameList = (x: readonly string[] | null | undefined, y: readonly string[] | null | undefined) =>
    (x ?? null) === null ? (y ?? null) === null : y != null && x!.length === y.length && x!.every((item, i) => item === y[i]);
  const envOf = (agent: Pick<Agent, 'env'>) => Object.entries(agent.env ?? {});
  const aEnv = envOf(a);
  const bEnv = b.env ?? {};
  return (
    a.id === b.id &&
    (a.network ?? 'host') === (b.network ?? 'host') &&
    sameList(a.command, b.command) &&
    sameList(a.env_pass ?? [], b.env_pass ?? []) &&
    aEnv.length === Object.keys(bEnv).length &&
    aEnv.every(([name, value]) => Object.hasOwn(bEnv, name) && bEnv[name] === value)
  );
}
