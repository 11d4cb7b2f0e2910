import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
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
