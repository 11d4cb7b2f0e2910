import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseWorld } from '../src/world/load.ts';
import { WORLD_JSON_SCHEMA_PATH, worldJsonSchema } from '../src/world/json-schema.ts';

const root = new URL('..', import.meta.url);
/** `npm run world:schema` (UPDATE_WORLD_SCHEMA=1): writes the committed JSON Schema instead of comparing. */
const UPDATE = process.env.UPDATE_WORLD_SCHEMA === '1';
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

describe('the world file\'s JSON Schema (docs/world.schema.json)', () => {
  it('is what the loader\'s valibot schema generates today (npm run world:schema regenerates it)', () => {
    const generated = `${JSON.stringify(worldJsonSchema(), null, 2)}\n`;
    if (UPDATE) writeFileSync(new URL(WORLD_JSON_SCHEMA_PATH, root), generated);
    assert.equal(read(WORLD_JSON_SCHEMA_PATH), generated, 'docs/world.schema.json is stale: run npm run world:schema');
  });

  it('a world file naming it in "$schema" loads (the key is the editor\'s, the loader ignores it)', () => {
    const world = { ...JSON.parse(read('src/world/demo-world.json')), $schema: '../docs/world.schema.json' };
    const loaded = parseWorld(world);
    assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.error));
  });

  it('says in words what JSON Schema cannot: a project\'s directory is absolute, its base a branch name', () => {
    const text = read(WORLD_JSON_SCHEMA_PATH);
    assert.match(text, /must be an absolute path/);
    assert.match(text, /must be a branch name/);
    assert.match(text, /"\$ref": "#\/\$defs\/Place"/);
  });
});

describe('docs/world-file.md', () => {
  const doc = read('docs/world-file.md');

  it('documents every field of the JSON Schema', () => {
    const fields = new Set<string>();
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(walk);
      if (typeof node !== 'object' || node === null) return;
      for (const [key, value] of Object.entries(node)) {
        if (key === 'properties') for (const name of Object.keys(value as object)) fields.add(name);
        walk(value);
      }
    };
    walk(worldJsonSchema());
    const missing = [...fields].filter((field) => !doc.includes(`\`${field}\``));
    assert.deepEqual(missing, []);
  });

  it('documents every prompt trigger the demo agent knows (src/demo/acp-agent.ts)', () => {
    const agent = read('src/demo/acp-agent.ts');
    const triggers = new Set([...agent.matchAll(/text\.includes\('(\[[a-z-]+\])'\)/g)].map((match) => match[1]!));
    assert.ok(triggers.has('[approval]') && triggers.has('[await-steer]'), [...triggers].join(' '));
    const missing = [...triggers].filter((trigger) => !doc.includes(`\`${trigger}\``));
    assert.deepEqual(missing, []);
  });
});
