/**
 * The rules of a thread's git worktree (contract section 8) that need no git: the branch it gets,
 * which base branches a world may name, and which paths a changes read may ask about.
 */

/** What every thread's branch starts with: the only branches a sandboxed agent's commits may move. */
export const WORKTREE_BRANCH_PREFIX = 'console/';

/** The branch of a thread's worktree. */
export const worktreeBranch = (threadId: string): string => `${WORKTREE_BRANCH_PREFIX}${threadId}`;

/**
 * A base branch name the world may give: plain characters only, never an option (`-…`), never a
 * `..`, `@{`, `//`, a trailing `/`, `.` or `.lock`; git's own `check-ref-format --branch` decides the rest.
 */
export function isBranchName(name: string): boolean {
  return /^[A-Za-z0-9_][A-Za-z0-9._/-]{0,199}$/.test(name) && !name.includes('..') && !name.includes('//') &&
    !name.endsWith('/') && !name.endsWith('.') && !name.endsWith('.lock') && !name.split('/').some((part) => part.startsWith('.'));
}

/**
 * Whether a project's `repo` is a git URL (contract section 8, "More than one machine"): `file://`, `ssh://`,
 * `https://` (or `http://`, `git://`), or scp-like `user@host:path`; each instance then works in a clone of its
 * own. Anything else is a path on this machine.
 */
export function isRepositoryUrl(repo: string): boolean {
  return /^(file|ssh|https?|git):\/\//.test(repo) || /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^/\\]/.test(repo);
}

/**
 * Why a git URL is refused, or null: credentials never go in the world file (a password in the URL), no option or
 * whitespace can reach git's command line, and only the transports above (never `ext::` and its kin).
 */
export function repositoryUrlRefusal(url: string): string | null {
  if (url.length > 2048) return 'must be at most 2048 characters';
  if (/[\s\0]/.test(url) || url.startsWith('-')) return 'must not contain whitespace nor start with "-"';
  if (!isRepositoryUrl(url)) return 'must be an absolute path or a git URL (file://, ssh://, https://, or user@host:path)';
  const scheme = /^([a-z]+):\/\//.exec(url)?.[1];
  if (scheme !== undefined && scheme !== 'file') {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return 'is not a valid URL';
    }
    if (parsed.password !== '') return 'must not hold a password: give credentials through the environment or git configuration';
    if (parsed.hostname === '') return 'must name a host';
  }
  if (scheme === 'file' && !/^file:\/\/\//.test(url)) return 'a file:// URL must name an absolute path (file:///…)';
  return null;
}

/** The statuses of a changed file. */
export const CHANGE_STATUSES = ['added', 'modified', 'deleted', 'renamed'] as const;
export type ChangeStatus = (typeof CHANGE_STATUSES)[number];

/** One file the worktree changed against the merge base with its base branch. */
export interface ChangedFile {
  readonly path: string;
  readonly status: ChangeStatus;
  /** A renamed file's path before. */
  readonly old_path?: string;
  readonly additions: number;
  readonly deletions: number;
  readonly binary: boolean;
}

/** What a thread's worktree changed (GET /threads/{id}/changes). */
export interface Changes {
  readonly base: string;
  readonly branch: string;
  /** Commits on the branch that `base` lacks, and commits on `base` the branch lacks. */
  readonly ahead: number;
  readonly behind: number;
  /** Files the worktree holds changed (edited, added, deleted, untracked) that no commit on the branch has yet: a merge commits them first. */
  readonly uncommitted: number;
  readonly files: readonly ChangedFile[];
}

/** The largest diff answered (2 MiB); a larger one is refused `diff_too_large`. */
export const MAX_DIFF_BYTES = 2 * 1024 * 1024;

/** Lines quoted around a review comment's line, on each side. */
export const REVIEW_CONTEXT_LINES = 3;

/** One review comment on a line of a changed file. */
export interface ReviewComment {
  readonly path: string;
  readonly line: number;
  readonly text: string;
}

/** A comment with the lines around its line (numbered from `first`), as the worktree holds them; null when the file cannot be read. */
export interface QuotedComment extends ReviewComment {
  readonly excerpt: { readonly first: number; readonly lines: readonly string[] } | null;
}

/** The prompt of a review: the reviewer's text, then each comment with its file, line and the lines around it. */
export function reviewPrompt(text: string | null, comments: readonly QuotedComment[]): string {
  const parts: string[] = [text !== null && text.trim() !== '' ? text.trim() : 'Please address these review comments on your changes.'];
  for (const comment of comments) {
    const lines = [`${comment.path}, line ${comment.line}:`];
    if (comment.excerpt !== null) {
      const width = String(comment.excerpt.first + comment.excerpt.lines.length - 1).length;
      lines.push('```');
      comment.excerpt.lines.forEach((line, i) => {
        const number = comment.excerpt!.first + i;
        // A minified line is cut: the excerpt shows where, the agent reads the file itself.
        lines.push(`${number === comment.line ? '>' : ' '} ${String(number).padStart(width)} | ${line.length > 500 ? `${line.slice(0, 500)}…` : line}`);
      });
      lines.push('```');
    }
    lines.push(...comment.text.split('\n').map((line) => `> ${line}`));
    parts.push(lines.join('\n'));
  }
  return parts.join('\n\n');
}

/** Where a thread's checkpoints live in its repository: one ref per checkpoint, `base` for the one before its first turn. */
export const checkpointRefs = (threadId: string): string => `refs/console/checkpoints/${threadId}/`;

/**
 * The checkpoint a rewind to before run `runId` puts the worktree back to (contract section 11): the one taken
 * after the latest run before it that is not rewound and has one, else the one before the thread's first turn;
 * null when there is neither. `runs` are the thread's, oldest first (a run not among them: null).
 */
export function checkpointBefore(
  runs: readonly { readonly id: string; readonly rewound: boolean }[],
  runId: string,
  checkpoints: readonly { readonly run_id: string | null; readonly commit: string }[],
): string | null {
  const at = runs.findIndex((run) => run.id === runId);
  if (at < 0) return null;
  const after = new Map(checkpoints.filter((c) => c.run_id !== null).map((c) => [c.run_id!, c.commit]));
  for (let i = at - 1; i >= 0; i -= 1) {
    const commit = runs[i]!.rewound ? undefined : after.get(runs[i]!.id);
    if (commit !== undefined) return commit;
  }
  return checkpoints.find((c) => c.run_id === null)?.commit ?? null;
}

/** Where in `runs` (oldest first) the run of ledger message `messageId` is (see {@link runOfMessage}); -1 for none. */
function runIndexOf(runs: readonly { readonly id: string; readonly message_id: string | null }[], messageId: string): number {
  let at = runs.findIndex((run) => run.message_id === messageId);
  if (at < 0) for (let i = 0; i < runs.length; i += 1) if (runs[i]!.id <= messageId) at = i;
  return at;
}

/**
 * The run a ledger message of a thread belongs to (contract section 11): the run it started, else the latest run
 * begun before it was written (a reply, a steered line, a chat line: ids are time-ordered); null when none did.
 * `runs` are the thread's, oldest first. A fork at the message starts from the checkpoint taken after this run.
 */
export function runOfMessage<R extends { readonly id: string; readonly message_id: string | null }>(runs: readonly R[], messageId: string): R | null {
  return runs[runIndexOf(runs, messageId)] ?? null;
}

/**
 * The checkpoint a fork cut at message `messageId` starts its worktree from (contract section 11): the one taken
 * after that message's run (the run it started, else the latest run begun before it was written: ids are
 * time-ordered), or the nearest earlier one that has one, else the one before the source's first turn; null when
 * there is none. Rewound runs count: a fork from a message a rewind took back starts where that run left the files.
 */
export function checkpointAt(
  runs: readonly { readonly id: string; readonly message_id: string | null }[],
  messageId: string,
  checkpoints: readonly { readonly run_id: string | null; readonly commit: string }[],
): string | null {
  const at = runIndexOf(runs, messageId);
  const after = new Map(checkpoints.filter((c) => c.run_id !== null).map((c) => [c.run_id!, c.commit]));
  for (let i = at; i >= 0; i -= 1) {
    const commit = after.get(runs[i]!.id);
    if (commit !== undefined) return commit;
  }
  return checkpoints.find((c) => c.run_id === null)?.commit ?? null;
}

/** Where a rewind keeps the tip it moved the thread's branch from, named by the first run it took back. */
export const rewoundRef = (threadId: string, runId: string): string => `refs/console/rewound/${threadId}/${runId}`;

/**
 * The whole state of a thread's worktree (tracked, untracked, deletions; ignored files left out) recorded as a
 * commit before its first turn (`run_id` null) and at the end of every turn (GET /threads/{id}/checkpoints).
 */
export interface Checkpoint {
  /** The run whose end it records; null for the one before the thread's first turn. */
  readonly run_id: string | null;
  /** The ledger message of the run's directive, when the turn knew it (null for the first, and for a swept turn). */
  readonly message_id: string | null;
  readonly commit: string;
  readonly created_at: string;
  /** How many files differ from the previous checkpoint (the first: from the branch it was taken on). */
  readonly files_changed: number;
}
