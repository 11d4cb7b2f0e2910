import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { EMBEDDED_POOL_SIZE, embeddedPostgres, startEmbeddedPostgres } from '../../adapters/embedded/pglite-server.ts';
import { createMikroOrmStorage } from '../../adapters/mikro-orm/storage.ts';

// A start makes the ORM ready while the embedded database opens (docs/benchmarks.md, second start): the
// database serves on a Unix socket whose URL is known before it opens, and the ORM connects once it serves.

/** The directory a socket URL names as its host. */
const socketDirOf = (url: string) => decodeURIComponent(new URL(url).hostname);

describe('the embedded database, started with its URL known at once', () => {
  const dir = mkdtempSync(join(tmpdir(), 'console-embedded-start-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('answers its URL before it serves; the ORM made ready with it connects once it serves; close removes the socket', { timeout: 60_000 }, async () => {
    const start = embeddedPostgres({ dataDir: join(dir, 'data') });
    let served = false;
    void start.started.then(() => (served = true), () => {});
    const socketDir = socketDirOf(start.url);
    assert.equal(served, false);
    assert.ok(existsSync(socketDir), 'the socket directory exists from the start');
    // PGlite trusts every connection: only the service's own user may reach its socket.
    assert.equal(statSync(socketDir).mode & 0o777, 0o700);
    assert.ok(join(socketDir, '.s.PGSQL.5432').length < 100, 'a socket path within what every system allows');
    const storage = await createMikroOrmStorage({ clientUrl: start.url, pool: EMBEDDED_POOL_SIZE, reachable: start.started });
    try {
      assert.equal(served, true);
      assert.equal(await storage.ready(), true);
      assert.equal(await storage.isEmpty(), true);
    } finally {
      await storage.close();
      await (await start.started).close();
    }
    assert.equal(existsSync(socketDir), false, 'the socket directory is removed on close');
  });

  it('a database that cannot start fails the ORM\'s open with its own cause, and leaves no socket directory', { timeout: 60_000 }, async () => {
    const held = await startEmbeddedPostgres({ dataDir: join(dir, 'held') });
    try {
      const start = embeddedPostgres({ dataDir: join(dir, 'held') });
      await assert.rejects(createMikroOrmStorage({ clientUrl: start.url, pool: EMBEDDED_POOL_SIZE, reachable: start.started }), /in use|lock/i);
      await assert.rejects(start.started);
      assert.equal(existsSync(socketDirOf(start.url)), false);
    } finally {
      await held.close();
    }
  });

  it('the database thread keeps its event loop awake while PGlite opens (else Node waits for the tier-up compile at each idle turn)', () => {
    const thread = readFileSync(new URL('../../adapters/embedded/pglite-thread.mjs', import.meta.url), 'utf8');
    const awake = thread.indexOf('setTimeout(');
    const open = thread.indexOf('PGlite.create(');
    assert.ok(awake >= 0 && awake < open, 'a timer is set before PGlite.create');
    assert.ok(thread.indexOf('clearTimeout(') > open, 'and cleared once it has opened');
  });
});
