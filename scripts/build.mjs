// Compiles the service to plain JavaScript under dist/ (one .js file per .ts file, the same tree, relative
// imports pointing at .js), so `npm start` runs node on JavaScript: no TypeScript compiled at every start,
// no loader hooks on every import. esbuild strips the types exactly as tsx does when the tests run the
// sources; `npm run typecheck` is what checks them. Every other file of the tree (the sandbox proxy script,
// the demo world, the database thread) is copied beside. The entry, dist/src/main.js, is then a bundle of
// the service with its JavaScript dependencies (scripts/bundle.mjs). Run by `npm start` (scripts/start.mjs)
// when a source is newer than the last build (a few seconds); `--force` builds anyway.
import { copyFileSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildState } from './freshness.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist');
const { sources, list, fresh } = buildState(root, out);
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
// The service's entry and its dependencies as one bundle (scripts/bundle.mjs): dist/src/main.js.
const { bundleService } = await import('./bundle.mjs');
await bundleService(root, next);
writeFileSync(join(next, '.built'), list);
rmSync(out, { recursive: true, force: true });
renameSync(next, out);
