import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, resolve } from 'node:path';
import { describe, it } from 'node:test';

const root = resolve(new URL('..', import.meta.url).pathname);

/**
 * What counts as a path of this repository: something under one of its top folders, or one of its top-level
 * files, written from the root (`./core/runs/` in a code sample too). A compiled file, `dist/<path>.js`, names
 * its source, `<path>.ts` (or `.tsx`, `.mjs`, `.js`), which must exist. Anything else a doc names in backticks
 * (an environment variable, a package like `@xmpp/client`, the rest of `dist/` or `.data`, which a build or a
 * start makes, `/etc/...`, `../shared/...`) is not checked.
 */
const TOP_FOLDERS = ['domain', 'ports', 'core', 'adapters', 'src', 'client', 'test', 'bench', 'docs', 'deploy', 'scripts', '.ci'];
const TOP_FILES = ['package.json', 'package-lock.json', 'tsconfig.json', 'Dockerfile', 'README.md', '.dockerignore', '.gitignore'];
const COMPILED = /^dist\/((?:[\w.@-]+\/)*[\w.@-]+)\.js$/;
const PATH = new RegExp(`^(?:(?:${TOP_FOLDERS.map((f) => f.replace('.', '\\.')).join('|')})(?:/[\\w.@-]*)*|${TOP_FILES.map((f) => f.replace('.', '\\.')).join('|')})$`);

/** Paths a doc tells the reader to make, so not in a clone: the world file compose mounts (docs/deploy.md). */
const MADE_BY_THE_READER = new Set(['deploy/world.json']);

/** Whether a named path exists: a compiled file's source, or the path itself. */
function exists(path: string): boolean {
  const compiled = COMPILED.exec(path);
  if (compiled === null) return existsSync(join(root, path));
  return ['.ts', '.tsx', '.mjs', '.js'].some((ext) => existsSync(join(root, compiled[1]! + ext)));
}

/** A repository path as written (`src/app.ts`, `core/runs/`, `src/app.ts:12`), normalised; null when the token is not one. */
function asPath(token: string): string | null {
  // Quotes, brackets and sentence punctuation around a token; a line number after it.
  const bare = token.replace(/^[("'[]+/, '').replace(/[)"',;:.\]]+$/, '').replace(/:\d+(?::\d+)?$/, '').replace(/^\.\//, '');
  // A glob (`src/console-ui/*.tsx`) or a placeholder (`docs/<name>.md`, `$DATA_DIR/...`) is a pattern, not a path.
  if (/[*<>{}$?]/.test(bare)) return null;
  if (COMPILED.test(bare)) return bare;
  return PATH.test(bare) ? bare.replace(/\/+$/, '') || bare : null;
}

/**
 * Every repository path a markdown file names, each with the line it is on: tokens of inline code spans and of
 * fenced code blocks that are repository paths (relative to the root), and markdown link targets (relative to the
 * file, as a renderer resolves them; URLs, anchors and targets outside the repository are skipped).
 */
export function namedPaths(text: string, file: string): { path: string; line: number }[] {
  const found: { path: string; line: number }[] = [];
  const lines = text.split('\n');
  let fenced = false;
  lines.forEach((raw, index) => {
    const line = index + 1;
    if (/^\s*(```|~~~)/.test(raw)) {
      fenced = !fenced;
      return;
    }
    const tokensOf = (chunk: string) => {
      for (const token of chunk.split(/\s+/)) {
        const path = asPath(token);
        if (path !== null) found.push({ path, line });
      }
    };
    if (fenced) {
      tokensOf(raw);
      return;
    }
    for (const span of raw.matchAll(/(`+)([^`]+?)\1/g)) tokensOf(span[2]!);
    for (const link of raw.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = link[1]!.split('#')[0]!;
      if (target === '' || /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('/')) continue;
      const inRepo = normalize(join(dirname(file), target));
      if (inRepo.startsWith('..')) continue;
      const path = asPath(inRepo);
      if (path !== null) found.push({ path, line });
    }
  });
  return found;
}

/** The paths `text` (the markdown file `file`) names that do not exist, each as `file:line names path`. */
export function missingPaths(text: string, file: string): string[] {
  return namedPaths(text, file)
    .filter(({ path }) => !MADE_BY_THE_READER.has(path) && !exists(path))
    .map(({ path, line }) => `${file}:${line} names ${path}`);
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces made hyphens; a repeat gets `-1`, `-2`. */
export function anchors(text: string): Set<string> {
  const found = new Set<string>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.+?)\s*#*$/.exec(line);
    if (heading === null) continue;
    const slug = heading[1]!.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    let unique = slug;
    for (let n = 1; found.has(unique); n += 1) unique = `${slug}-${n}`;
    found.add(unique);
  }
  return found;
}

/** The links of `text` (the markdown file `file`) to an anchor of a markdown file that has no such heading. */
export function missingAnchors(text: string, file: string, read: (path: string) => string | null): string[] {
  const missing: string[] = [];
  text.split('\n').forEach((line, index) => {
    for (const link of line.matchAll(/\]\(([^)\s#]*)#([^)\s]+)\)/g)) {
      const target = link[1] === '' ? file : normalize(join(dirname(file), link[1]!));
      if (/^[a-z][a-z0-9+.-]*:/i.test(link[1]!) || !target.endsWith('.md')) continue;
      const targetText = read(target);
      if (targetText !== null && !anchors(targetText).has(decodeURIComponent(link[2]!))) missing.push(`${file}:${index + 1} links ${target}#${link[2]}`);
    }
  });
  return missing;
}

const docs = ['README.md', ...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

describe('the paths the docs name exist', () => {
  it('every repository path in README.md and docs/*.md names a file or folder of the repository', () => {
    const missing: string[] = [];
    let checked = 0;
    for (const doc of docs) {
      const text = readFileSync(join(root, doc), 'utf8');
      checked += namedPaths(text, doc).length;
      missing.push(...missingPaths(text, doc));
    }
    assert.deepEqual(missing, []);
    assert.ok(checked > 100, `only ${checked} paths found: the checker has stopped seeing them`);
  });

  it('every link to a heading of README.md or docs/*.md finds that heading', () => {
    const read = (path: string) => (existsSync(join(root, path)) ? readFileSync(join(root, path), 'utf8') : null);
    assert.deepEqual(docs.flatMap((doc) => missingAnchors(read(doc)!, doc, read)), []);
  });

  it('the checker catches', () => {
    const text = [
      'Start at `src/app.ts:12` and `core/runs/`; `npx tsx --test test/faults/x.test.ts` runs one.',
      'See [the API](api.md#routes), [its folder](./screenshots), [the README](../README.md) and [a site](https://example.com/docs/x.md).',
      'Not paths: `DATA_DIR`, `@xmpp/client`, `src/console-ui/*.tsx`, `docs/<name>.md`, `/etc/hosts`, `dist/assets/console.css`, [shared](../../shared/CONTRACT.md), `console/<thread id>`.',
      '```sh',
      'bash .ci/run   # then (deploy/compose.yaml),',
      "import { x } from './core/runs/directives.ts';",
      '```',
      'A `Dockerfile` and `package.json`; `node dist/src/main.js` and `dist/assets/`.',
    ].join('\n');
    assert.deepEqual(namedPaths(text, 'docs/example.md'), [
      { path: 'src/app.ts', line: 1 },
      { path: 'core/runs', line: 1 },
      { path: 'test/faults/x.test.ts', line: 1 },
      { path: 'docs/api.md', line: 2 },
      { path: 'docs/screenshots', line: 2 },
      { path: 'README.md', line: 2 },
      { path: '.ci/run', line: 5 },
      { path: 'deploy/compose.yaml', line: 5 },
      { path: 'core/runs/directives.ts', line: 6 },
      { path: 'Dockerfile', line: 8 },
      { path: 'package.json', line: 8 },
      { path: 'dist/src/main.js', line: 8 },
    ]);
    // From the README, a link is relative to the root.
    assert.deepEqual(namedPaths('[x](docs/api.md) [y](../shared/STYLE.md)', 'README.md'), [{ path: 'docs/api.md', line: 1 }]);
    // A path that does not exist is reported with its line; one that does is not.
    assert.deepEqual(missingPaths('Read `package.json` and `dist/src/main.js`,\nthen `core/runs/no-such-file.ts`, `dist/src/no-such-cli.js` and [it](no-such-doc.md).', 'docs/example.md'), [
      'docs/example.md:2 names core/runs/no-such-file.ts',
      'docs/example.md:2 names dist/src/no-such-cli.js',
      'docs/example.md:2 names docs/no-such-doc.md',
    ]);
    // Anchors: GitHub's slugs, repeats numbered; a link to a heading that is not there is reported.
    assert.deepEqual([...anchors('# Operations\n## The real-agents tier: `npm run test:agents`\n## Limits\n```\n# not a heading\n```\n## Limits')], [
      'operations', 'the-real-agents-tier-npm-run-testagents', 'limits', 'limits-1',
    ]);
    const pages: Record<string, string> = { 'docs/ops.md': '# Ops\n## Limits\n', 'docs/example.md': '## Here\n[a](ops.md#limits) [b](ops.md#no-such) [c](#here) [d](#gone) [e](https://x.org/y.md#z)' };
    assert.deepEqual(missingAnchors(pages['docs/example.md']!, 'docs/example.md', (path) => pages[path] ?? null), [
      'docs/example.md:2 links docs/ops.md#no-such',
      'docs/example.md:2 links docs/example.md#gone',
    ]);
  });
});
