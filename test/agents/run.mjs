// `npm run test:agents`: the real-agents tier. Installs the pinned agents into their cache (outside the
// repository; the first run downloads them from the npm registry, later runs reuse them), then runs
// every `test/agents/*.e2e.ts` file with node:test. As root, where `unshare -n` works, the tests run
// in a network namespace of their own with loopback alone (the fake model servers, the service and the
// agents all inside it): no agent can reach anything but our fakes. Elsewhere they run on the host's
// loopback, and Claude Code, which looks up a public host name on its own, is skipped with the reason.
// Extra arguments are file filters (`npm run test:agents -- codex`).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

const started = Date.now();
const here = new URL('.', import.meta.url).pathname;
const seconds = () => ((Date.now() - started) / 1000).toFixed(1);
const filters = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
const files = readdirSync(here)
  .filter((name) => name.endsWith('.e2e.ts'))
  .map((name) => relative(process.cwd(), join(here, name)))
  .filter((file) => filters.length === 0 || filters.some((filter) => file.includes(filter)))
  .sort();
if (files.length === 0) {
  console.error('No agent test files matched.');
  process.exit(1);
}

// 1. The agents, installed once (a failed install is reported; its tests then skip, or fail for Codex).
const names = files.map((file) => /([a-z]+)\.e2e\.ts$/.exec(file)?.[1]).filter(Boolean);
console.log(`# installing agents (${names.join(', ')}) into the cache if missing`);
spawnSync(process.execPath, ['--import', 'tsx', join(here, 'install.ts'), ...names], { stdio: 'inherit' });
console.log(`# agents ready after ${seconds()} s`);

// 2. A network namespace with loopback alone, when this machine lets us make one.
const netns =
  process.getuid?.() === 0 &&
  spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up'], { stdio: 'ignore', env: { ...process.env, PATH: `${process.env.PATH}:/usr/sbin:/sbin` } }).status === 0;
const env = { ...process.env, PATH: `${process.env.PATH}:/usr/sbin:/sbin`, AGENT_TIER_NETNS: netns ? '1' : '' };
const testArgv = [process.execPath, '--import', 'tsx', '--test', '--test-concurrency=1', ...files];
const [command, ...args] = netns ? ['unshare', '-n', 'sh', '-c', 'ip link set lo up && exec "$@"', 'agent-tier', ...testArgv] : testArgv;
console.log(netns ? '# running in a network namespace with loopback only' : '# no network namespace here (needs root and unshare): running on the host loopback');

// 3. The tests, bounded as a whole: each has its own time-out, and this one ends whatever hangs.
// (No line after the runner's own summary: CI reads it as the closing lines.)
const result = spawnSync(command, args, { stdio: 'inherit', env, timeout: 20 * 60_000, killSignal: 'SIGKILL' });
if (result.error) console.error(`# test:agents: ${result.error.message}`);
process.exit(result.status ?? 1);
