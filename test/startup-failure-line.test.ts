import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isConnectionError } from '../adapters/mikro-orm/sql.ts';
import { describeStartupFailure } from '../src/startup-failure.ts';

const config = { host: '127.0.0.1', port: 8080 };
/** An error as node raises it for a system call. */
const systemError = (code: string, syscall: string, message: string) => Object.assign(new Error(message), { code, syscall });

// The embedded database is reached over a Unix socket: one that is gone fails `connect` with ENOENT.
describe('a database socket that is gone', () => {
  it('is an outage on a statement (503) and an unreachable database at start, one line', () => {
    const gone = systemError('ENOENT', 'connect', 'connect ENOENT /tmp/console-pg-x/.s.PGSQL.5432');
    assert.equal(isConnectionError(gone), true);
    assert.deepEqual(describeStartupFailure(gone, config), { line: 'Cannot reach the database: connect ENOENT /tmp/console-pg-x/.s.PGSQL.5432', known: true });
  });

  it('a missing file elsewhere is neither: a bug, said as one', () => {
    const missing = systemError('ENOENT', 'open', "ENOENT: no such file or directory, open 'world.json'");
    assert.equal(isConnectionError(missing), false);
    assert.equal(describeStartupFailure(missing, config).known, false);
  });
});
