import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, write } from './git-repo.ts';

/** A shell command, as git's configuration would hold it, that leaves `marker` behind when git runs it. */
const leaves = (marker: string, then = '') => `"touch '${marker}'${then}"`;

/** The attributes that name the drivers below for every file. */
export const HOSTILE_ATTRIBUTES = '* filter=evil diff=evil merge=evil\n';

/**
 * What an agent that may only write files in its worktree can do to it (the security probe of the
 * worktree routes): its `.git` file replaced by a repository of its own (its objects borrowed from the
 * real one, the same branch, the same commit), whose configuration names commands for every hook git
 * has into a file's life (a clean and smudge filter, a long-running filter process, fsmonitor, a textconv,
 * an external diff, a merge driver, a pager), with a `.gitattributes` and an `info/attributes` naming them.
 * Each command, when run, leaves a file in `markers`: none may appear.
 */
export function plantGitDirectory(worktree: string, markers: string): void {
  mkdirSync(markers, { recursive: true });
  const head = git(worktree, 'rev-parse', 'HEAD');
  const branch = git(worktree, 'symbolic-ref', 'HEAD');
  const objects = join(git(worktree, 'rev-parse', '--path-format=absolute', '--git-common-dir'), 'objects');
  rmSync(join(worktree, '.git'), { recursive: true, force: true });
  const dot = join(worktree, '.git');
  write(dot, 'HEAD', `ref: ${branch}\n`);
  write(dot, 'objects/info/alternates', `${objects}\n`);
  write(dot, branch, `${head}\n`);
  write(dot, 'refs/heads/main', `${head}\n`);
  write(dot, 'info/attributes', HOSTILE_ATTRIBUTES);
  write(dot, 'config', [
    '[core]', '\trepositoryformatversion = 0', `\tfsmonitor = ${leaves(join(markers, 'fsmonitor'))}`, `\tpager = ${leaves(join(markers, 'pager'), '; cat')}`,
    '\tattributesFile = info/attributes',
    '[filter "evil"]', `\tclean = ${leaves(join(markers, 'clean'), '; cat')}`, `\tsmudge = ${leaves(join(markers, 'smudge'), '; cat')}`,
    `\tprocess = ${leaves(join(markers, 'process'))}`, '\trequired = true',
    '[diff "evil"]', `\ttextconv = ${leaves(join(markers, 'textconv'), '; cat')}`, `\tcommand = ${leaves(join(markers, 'external-diff'))}`,
    '[diff]', `\texternal = ${leaves(join(markers, 'diff-external'))}`,
    '[merge "evil"]', `\tdriver = ${leaves(join(markers, 'merge-driver'))}`,
    '',
  ].join('\n'));
  writeFileSync(join(worktree, '.gitattributes'), HOSTILE_ATTRIBUTES);
}

/**
 * Drivers the repository's own configuration (the operator's) defines under the name `op`, each
 * leaving a file in `markers` when run: attributes an agent writes may name them, but the console
 * must never run them on the agent's files either.
 */
export function defineOperatorDrivers(repo: string, markers: string): void {
  mkdirSync(markers, { recursive: true });
  const set = (key: string, value: string) => git(repo, 'config', key, value.slice(1, -1));
  set('filter.op.clean', leaves(join(markers, 'op-clean'), '; cat'));
  set('filter.op.smudge', leaves(join(markers, 'op-smudge'), '; cat'));
  set('diff.op.textconv', leaves(join(markers, 'op-textconv'), '; cat'));
  set('merge.op.driver', leaves(join(markers, 'op-merge-driver'), '; false'));
}

/** The files the planted commands left: none, when git ran none of them. */
export const ran = (markers: string): string[] => readdirSync(markers).sort();
