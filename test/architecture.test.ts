import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';

const root = resolve(new URL('..', import.meta.url).pathname);
const LAYERS = ['domain', 'ports', 'core', 'adapters', 'client', 'src'] as const;
type Layer = (typeof LAYERS)[number];

/** What each layer may import: the dependency rule points inward. */
const ALLOWED: Record<Layer, { layers: readonly Layer[]; packages: boolean }> = {
  domain: { layers: ['domain'], packages: false },
  ports: { layers: ['domain', 'ports'], packages: false },
  // The use cases: the domain and the ports only, no package and no node: module, so any runtime can embed them.
  core: { layers: ['domain', 'ports', 'core'], packages: false },
  adapters: { layers: ['domain', 'ports', 'adapters'], packages: true },
  // The generated API client: packages only, so any runtime with fetch can take it alone.
  client: { layers: ['client'], packages: true },
  src: { layers: ['domain', 'ports', 'core', 'adapters', 'client', 'src'], packages: true },
};

function* sources(dir: string): Generator<string> {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (/\.(ts|tsx|mts|js|mjs)$/.test(entry.name)) yield path;
  }
}

/** Every module specifier a file names: static imports, re-exports and dynamic imports. */
function specifiers(text: string): string[] {
  const found: string[] = [];
  const patterns = [/\bfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*['"]([^'"]+)['"]/g, /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g, /\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/g];
  for (const pattern of patterns) for (const match of text.matchAll(pattern)) found.push(match[1]!);
  return found;
}

const layerOf = (file: string): Layer | null => {
  const top = relative(root, file).split('/')[0];
  return (LAYERS as readonly string[]).includes(top!) ? (top as Layer) : null;
};

/** Every source file of the layers, by its path from the root ('core/runs/kick.ts'), with its text. */
function layerSources(): Map<string, string> {
  const files = new Map<string, string>();
  for (const layer of LAYERS) for (const file of sources(join(root, layer))) files.set(relative(root, file), readFileSync(file, 'utf8'));
  return files;
}

/**
 * Who imports whom among `files` (paths from the root, with their text): every relative specifier
 * that names one of them, whether a static import, an `import type`, a re-export or a dynamic import.
 */
function importGraph(files: ReadonlyMap<string, string>): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const [file, text] of files) {
    const targets = specifiers(text)
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => posix.normalize(posix.join(posix.dirname(file), spec)))
      .filter((target) => files.has(target));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/**
 * The import circles of a graph: its strongly connected components of more than one file (or a file
 * that imports itself), each sorted, leaving out a circle whose files all belong to one of `excused`.
 */
function importCircles(graph: ReadonlyMap<string, readonly string[]>, excused: readonly (readonly string[])[] = []): string[][] {
  // Tarjan's algorithm: one depth-first walk; a component is closed when its root is left.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    components.push(component.sort());
  };
  for (const file of [...graph.keys()].sort()) if (!index.has(file)) visit(file);
  return components
    .filter((component) => component.length > 1 || (graph.get(component[0]!) ?? []).includes(component[0]!))
    .filter((component) => !excused.some((group) => component.every((file) => group.includes(file))))
    .sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
}

/** Every import from a file under adapters/<x>/ of a file under adapters/<y>/, another adapter. */
function crossAdapterImports(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const adapterOf = (file: string): string | null => /^adapters\/([^/]+)\//.exec(file)?.[1] ?? null;
  const found: string[] = [];
  for (const [file, targets] of graph) {
    const from = adapterOf(file);
    if (from === null) continue;
    for (const target of targets) {
      const to = adapterOf(target);
      if (to !== null && to !== from) found.push(`${file} imports ${target}`);
    }
  }
  return found.sort();
}

describe('the dependency rule', () => {
  const violations: string[] = [];
  for (const layer of LAYERS) {
    for (const file of sources(join(root, layer))) {
      if (file.endsWith('src/sandbox/proxy.js')) continue; // browser script, served as a file
      for (const spec of specifiers(readFileSync(file, 'utf8'))) {
        const rule = ALLOWED[layer];
        if (spec.startsWith('.')) {
          const target = layerOf(resolve(dirname(file), spec));
          if (target === null || !rule.layers.includes(target)) violations.push(`${relative(root, file)} imports ${spec}`);
        } else if (!rule.packages) {
          violations.push(`${relative(root, file)} imports ${spec}`);
        }
      }
    }
  }

  it('domain imports only domain (no packages, not even node: modules); ports only domain; core only domain, ports and core', () => {
    assert.deepEqual(violations, []);
  });

  it('core names no Node global (process, Buffer, NodeJS types): it runs wherever JavaScript does', () => {
    const found: string[] = [];
    for (const file of sources(join(root, 'core'))) {
      const text = readFileSync(file, 'utf8');
      for (const name of ['process.', 'Buffer', 'NodeJS.', '__dirname', 'require(']) if (text.includes(name)) found.push(`${relative(root, file)}: ${name}`);
    }
    assert.deepEqual(found, []);
  });

  it('the checker catches a violation', () => {
    assert.deepEqual(specifiers("import x from 'node:fs';\nexport * from '../src/app.ts';\nawait import('pino');"), [
      'node:fs',
      '../src/app.ts',
      'pino',
    ]);
  });

  it('the package exports the domain core, and it loads on its own', async () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    assert.equal(pkg.exports['./domain'], './domain/index.ts');
    const domain = await import('../domain/index.ts');
    assert.equal(typeof domain.buildCsp, 'function');
    assert.equal(typeof domain.parseSandboxPolicyText, 'function');
    assert.equal(typeof domain.requestSurface, 'function');
  });
});

describe('no import circles, and no adapter imports another', () => {
  const graph = importGraph(layerSources());

  it('no file of domain, ports, core, adapters, client or src is part of an import circle (import type counts)', () => {
    assert.ok(graph.size > 100, `read ${graph.size} files`);
    assert.deepEqual(importCircles(graph), [], 'each circle lists its files: move what they share to one of them, or to a file of its own');
  });

  it('no file under adapters/<x>/ imports a file under adapters/<y>/: what two adapters share, the composition root hands over', () => {
    assert.deepEqual(crossAdapterImports(graph), []);
  });

  it('the checker catches a circle, listing its files, whatever the kind of import', () => {
    const files = new Map([
      ['ports/a.ts', "import type { B } from './b.ts';"],
      ['ports/b.ts', "export * from '../core/c.ts';"],
      ['core/c.ts', "const a = await import('../ports/a.ts');\nimport { d } from './d.ts';"],
      ['core/d.ts', "import { e } from './missing.ts';\nimport pino from 'pino';"],
      ['core/e.ts', "import { e } from './e.ts';"],
    ]);
    const small = importGraph(files);
    assert.deepEqual(small.get('ports/a.ts'), ['ports/b.ts']);
    assert.deepEqual(small.get('core/d.ts'), [], 'a package, or a file that is not there, is no edge');
    assert.deepEqual(importCircles(small), [['core/c.ts', 'ports/a.ts', 'ports/b.ts'], ['core/e.ts']]);
    // Excused only when every file of the circle is in one excused group.
    assert.deepEqual(importCircles(small, [['core/e.ts'], ['ports/a.ts', 'ports/b.ts']]), [['core/c.ts', 'ports/a.ts', 'ports/b.ts']]);
    assert.deepEqual(importCircles(small, [['core/e.ts'], ['core/c.ts', 'ports/a.ts', 'ports/b.ts']]), []);
  });

  it('the checker catches an adapter importing another, and lets an adapter import itself, the ports and the domain', () => {
    const small = new Map([
      ['adapters/postgres/event-bus.ts', ['adapters/memory/event-bus.ts', 'adapters/postgres/notify-connection.ts', 'ports/event-bus.ts']],
      ['adapters/memory/event-bus.ts', ['ports/event-bus.ts', 'domain/events.ts']],
      ['src/main.ts', ['adapters/memory/event-bus.ts', 'adapters/postgres/event-bus.ts']],
    ]);
    assert.deepEqual(crossAdapterImports(small), ['adapters/postgres/event-bus.ts imports adapters/memory/event-bus.ts']);
  });
});
