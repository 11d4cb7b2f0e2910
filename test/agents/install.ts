// Installs the real agents this tier drives, at pinned versions, into a cache outside the repository
// (`$AGENT_CACHE_DIR`, else `$XDG_CACHE_HOME/agent-console-agents`, else `~/.cache/agent-console-agents`),
// one directory per `<name>@<version>`, reused when present. Run directly, it installs them all and prints
// each agent's argv: `node --import tsx test/agents/install.ts [codex|claude|gemini ...]`.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** An agent of this tier: the npm package that carries it and how to start it from its install. */
export interface AgentPackage {
  readonly name: 'codex' | 'claude' | 'gemini';
  readonly pkg: string;
  /** Exact: the fake model servers depend on wire details that change between releases. */
  readonly version: string;
  /** The ACP agent's argv, given the directory it was installed in. */
  readonly argv: (dir: string) => string[];
  /** Files besides the entry point that an install must have (a platform's optional package), given the directory. */
  readonly needs?: (dir: string) => string[];
}

const modules = (dir: string, ...path: string[]) => join(dir, 'node_modules', ...path);

export const AGENT_PACKAGES: readonly AgentPackage[] = [
  {
    name: 'codex',
    // Moved from @zed-industries (last pinned here 0.16.0, a static binary without steering) to the ACP organisation:
    // a Node program that runs `codex app-server` of its dependency @openai/codex (its native binary in the optional
    // platform package @openai/codex-<platform>-<arch>); 2.6.0 advertises steering (`_session/steering`).
    pkg: '@agentclientprotocol/codex-acp',
    version: '2.6.0',
    argv: (dir) => [process.execPath, modules(dir, '@agentclientprotocol', 'codex-acp', 'dist', 'index.js')],
    // Without CODEX_PATH the adapter runs `node @openai/codex/bin/codex.js app-server`, which finds the binary there.
    needs: (dir) => [modules(dir, '@openai', `codex-${process.platform}-${process.arch}`, 'package.json')],
  },
  {
    name: 'claude',
    // Moved from @zed-industries (last 0.23.1) to the ACP organisation; 0.101.0 advertises steering (`_session/steering`).
    pkg: '@agentclientprotocol/claude-agent-acp',
    version: '0.101.0',
    argv: (dir) => [process.execPath, modules(dir, '@agentclientprotocol', 'claude-agent-acp', 'dist', 'index.js')],
  },
  {
    name: 'gemini',
    pkg: '@google/gemini-cli',
    version: '0.61.0',
    argv: (dir) => [process.execPath, modules(dir, '@google', 'gemini-cli', 'bundle', 'gemini.js'), '--acp'],
  },
];

/** Where installed agents are kept. */
export function agentCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AGENT_CACHE_DIR) return env.AGENT_CACHE_DIR;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'agent-console-agents');
}

/** An installed agent, or why it is not. */
export type Installed = { readonly ok: true; readonly argv: string[]; readonly dir: string; readonly fresh: boolean } | { readonly ok: false; readonly reason: string };

const MARK = '.installed';

/** The agent's cached install, or null when it has not been installed. */
export function installedAgent(agent: AgentPackage): { argv: string[]; dir: string } | null {
  const dir = join(agentCacheDir(), `${agent.name}@${agent.version}`);
  return existsSync(join(dir, MARK)) ? { argv: agent.argv(dir), dir } : null;
}

/**
 * Installs the agent's package at its pinned version unless the cache has it. Installed into a
 * scratch directory and renamed into place once complete, so a broken install is never reused.
 * Install scripts are not run: none of these agents needs one (they only build optional native add-ons).
 */
export function ensureAgent(agent: AgentPackage): Installed {
  const cached = installedAgent(agent);
  if (cached !== null) return { ok: true, ...cached, fresh: false };
  const dir = join(agentCacheDir(), `${agent.name}@${agent.version}`);
  const scratch = `${dir}.partial-${process.pid}`;
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  writeFileSync(join(scratch, 'package.json'), JSON.stringify({ name: `agent-cache-${agent.name}`, private: true }));
  const run = spawnSync(
    'npm',
    ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error', `${agent.pkg}@${agent.version}`],
    { cwd: scratch, encoding: 'utf8', timeout: 600_000 },
  );
  if (run.status !== 0) {
    rmSync(scratch, { recursive: true, force: true });
    const why = (run.stderr || run.error?.message || '').trim().split('\n').slice(-3).join(' ');
    return { ok: false, reason: `npm install ${agent.pkg}@${agent.version} failed (${run.status ?? run.signal}): ${why}` };
  }
  const argv = agent.argv(scratch);
  if (!existsSync(argv.at(-1) === '--acp' ? argv.at(-2)! : argv.at(-1)!)) {
    rmSync(scratch, { recursive: true, force: true });
    return { ok: false, reason: `${agent.pkg}@${agent.version} installed without its entry point (${process.platform}-${process.arch} not packaged?)` };
  }
  const missing = (agent.needs?.(scratch) ?? []).filter((file) => !existsSync(file));
  if (missing.length > 0) {
    rmSync(scratch, { recursive: true, force: true });
    return { ok: false, reason: `${agent.pkg}@${agent.version} installed without ${missing.map((file) => file.slice(scratch.length + 1)).join(', ')} (${process.platform}-${process.arch} not packaged?)` };
  }
  writeFileSync(join(scratch, MARK), `${agent.pkg}@${agent.version}\n`);
  rmSync(dir, { recursive: true, force: true });
  renameSync(scratch, dir);
  return { ok: true, argv: agent.argv(dir), dir, fresh: true };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const wanted = process.argv.slice(2);
  let failed = false;
  for (const agent of AGENT_PACKAGES.filter((a) => wanted.length === 0 || wanted.includes(a.name))) {
    const started = Date.now();
    const result = ensureAgent(agent);
    const took = ((Date.now() - started) / 1000).toFixed(1);
    if (result.ok) console.log(`${agent.name}: ${agent.pkg}@${agent.version} ${result.fresh ? `installed in ${took} s` : 'cached'} at ${result.dir}`);
    else {
      failed = true;
      console.log(`${agent.name}: NOT INSTALLED: ${result.reason}`);
    }
  }
  process.exitCode = failed ? 1 : 0;
}
