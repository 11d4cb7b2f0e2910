// Runs every `*.test.ts` under test/ with node:test through tsx. Node 20's runner does not expand
// globs, so the files are listed here. Extra arguments pass through (for example a file name filter).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('.', import.meta.url).pathname;
const filters = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
const flags = process.argv.slice(2).filter((arg) => arg.startsWith('-'));

function* walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else if (entry.name.endsWith('.test.ts')) yield path;
  }
}

const files = [...walk(root)]
  .map((file) => relative(process.cwd(), file))
  .filter((file) => filters.length === 0 || filters.some((f) => file.includes(f)))
  .sort();
if (files.length === 0) {
  console.error('No test files matched.');
  process.exit(1);
}
// Tests that run `npm start` find the compiled service fresh, so none of them builds it while another runs it.
const built = spawnSync(process.execPath, [join(root, '..', 'scripts', 'build.mjs')], { stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', ...flags, ...files], { stdio: 'inherit' });
process.exit(result.status ?? 1);
