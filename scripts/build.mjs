// Compiles the service to plain JavaScript under dist/ (one .js file per .ts file, the same tree, relative
// imports pointing at .js), so `npm start` runs node on JavaScript: no TypeScript compiled at every start,
// no loader hooks on every import. esbuild strips the types exactly as tsx does when the tests run the
// sources; `npm run typecheck` is what checks them. Every other file of the tree (the sandbox proxy script,
// the demo world, the database thread) is copied beside. Run by `npm start` when a source is newer than
// the last build (a few hundred ms); `--force` builds anyway.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist');
const stamp = join(out, '.built');
const TREES = ['domain', 'ports', 'core', 'adapters', 'src', 'client'];

function* walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else yield path;
  }
}

const sources = TREES.flatMap((tree) => [...walk(join(root, tree))]);
const builtAt = (() => {
  try {
    return statSync(stamp).mtimeMs;
  } catch {
    return -1;
  }
})();
const listed = (() => {
  try {
    return readFileSync(stamp, 'utf8');
  } catch {
    return null;
  }
})();
const list = sources.map((file) => relative(root, file)).sort().join('\n');
const fresh = builtAt >= 0 && listed === list && sources.every((file) => statSync(file).mtimeMs <= builtAt);
if (fresh && !process.argv.includes('--force')) process.exit(0);

// A relative specifier ending in .ts, in a static or dynamic import or an export-from.
const SPECIFIER = /((?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"]))(\.{1,2}\/[^'"\n]*?)\.ts\2/g;

// Imported only to build: a start whose build is fresh does not load it.
const { transform } = await import('esbuild');
// Built beside, then swapped in: a service running from dist/ never sees half a build.
const next = `${out}.next-${process.pid}`;
rmSync(next, { recursive: true, force: true });
await Promise.all(
  sources.map(async (file) => {
    const target = join(next, relative(root, file));
    mkdirSync(dirname(target), { recursive: true });
    // Browser-only sources (.tsx) reach the service only inside the bundles.
    if (file.endsWith('.tsx')) return;
    if (!file.endsWith('.ts')) return copyFileSync(file, target);
    const { code } = await transform(readFileSync(file, 'utf8'), { loader: 'ts', format: 'esm', target: 'node20', sourcefile: relative(root, file) });
    writeFileSync(target.replace(/\.ts$/, '.js'), code.replace(SPECIFIER, (_whole, lead, _quote, path) => `${lead}${path}.js${_quote}`));
  }),
);
// The browser scripts, bundled once here (src/http/browser-bundles.ts, as just compiled): served as files.
const { BUNDLES, bundle } = await import(join(next, 'src', 'http', 'browser-bundles.js'));
mkdirSync(join(next, 'assets'), { recursive: true });
for (const name of Object.keys(BUNDLES)) writeFileSync(join(next, 'assets', `${name}.js`), await bundle(root, name));
writeFileSync(join(next, '.built'), list);
rmSync(out, { recursive: true, force: true });
renameSync(next, out);
