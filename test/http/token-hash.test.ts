import assert from 'node:assert/strict';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { describe, it } from 'node:test';
import { tokenHash } from '../../src/identity/authenticate.ts';

const crypto = createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto');

/**
 * Issue 28: every authenticated request hashes its token. node's one-shot `crypto.hash` gives the
 * same SHA-256 hex as a Hash object (`createHash(...).update(...).digest('hex')`), without making one.
 */
describe('token hash', () => {
  const tokens = ['token-alice', 'a', 'x'.repeat(512), 'ünïcødé-✓-😀', 'A0._~+/=-'];

  it('is the SHA-256 hex of the token as UTF-8', () => {
    for (const token of tokens) assert.equal(tokenHash(token), crypto.createHash('sha256').update(token, 'utf8').digest('hex'), token);
    assert.equal(tokenHash('token-alice'), 'c26a7f01074b72beff2295b5cb02eb0b0fa871f4aca30367c51ffcd0c68d4832');
  });

  it('builds no Hash object where node has the one-shot digest', { skip: typeof crypto.hash !== 'function' && 'node before 20.12' }, () => {
    const createHash = crypto.createHash;
    let made = 0;
    crypto.createHash = ((...args: Parameters<typeof createHash>) => {
      made += 1;
      return createHash(...args);
    }) as typeof createHash;
    syncBuiltinESMExports();
    try {
      for (const token of tokens) tokenHash(token);
    } finally {
      crypto.createHash = createHash;
      syncBuiltinESMExports();
    }
    assert.equal(made, 0);
  });
});
