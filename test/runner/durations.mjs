// A node:test reporter that says how long each test file took (its process, start to end) as each ends,
// and the slowest ten at the end, so tiers are chosen from data (test/runner/tiers.mjs). Runs beside the
// spec reporter (test/run.mjs).
import { relative } from 'node:path';

const seconds = (ms) => `${(ms / 1000).toFixed(1).padStart(6)} s`;

export default async function* durations(source) {
  const started = Date.now();
  const files = [];
  for await (const event of source) {
    // Node reports each file, run in a process of its own, as a test named by its path.
    if (event.type !== 'test:complete' || event.data.file === undefined || event.data.name !== event.data.file) continue;
    const name = relative(process.cwd(), event.data.file);
    const ms = event.data.details.duration_ms;
    files.push({ name, ms });
    yield `[file] ${seconds(ms)}  ${name}${event.data.details.passed ? '' : '  (failed)'}\n`;
  }
  files.sort((a, b) => b.ms - a.ms);
  const lines = files.slice(0, 10).map(({ name, ms }) => `  ${seconds(ms)}  ${name}`);
  yield `\nthe slowest ten of ${files.length} files (${seconds(Date.now() - started).trim()} in all):\n${lines.join('\n')}\n`;
}
