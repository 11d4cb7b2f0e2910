// Runs the test files with node:test through tsx, each file in a process of its own, several at once.
//
//   node test/run.mjs              the fast tier (`npm test`): everything but what test/runner/tiers.mjs keeps
//                                  for the full tier; the storage matrix on memory only
//   node test/run.mjs --full       the full tier (`npm run test:full`): what `npm test` leaves out, and the
//                                  storage matrix on every backend (PGlite, and PostgreSQL when TEST_DATABASE_URL is set)
//   node test/run.mjs --all        both tiers' files, the storage matrix on every backend
//   node test/run.mjs NAME...      the files whose path contains a NAME, whatever their tier, on every backend
//
// Each file's duration is printed as it ends and the slowest ten at the end (test/runner/durations.mjs).
// Other arguments starting with `-` pass through to node --test (for example --test-name-pattern=...).
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { tierOf } from './runner/tiers.mjs';

const root = new URL('.', import.meta.url).pathname;
const args = process.argv.slice(2);
const tier = args.includes('--full') ? 'full' : args.includes('--all') ? 'all' : 'fast';
const filters = args.filter((arg) => !arg.startsWith('-'));
const flags = args.filter((arg) => arg.startsWith('-') && !['--full', '--all'].includes(arg));

function* walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else if (entry.name.endsWith('.test.ts')) yield path;
  }
}

const every = [...walk(root)].map((file) => relative(process.cwd(), file)).sort();
const files = filters.length > 0
  ? every.filter((file) => filters.some((f) => file.includes(f)))
  : every.filter((file) => tier === 'all' || tierOf(file) === tier || tierOf(file) === 'both');
if (files.length === 0) {
  console.error('No test files matched.');
  process.exit(1);
}

// The fast tier runs the storage matrix (test/support/storage-kinds.ts) on memory alone.
const env = { ...process.env };
if (tier === 'fast' && filters.length === 0) env.TEST_STORAGE_KINDS = 'memory';
else delete env.TEST_STORAGE_KINDS;

// Files at once. Node 20 runs one at a time where there are two cores (availableParallelism() - 1); most
// files wait on sockets, processes and timers rather than compute, so twice the cores keeps the cores busy.
const concurrency = Number(process.env.TEST_CONCURRENCY) || Math.max(2, availableParallelism() * 2);

// Processes that tests start run the compiled service (dist/), built once here before any test runs it.
const built = spawnSync(process.execPath, [join(root, '..', 'scripts', 'build.mjs')], { stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);

console.log(`${files.length} test files, tier ${filters.length > 0 ? 'named' : tier}, ${concurrency} at once`);
const result = spawnSync(
  process.execPath,
  [
    '--import', 'tsx', '--test', `--test-concurrency=${concurrency}`,
    '--test-reporter=spec', '--test-reporter-destination=stdout',
    `--test-reporter=${join(root, 'runner', 'durations.mjs')}`, '--test-reporter-destination=stdout',
    ...flags, ...files,
  ],
  { stdio: 'inherit', env },
);
process.exit(result.status ?? 1);
