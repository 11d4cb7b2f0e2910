import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** git in a test: an argument array, no shell, an identity of its own, no system or global configuration. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd, encoding: 'utf8',
    env: {
      PATH: process.env.PATH ?? '', HOME: cwd, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 'test@example.com', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 'test@example.com',
    },
  }).replace(/\n$/, '');
}

/** Writes a file (and its directories) under `root`. */
export function write(root: string, path: string, content: string | Buffer): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), content);
}

/**
 * A fresh repository in a temporary directory with one commit on `main`: `README.md`, `src/app.js`
 * (ten numbered lines), `old-name.txt` and `remove-me.txt`. Answers its path.
 */
export function gitRepository(prefix = 'console-repo-'): string {
  const repo = mkdtempSync(join(tmpdir(), prefix));
  git(repo, 'init', '--quiet', '--initial-branch=main');
  write(repo, 'README.md', '# Demo\n');
  write(repo, 'src/app.js', Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
  write(repo, 'old-name.txt', 'a file that will be renamed\nwith enough lines\nto be found again\nafter the move\n');
  write(repo, 'remove-me.txt', 'soon gone\n');
  git(repo, 'add', '--all');
  git(repo, 'commit', '--quiet', '-m', 'Initial commit');
  return repo;
}
