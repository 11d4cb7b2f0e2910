import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { LOCK_FILE } from '../../adapters/embedded/data-dir-lock.ts';
import { EMBEDDED_POOL_SIZE, startEmbeddedPostgres } from '../../adapters/embedded/pglite-server.ts';
import { createMikroOrmStorage } from '../../adapters/mikro-orm/storage.ts';
import { F, fixtureWorld } from '../support/fixture-world.ts';

/** A process id that is not running: a short-lived child's, after it exited. */
const deadPid = (): number => spawnSync(process.execPath, ['-e', '']).pid!;

describe('the embedded data dir lock', () => {
  const dir = mkdtempSync(join(tmpdir(), 'console-embedded-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a second start on the same dir, naming it; after close it starts again', async () => {
    const first = await startEmbeddedPostgres({ dataDir: dir });
    try {
      await assert.rejects(startEmbeddedPostgres({ dataDir: dir }), (error: Error) => {
        assert.ok(error.message.includes(dir), error.message);
        assert.match(error.message, /in use/);
        return true;
      });
      assert.equal(readFileSync(join(dir, LOCK_FILE), 'utf8').trim(), String(process.pid));
    } finally {
      await first.close();
    }
    const again = await startEmbeddedPostgres({ dataDir: dir });
    await again.close();
  });

  it('refuses a second process, naming the dir and the holder', async () => {
    const server = await startEmbeddedPostgres({ dataDir: dir });
    try {
      const module = new URL('../../adapters/embedded/pglite-server.ts', import.meta.url).href;
      const script = `const { startEmbeddedPostgres } = await import(process.argv[1]);
        try { await startEmbeddedPostgres({ dataDir: process.argv[2] }); process.exit(0); }
        catch (error) { console.error(error.message); process.exit(3); }`;
      const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, module, dir], { encoding: 'utf8' });
      assert.equal(child.status, 3, child.stderr);
      assert.ok(child.stderr.includes(dir), child.stderr);
      assert.ok(child.stderr.includes(`process ${process.pid}`), child.stderr);
    } finally {
      await server.close();
    }
  });

  it('takes over the lock a dead process left', async () => {
    writeFileSync(join(dir, LOCK_FILE), `${deadPid()}\n`);
    const server = await startEmbeddedPostgres({ dataDir: dir });
    assert.equal(readFileSync(join(dir, LOCK_FILE), 'utf8').trim(), String(process.pid));
    await server.close();
    assert.equal(existsSync(join(dir, LOCK_FILE)), false, 'close releases the lock');
  });

  it('keeps what was written across a close and a reopen', async () => {
    const open = async () => {
      const server = await startEmbeddedPostgres({ dataDir: dir });
      const storage = await createMikroOrmStorage({ clientUrl: server.url, pool: EMBEDDED_POOL_SIZE });
      return { storage, close: async () => { await storage.close(); await server.close(); } };
    };
    const first = await open();
    await first.storage.importWorld(fixtureWorld());
    await first.close();
    const second = await open();
    try {
      assert.equal((await second.storage.threads.findAccessible('alice', F.root))?.row.title, 'Fix the build');
    } finally {
      await second.close();
    }
  });
});
