// Whether dist/ is a build of the sources as they are: every source file listed in dist/.built when it
// was written, none changed since. Shared by scripts/build.mjs and scripts/start.mjs (which checks it
// in the service's own process, then runs the service: one node process for `npm start`).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The trees compiled to dist/. */
export const TREES = ['domain', 'ports', 'core', 'adapters', 'src', 'client'];

/**
 * The other files a build is made of: the build itself, and the installed dependencies (the lock file),
 * since dist/src/main.js bundles them. A change to any of them builds again too.
 */
export const BUILD_INPUTS = ['scripts/build.mjs', 'scripts/bundle.mjs', 'scripts/freshness.mjs', 'package-lock.json'];

function* walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else yield path;
  }
}

/** The source files to compile, the list of inputs written to the stamp, and whether the build in `out` is fresh. */
export function buildState(root, out = join(root, 'dist')) {
  const stamp = join(out, '.built');
  const sources = TREES.flatMap((tree) => [...walk(join(root, tree))]);
  const inputs = [...sources, ...BUILD_INPUTS.map((file) => join(root, file))];
  const list = inputs.map((file) => relative(root, file)).sort().join('\n');
  let builtAt = -1;
  let listed = null;
  try {
    builtAt = statSync(stamp).mtimeMs;
    listed = readFileSync(stamp, 'utf8');
  } catch {
    // no build yet
  }
  const fresh = builtAt >= 0 && listed === list && inputs.every((file) => statSync(file).mtimeMs <= builtAt);
  return { sources, list, fresh };
}
