import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';

/** The demo world's repository project (docs/demo.md): a small git repository under DATA_DIR, made at the first start. */
export const DEMO_REPOSITORY_PROJECT = 'demo-repo';

/** The repository's files, committed once on `main`. */
const FILES: Record<string, string> = {
  'README.md': '# demo-repo\n\nA small repository the demo world\'s threads work on: each thread gets a worktree of its own.\nAsk the demo agent `[approval] add a note` and allow it: it writes notes.md, which Changes then lists.\n',
  'greet.js': 'export function greet(name) {\n  return `Hello, ${name}!`;\n}\n',
  'notes.md': '# Notes\n',
};

/** Who the first commit is by, and no configuration of the machine's (a global signing setting, hooks), so no git setup is needed. */
const GIT_ENV = {
  GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Agent console demo', GIT_AUTHOR_EMAIL: 'demo@localhost',
  GIT_COMMITTER_NAME: 'Agent console demo', GIT_COMMITTER_EMAIL: 'demo@localhost',
};

const run = promisify(execFile);

/**
 * The demo repository at `DATA_DIR/demo-repo`: there already, or made now (a few files, one commit on
 * `main`), in a directory beside it renamed into place once whole, so a start stopped halfway leaves
 * no half-made repository. Without git on the PATH, or when it cannot be made, the reason instead:
 * the demo world then goes without its repository project. `searchPath` is where git is looked for.
 */
export async function demoRepository(dataDir: string, searchPath = process.env.PATH ?? ''): Promise<{ path: string } | { skipped: string }> {
  const git = (cwd: string, ...args: string[]) => run('git', args, { cwd, env: { PATH: searchPath, HOME: cwd, ...GIT_ENV } });
  // Absolute, as a world's repo must be: DATA_DIR may be relative (./.data by default).
  const path = resolve(dataDir, DEMO_REPOSITORY_PROJECT);
  if (existsSync(join(path, '.git'))) return { path };
  await mkdir(dataDir, { recursive: true });
  const making = await mkdtemp(join(dataDir, `.${DEMO_REPOSITORY_PROJECT}-`));
  try {
    try {
      await git(making, 'init', '--quiet');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return { skipped: code === 'ENOENT' ? 'git is not installed' : `git init failed (${String(code ?? 'error')})` };
    }
    // `init --initial-branch` needs git 2.28; a symbolic ref names the branch on any git.
    await git(making, 'symbolic-ref', 'HEAD', 'refs/heads/main');
    for (const [file, text] of Object.entries(FILES)) {
      await mkdir(dirname(join(making, file)), { recursive: true });
      await writeFile(join(making, file), text);
    }
    await git(making, 'add', '--all');
    await git(making, '-c', 'commit.gpgsign=false', 'commit', '--quiet', '--no-verify', '-m', 'The demo repository');
    await rename(making, path);
    return { path };
  } catch (error) {
    return { skipped: `it could not be made (${(error as Error).message.split('\n', 1)[0]})` };
  } finally {
    await rm(making, { recursive: true, force: true });
  }
}

/** The demo world file's JSON with the repository project at `repo` added (validated as any world file is), or as it is without one. */
export function withDemoRepository(world: unknown, repo: string | null): unknown {
  if (repo === null || typeof world !== 'object' || world === null) return world;
  const file = world as { projects?: unknown };
  const project = { name: DEMO_REPOSITORY_PROJECT, repo, base: 'main' };
  return { ...file, projects: [...(Array.isArray(file.projects) ? file.projects : []), project] };
}
