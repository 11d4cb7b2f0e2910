// `npm run test:runtimes`: the core off Node. The domain's property tests, the port contract suites on the
// memory adapters and the use cases' suite (test/core/) run under Deno and Bun (their npm packages, pinned,
// installed into a cache outside the repository on the first run) and in headless Chromium (bundled by
// esbuild with small shims for node:test, node:assert, node:crypto and node:timers/promises). Each runtime
// first runs a suite that must fail, and the tier stops unless it is reported failed.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const root = new URL('../..', import.meta.url).pathname;
const RUNTIMES = [
  { name: 'deno', version: '2.9.6', bin: 'deno' },
  { name: 'bun', version: '1.4.4', bin: 'bun' },
];
const cache = process.env.RUNTIME_CACHE_DIR || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'agent-console-runtimes');

/** The runtime's binary from its cached install, installed first when missing (into a scratch directory, renamed once whole). */
function ensure(runtime) {
  const dir = join(cache, `${runtime.name}@${runtime.version}`);
  const bin = join(dir, 'node_modules', '.bin', runtime.bin);
  if (existsSync(join(dir, '.installed'))) return bin;
  const scratch = `${dir}.partial-${process.pid}`;
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  writeFileSync(join(scratch, 'package.json'), JSON.stringify({ name: `runtime-cache-${runtime.name}`, private: true }));
  const run = spawnSync('npm', ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--loglevel=error', `${runtime.name}@${runtime.version}`], { cwd: scratch, stdio: 'inherit', timeout: 600_000 });
  if (run.status !== 0) throw new Error(`npm install ${runtime.name}@${runtime.version} failed`);
  writeFileSync(join(scratch, '.installed'), `${runtime.name}@${runtime.version}\n`);
  rmSync(dir, { recursive: true, force: true });
  renameSync(scratch, dir);
  return bin;
}

const suites = [
  ...readdirSync(join(root, 'test/domain')).filter((f) => f.endsWith('.test.ts')).map((f) => `test/domain/${f}`),
  'test/adapters/memory.test.ts',
  ...readdirSync(join(root, 'test/core')).filter((f) => f.endsWith('.test.ts')).map((f) => `test/core/${f}`),
].sort().map((file) => `./${file}`);
const MUST_FAIL = './test/runtimes/fixtures/must-fail.case.ts';

const commands = {
  // --no-check: the sources are type-checked by tsc; Deno's checker is not the one the project pins.
  deno: (bin, files) => [bin, 'test', '--allow-read', '--allow-env', '--no-check', ...files],
  bun: (bin, files) => [bin, 'test', ...files],
  chromium: (_bin, files) => [process.execPath, '--import', 'tsx', join(root, 'test/runtimes/chromium.ts'), ...files],
};

let failed = false;
for (const runtime of [...RUNTIMES, { name: 'chromium', version: 'system' }]) {
  const started = Date.now();
  let bin = null;
  try {
    if (runtime.name !== 'chromium') bin = ensure(runtime);
  } catch (error) {
    console.log(`# ${runtime.name}: NOT INSTALLED: ${error.message}`);
    failed = true;
    continue;
  }
  const [command, ...args] = commands[runtime.name](bin, [MUST_FAIL]);
  const sanity = spawnSync(command, args, { cwd: root, encoding: 'utf8' });
  const skipped = runtime.name === 'chromium' && /chromium: skipped/.test(sanity.stdout);
  if (skipped) {
    console.log(sanity.stdout.trim());
    continue;
  }
  if (sanity.status === 0) {
    console.log(`# ${runtime.name}: the suite that must fail passed: this runtime's results cannot be trusted`);
    failed = true;
    continue;
  }
  const [cmd, ...rest] = commands[runtime.name](bin, suites);
  console.log(`# ${runtime.name} ${runtime.version}: ${suites.length} files${bin === null ? '' : ` (from ${bin})`}`);
  const run = spawnSync(cmd, rest, { cwd: root, stdio: 'inherit' });
  console.log(`# ${runtime.name}: ${run.status === 0 ? 'passed' : 'FAILED'} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (run.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
