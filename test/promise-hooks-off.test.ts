import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { it } from 'node:test';

/**
 * No promise hook on the service's path (issue 28): MikroORM's `em.transactional` and `em.flush` run in an
 * AsyncLocalStorage, and once one has run Node keeps a promise hook on for the whole process, about
 * doubling every await's cost (a world import at start used to). A process of its own, as the test
 * runner turns hooks on itself: it starts the service on embedded PGlite, imports a world, runs a
 * directive and a read, then looks.
 */
it('a start with a world import, a directive and a read turn no promise hook on', { timeout: 120_000 }, async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'test/support/promise-hooks-probe.ts'], { timeout: 110_000 });
  const seen = JSON.parse(stdout.trim().split('\n').at(-1)!) as { before: number; after: number; posted: number; read: number };
  assert.equal(seen.posted, 202);
  assert.equal(seen.read, 200);
  assert.equal(seen.before, 0, 'no hook before the service started');
  assert.equal(seen.after, 0, 'a promise reaction has an async id: a promise hook was turned on (an AsyncLocalStorage ran)');
});
