// `npm start`: builds dist/ when a source (or the build, or the lock file) changed since the last build,
// then runs the service in this very process. The check is a directory walk and a stat per file; a start
// on a fresh build starts one node process after npm, not one for the check and another for the service
// (docs/benchmarks.md, second start). test/start-process.test.ts holds it to that.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildState } from './freshness.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
if (!buildState(root).fresh) {
  // Only when stale: the build in a process of its own (esbuild's service and its memory go with it).
  const built = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { stdio: 'inherit' });
  if (built.status !== 0) process.exit(built.status ?? 1);
}
await import(pathToFileURL(join(root, 'dist', 'src', 'main.js')).href);
