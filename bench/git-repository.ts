import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** git as a test runs it: no system or global configuration, an identity of its own. */
export const GIT_ENV = {
  PATH: process.env.PATH ?? '', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Bench', GIT_AUTHOR_EMAIL: 'bench@example.com', GIT_COMMITTER_NAME: 'Bench', GIT_COMMITTER_EMAIL: 'bench@example.com',
};

export const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, env: GIT_ENV, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 }).toString('utf8').trim();

export const median = (values: number[]) => {
  const sorted = [...values].sort((x, y) => x - y);
  const middle = sorted.length / 2;
  return sorted.length % 2 === 1 ? sorted[Math.floor(middle)]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** A repository of `files` small files in directories of 500, one commit on `main`, at `<parent>/repo`. */
export function benchRepository(parent: string, files: number): string {
  const repo = join(parent, 'repo');
  mkdirSync(repo);
  git(repo, 'init', '--quiet', '--initial-branch=main');
  for (let i = 0; i < files; i += 1) {
    const dir = join(repo, `dir-${Math.floor(i / 500)}`);
    if (i % 500 === 0) mkdirSync(dir);
    writeFileSync(join(dir, `file-${i % 500}.txt`), `file ${i}\n`);
  }
  // Packed as a real repository's would be, and never again in the background: a detached `gc --auto` (50,000
  // loose objects start one) would run beside the timed rounds, and remove objects a clone is copying.
  git(repo, 'config', 'gc.auto', '0');
  git(repo, 'add', '--all');
  git(repo, 'commit', '--quiet', '-m', 'Initial commit');
  git(repo, 'gc', '--quiet');
  return repo;
}
