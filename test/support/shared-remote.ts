import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fixtureWorld } from './fixture-world.ts';
import { gitRepository } from './git-repo.ts';
import { createScratchDatabase } from './scratch-database.ts';

/** What {@link sharedRemoteWorld} made: the bare repository, and the environment of a service process (its DATA_DIR apart). */
export interface SharedRemoteWorld {
  /** The bare repository every instance reaches as `file://<remote>`. */
  readonly remote: string;
  readonly env: Record<string, string>;
  /** A new directory of the test's, removed after it. */
  readonly tempDir: (prefix: string) => string;
}

/**
 * A repository project reached by a URL, as the tests of more than one machine share it (issue 40): a bare repository
 * made from a fresh one, a scratch database on the PostgreSQL at `url`, and a world file with the project `repo-web`
 * on `file://<remote>` (users alice and bob). Everything made is removed after the test.
 */
export async function sharedRemoteWorld(t: TestContext, url: string, prefix: string): Promise<SharedRemoteWorld> {
  const made: string[] = [];
  t.after(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const tempDir = (suffix: string) => {
    const dir = mkdtempSync(join(tmpdir(), `${prefix}${suffix}`));
    made.push(dir);
    return dir;
  };
  const source = gitRepository(prefix);
  made.push(source);
  const remote = join(tempDir('remote-'), 'shared.git');
  execFileSync('git', ['clone', '--bare', '--quiet', source, remote]);
  const scratch = await createScratchDatabase(url);
  t.after(() => scratch.drop());
  const world = join(tempDir('world-'), 'world.json');
  const users = [{ id: 'alice', name: 'Alice', token: 'token-alice' }, { id: 'bob', name: 'Bob', token: 'token-bob' }];
  const fixture = fixtureWorld();
  writeFileSync(world, JSON.stringify({ ...fixture, users, projects: [...fixture.projects, { name: 'repo-web', repo: `file://${remote}`, base: 'main' }] }));
  return { remote, env: { CONSOLE_STORAGE: 'postgres', DATABASE_URL: scratch.url, CONSOLE_WORLD: world }, tempDir };
}
