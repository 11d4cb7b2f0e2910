import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { EMBEDDED_POOL_SIZE, EMBEDDED_SETTINGS, EMBEDDED_V8_FLAGS, embeddedPostgres, MEMORY_DATA_DIR, startEmbeddedPostgres } from '../../adapters/embedded/pglite-server.ts';
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

  it('runs with its own settings (small shared memory, cleared at every start), given at start: the data dir\'s files are not changed', { timeout: 60_000 }, async () => {
    assert.deepEqual(EMBEDDED_SETTINGS, { shared_buffers: '32MB', max_connections: '10' });
    const dataDir = join(dir, 'settings');
    for (const [label, at] of [['a fresh dir', dataDir], ['a reopened dir', dataDir], ['memory', MEMORY_DATA_DIR]] as const) {
      const db = await startEmbeddedPostgres({ dataDir: at });
      const client = new pg.Client({ connectionString: db.url });
      try {
        await client.connect();
        for (const [name, value] of Object.entries(EMBEDDED_SETTINGS)) {
          const { rows } = await client.query('select current_setting($1) as value, (select source from pg_settings where name = $1) as source', [name]);
          assert.deepEqual(rows[0], { value, source: 'command line' }, `${label}: ${name}`);
        }
      } finally {
        await client.end();
        await db.close();
      }
    }
    // PostgreSQL's own defaults stay in the files: a bare PGlite opening the dir finds them.
    assert.match(readFileSync(join(dataDir, 'postgresql.conf'), 'utf8'), /^shared_buffers = 128MB/m);
  });

  it('limits V8\'s WebAssembly tier-up to one background thread, set before the first database thread starts', () => {
    // V8 has no reader of its flags: what is checked is that they are set, and set before the thread that compiles PGlite.
    assert.deepEqual(EMBEDDED_V8_FLAGS, ['--wasm-num-compilation-tasks=1']);
    const server = readFileSync(new URL('../../adapters/embedded/pglite-server.ts', import.meta.url), 'utf8');
    const start = server.indexOf('export function embeddedPostgres(');
    const flags = server.indexOf('setEmbeddedFlags();', start);
    assert.ok(start >= 0 && flags > start, 'embeddedPostgres sets the flags');
    assert.ok(flags < server.indexOf('serve(options', start), 'before it starts the database thread');
    assert.match(server, /for \(const flag of EMBEDDED_V8_FLAGS\) setFlagsFromString\(flag\);/);
  });

  it('the database thread keeps its event loop awake while PGlite opens (else Node waits for the tier-up compile at each idle turn)', () => {
    const thread = readFileSync(new URL('../../adapters/embedded/pglite-thread.mjs', import.meta.url), 'utf8');
    const awake = thread.indexOf('setTimeout(');
    const open = thread.indexOf('PGlite.create(');
    assert.ok(awake >= 0 && awake < open, 'a timer is set before PGlite.create');
    assert.ok(thread.indexOf('clearTimeout(') > open, 'and cleared once it has opened');
  });
});
