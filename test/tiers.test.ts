import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
// @ts-expect-error: a plain module of the runner, without types
import { FULL_ONLY, BOTH_TIERS, tierOf } from './runner/tiers.mjs';

const root = new URL('..', import.meta.url).pathname;

function* testFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* testFiles(path);
    else if (entry.name.endsWith('.test.ts')) yield relative(root, path);
  }
}

describe('the test tiers (test/runner/tiers.mjs)', () => {
  it('name only files and folders that exist', () => {
    const missing = [...Object.keys(FULL_ONLY), ...BOTH_TIERS].filter((path: string) => !existsSync(join(root, path)));
    assert.deepEqual(missing, []);
  });

  it('run every file of the storage matrix in the full tier too, so no backend is dropped from CI', () => {
    const dropped: string[] = [];
    for (const file of testFiles(join(root, 'test'))) {
      const uses = /\bstorageKinds\(|\bdatabaseSkip\(|\bdatabasesInTier\(/.test(readFileSync(join(root, file), 'utf8'));
      if (uses && tierOf(file) === 'fast') dropped.push(file);
    }
    assert.deepEqual(dropped, []);
  });

  it('sort a file by its path', () => {
    assert.equal(tierOf('test/faults/anything-new.test.ts'), 'full');
    assert.equal(tierOf('test/domain/csp.test.ts'), 'fast');
    assert.equal(tierOf('test/http/queue.test.ts'), 'both');
  });
});
