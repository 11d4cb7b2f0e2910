import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { safeError } from '../src/logging.ts';

describe('error logging', () => {
  it("keeps a database error's reason and drops its statement, where the driver inlined the values", () => {
    const error = Object.assign(
      new Error(`insert into "installations" ("headers") values ('{"Authorization":"Bearer provider-secret"}') - duplicate key value violates unique constraint`),
      { code: '23505' },
    );
    const logged = JSON.stringify(safeError(error));
    assert.ok(!logged.includes('provider-secret'));
    assert.match(logged, /duplicate key value/);
    assert.match(logged, /23505/);
  });

  it('logs other errors in full, with their stack', () => {
    const logged = safeError(new Error('a bug')) as { message: string; stack: string };
    assert.equal(logged.message, 'a bug');
    assert.match(logged.stack, /logging.test/);
  });
});
