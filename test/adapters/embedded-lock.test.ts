import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it, type TestContext } from 'node:test';
import { LOCK_FILE, LOCK_SOCKET, lockDataDir } from '../../adapters/embedded/data-dir-lock.ts';
import { EMBEDDED_POOL_SIZE, startEmbeddedPostgres } from '../../adapters/embedded/pglite-server.ts';
import { createMikroOrmStorage } from '../../adapters/mikro-orm/storage.ts';
import { F, fixtureWorld } from '../support/fixture-world.ts';
import { waitUntil } from '../support/npm-start.ts';
import { builtModule } from '../support/built.ts';

/** A process id that is not running: a short-lived child's, after it exited. */
const deadPid = (): number => spawnSync(process.execPath, ['-e', '']).pid!;

/** Whether this process may start a program in a network namespace of its own (Linux, root). */
function canUnshareNet(): boolean {
  return process.platform === 'linux' && spawnSync('unshare', ['-n', 'true']).status === 0;
}

/**
 * A holder started under `wrapper` (e.g. `unshare -n`) excludes this process; killed with SIGKILL, it
 * frees the dir at once, while it is still a zombie. The holder's parent becomes `sleep` (the shell
 * execs it), which never reaps a child: killed, the holder stays a zombie until the test ends `sleep`.
 */
async function holdKillTakeOver(t: TestContext, wrapper: readonly string[], dir?: string): Promise<void> {
  const zombieDir = dir ?? mkdtempSync(join(tmpdir(), 'console-embedded-zombie-'));
  t.after(() => rmSync(zombieDir, { recursive: true, force: true }));
  const module = builtModule('adapters/embedded/data-dir-lock.ts');
  const script = `const { lockDataDir } = await import(process.argv[1]);
    await lockDataDir(process.argv[2]); console.log(process.pid); setInterval(() => {}, 1000);`;
  const parent = spawn('sh', ['-c', '"$@" & exec sleep 30', 'sh', ...wrapper, process.execPath, '--input-type=module', '-e', script, module, zombieDir], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => parent.kill('SIGKILL'));
  const lines = createInterface({ input: parent.stdout! });
  const holder = Number((await lines[Symbol.asyncIterator]().next()).value);
  assert.ok(holder > 0, 'the holder said its pid');
  const state = (): string => {
    const stat = readFileSync(`/proc/${holder}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]!;
  };

  await assert.rejects(async () => lockDataDir(zombieDir), (error: Error) => {
    assert.ok(error.message.includes(`process ${holder}`), error.message);
    return true;
  });
  process.kill(holder, 'SIGKILL');
  await waitUntil(() => state() === 'Z', 5_000, 'the holder never became a zombie');
  const lock = await lockDataDir(zombieDir);
  assert.equal(state(), 'Z', 'still a zombie when the lock was taken');
  assert.equal(readFileSync(join(zombieDir, LOCK_FILE), 'utf8').trim(), String(process.pid));
  lock.release();
}

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
      const module = builtModule('adapters/embedded/pglite-server.ts');
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
    assert.equal(existsSync(join(dir, LOCK_SOCKET)), false, 'and removes its socket');
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

  it('a holder killed with SIGKILL frees the dir at once, while it is still a zombie; alive, it excludes', { skip: process.platform === 'linux' ? false : 'reads /proc to see the zombie', timeout: 30_000 }, async (t) => {
    await holdKillTakeOver(t, []);
  });

  // Two containers sharing one DATA_DIR volume have their own network namespaces, where the abstract
  // socket alone let both take the lock (and open PGlite on the same files).
  it('a holder in another network namespace (another container on the volume) excludes; killed, it frees the dir at once', { skip: canUnshareNet() ? false : 'needs Linux and `unshare -n` (root)', timeout: 30_000 }, async (t) => {
    await holdKillTakeOver(t, ['unshare', '-n']);
  });

  it('keeps another network namespace out of a data dir whose path is longer than a Unix socket name allows', { skip: canUnshareNet() ? false : 'needs Linux and `unshare -n` (root)', timeout: 30_000 }, async (t) => {
    const deep = mkdtempSync(join(tmpdir(), 'console-embedded-long-'));
    t.after(() => rmSync(deep, { recursive: true, force: true }));
    const longDir = join(deep, 'd'.repeat(120));
    mkdirSync(longDir);
    assert.ok(Buffer.byteLength(join(longDir, LOCK_SOCKET)) > 107, 'longer than sun_path holds');
    await holdKillTakeOver(t, ['unshare', '-n'], longDir);
  });
});
