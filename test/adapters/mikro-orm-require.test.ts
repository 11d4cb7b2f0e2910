import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';

const root = resolve(new URL('../..', import.meta.url).pathname);

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (/\.(ts|mts|js|mjs)$/.test(entry.name)) yield path;
  }
}

/**
 * The MikroORM packages a file loads with an ES `import` (static, dynamic or re-export), `import type`
 * aside. Each such import of a CommonJS package makes node lex every file it re-exports at start.
 */
export function mikroOrmValueImports(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/\b(import|export)(\s+type)?\b[^;'"]*?\bfrom\s*['"](@mikro-orm\/[^'"]+)['"]/g)) if (match[2] === undefined) found.push(match[3]!);
  for (const match of text.matchAll(/\bimport\s*\(\s*['"](@mikro-orm\/[^'"]+)['"]\s*\)/g)) found.push(match[1]!);
  return found;
}

/** Where an ES import of MikroORM is fine: the migrations, loaded only when one is pending. */
const MIGRATION_ONLY = (file: string, specifier: string): boolean =>
  specifier === '@mikro-orm/migrations' && (file.startsWith('adapters/mikro-orm/migrations/') || file === 'adapters/mikro-orm/migrate.ts' || file === 'src/migrate-cli.ts');

describe('MikroORM is required, not imported, on the start path (docs/benchmarks.md, cold start)', () => {
  it('no file of adapters/ or src/ imports a MikroORM package as a value, but the migrations', () => {
    const offending: string[] = [];
    for (const tree of ['adapters', 'src']) {
      for (const path of sources(join(root, tree))) {
        const file = relative(root, path);
        for (const specifier of mikroOrmValueImports(readFileSync(path, 'utf8'))) if (!MIGRATION_ONLY(file, specifier)) offending.push(`${file}: ${specifier}`);
      }
    }
    assert.deepEqual(offending, [], 'load it through adapters/mikro-orm/packages.ts (require) instead');
  });

  it('the check tells value imports from type imports', () => {
    assert.deepEqual(mikroOrmValueImports(`import { MikroORM } from '@mikro-orm/postgresql';`), ['@mikro-orm/postgresql']);
    assert.deepEqual(mikroOrmValueImports(`import {\n  defineEntity,\n  p,\n} from '@mikro-orm/core';`), ['@mikro-orm/core']);
    assert.deepEqual(mikroOrmValueImports(`const { Migrator } = await import('@mikro-orm/migrations');`), ['@mikro-orm/migrations']);
    assert.deepEqual(mikroOrmValueImports(`export { EntitySchema } from '@mikro-orm/core';`), ['@mikro-orm/core']);
    assert.deepEqual(mikroOrmValueImports(`import type { MikroORM } from '@mikro-orm/postgresql';\nimport type * as Core from '@mikro-orm/core';`), []);
  });

  it('the packages load through require, with the classes the ORM is opened with', async () => {
    const { core, postgresql } = await import('../../adapters/mikro-orm/packages.ts');
    assert.equal(typeof postgresql.MikroORM.init, 'function');
    assert.equal(typeof core.defineEntity, 'function');
  });
});
