import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { demoRepository, withDemoRepository } from '../src/demo/demo-repository.ts';
import { loadConfig } from '../src/config.ts';
import { readWorld } from '../src/open-storage.ts';
import { git } from './support/git-repo.ts';

describe('the demo repository (docs/demo.md, a repository project)', () => {
  it('is made once under DATA_DIR with one commit on main, by no configured identity, and found again after', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'demo-repo-')), 'data');
    const made = await demoRepository(dataDir);
    assert.deepEqual(made, { path: join(dataDir, 'demo-repo') });
    const repo = join(dataDir, 'demo-repo');
    assert.equal(git(repo, 'rev-parse', '--abbrev-ref', 'HEAD'), 'main');
    assert.equal(git(repo, 'status', '--porcelain'), '', 'everything committed');
    const head = git(repo, 'rev-parse', 'HEAD');
    assert.deepEqual(await demoRepository(dataDir), made);
    assert.equal(git(repo, 'rev-parse', 'HEAD'), head, 'a second start keeps it as it is');
    assert.deepEqual(readdirSync(dataDir), ['demo-repo'], 'nothing left beside it');
  });

  it('under a relative DATA_DIR (./.data by default), is named by its absolute path, as a world\'s repo must be', async () => {
    const dataDir = relative(process.cwd(), mkdtempSync(join(tmpdir(), 'demo-repo-')));
    assert.deepEqual(await demoRepository(dataDir), { path: resolve(dataDir, 'demo-repo') });
  });

  it('without git, is skipped with its reason, and the demo world loads without the project, saying so in the log', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'demo-repo-'));
    assert.deepEqual(await demoRepository(dataDir, '/nonexistent'), { skipped: 'git is not installed' });
    assert.deepEqual(readdirSync(dataDir), []);
    assert.deepEqual(withDemoRepository({ projects: ['a'] }, null), { projects: ['a'] });
    const loaded = loadConfig({ CONSOLE_STORAGE: 'memory', DATA_DIR: dataDir, PATH: '/nonexistent' });
    assert.ok(loaded.ok);
    const saved = process.env.PATH;
    const notes: string[] = [];
    process.env.PATH = '/nonexistent';
    try {
      const world = await readWorld(loaded.value, { info: () => {}, warn: (_fields: unknown, message?: string) => void notes.push(String(message)) } as never);
      assert.deepEqual(world?.projects.map((project) => project.name), ['acme-web', 'infra']);
    } finally {
      process.env.PATH = saved;
    }
    assert.match(notes.join('\n'), /without its repository project \(git is not installed\)/);
  });

  it('is a project of the demo world: {name: "demo-repo", repo, base: "main"}', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'demo-repo-'));
    const loaded = loadConfig({ CONSOLE_STORAGE: 'memory', DATA_DIR: dataDir });
    assert.ok(loaded.ok);
    const world = await readWorld(loaded.value);
    assert.deepEqual(world?.projects.at(-1), { name: 'demo-repo', directory: null, repo: join(dataDir, 'demo-repo'), base: 'main' });
  });
});
