import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, hostname, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { uuidv7 } from 'uuidv7';
import { gitWorktrees } from '../adapters/git/worktrees.ts';
import { writeSection } from './report.ts';
import { fixed } from './stats.ts';
import { benchRepository, git, GIT_ENV, median } from './git-repository.ts';

// A checkpoint's cost (issue 39): the checkpoint of a turn that changed 3 files in a repository of 50,000 small
// files, through the git adapter (a temporary index, `add --all`, `write-tree`, `commit-tree`, `update-ref`, under
// the thread's lock, with the hardened invocation), beside `git add -A && git commit` of the same change in a plain
// clone of the same repository. Goal: at most 1.5× the bare commit.

const FILES = Number(process.env.BENCH_CHECKPOINT_FILES ?? 50_000);
const ROUNDS = Number(process.env.BENCH_CHECKPOINT_ROUNDS ?? 11);
const WARMUP = 2;
const GOAL = 1.5;
const CHANGED = ['dir-0/file-0.txt', 'dir-7/file-123.txt', 'dir-42/file-99.txt'];

const exec = promisify(execFile);
const ENV = GIT_ENV;
const ms = (value: number) => `${fixed(value, 1)} ms`;
const repository = (parent: string) => benchRepository(parent, FILES);

const change = (at: string, round: number) => {
  for (const path of CHANGED) writeFileSync(join(at, path), `changed in round ${round}\n`);
};

/** The checkpoint's time and the bare commit's, each round, alternating which goes first; writes the checkpoint section. */
export async function checkpointBench(): Promise<void> {
  const parent = mkdtempSync(join(tmpdir(), 'console-bench-checkpoint-'));
  const load = loadavg()[0]!;
  const checkpoints: number[] = [];
  const commits: number[] = [];
  let made = 0;
  try {
    let started = performance.now();
    const repo = repository(parent);
    made = performance.now() - started;
    const worktrees = gitWorktrees({ root: join(parent, 'worktrees'), timeoutMs: 120_000 });
    const threadId = uuidv7();
    const ensured = await worktrees.ensure({ repo, base: 'main', threadId });
    if (!ensured.ok) throw new Error(`no worktree: ${JSON.stringify(ensured.error)}`);
    const worktree = ensured.value.path;
    const clone = join(parent, 'clone');
    git(parent, 'clone', '--quiet', '--no-hardlinks', '--config', 'gc.auto=0', repo, clone);
    const base = await worktrees.checkpoint({ threadId, path: worktree, runId: null, messageId: null });
    if (!base.ok || base.value === null) throw new Error(`no base checkpoint: ${JSON.stringify(base)}`);

    const checkpoint = async (round: number) => {
      change(worktree, round);
      started = performance.now();
      const recorded = await worktrees.checkpoint({ threadId, path: worktree, runId: uuidv7(), messageId: uuidv7() });
      const took = performance.now() - started;
      if (!recorded.ok || recorded.value?.files_changed !== CHANGED.length) throw new Error(`a checkpoint went wrong: ${JSON.stringify(recorded)}`);
      return took;
    };
    const commit = async (round: number) => {
      change(clone, round);
      started = performance.now();
      await exec('git', ['add', '-A'], { cwd: clone, env: ENV });
      await exec('git', ['commit', '--quiet', '-m', `Round ${round}`], { cwd: clone, env: ENV });
      return performance.now() - started;
    };
    for (let round = 1; round <= WARMUP + ROUNDS; round += 1) {
      let took: { checkpoint: number; commit: number };
      if (round % 2 === 0) took = { checkpoint: await checkpoint(round), commit: await commit(round) };
      else took = { commit: await commit(round), checkpoint: await checkpoint(round) };
      if (round > WARMUP) {
        checkpoints.push(took.checkpoint);
        commits.push(took.commit);
      }
    }
  } finally {
    // A git process may still be writing there (a detached `gc --auto`): retried, and never hiding the run's own error.
    try {
      rmSync(parent, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    } catch (error) {
      console.warn(`could not remove ${parent}: ${String(error)}`);
    }
  }
  const ratio = median(checkpoints) / median(commits);
  const met = ratio <= GOAL;
  const gitVersion = execFileSync('git', ['--version']).toString('utf8').trim();
  console.log(`checkpoint of 3 changed files in ${FILES} files: median ${ms(median(checkpoints))} beside git add -A && git commit ${ms(median(commits))}: ${fixed(ratio, 2)}× (goal ≤ ${GOAL}×: ${met ? 'met' : 'MISSED'})`);

  writeSection('checkpoint', `
## A turn's checkpoint beside \`git add -A && git commit\`

A repository of ${FILES.toLocaleString('en')} small files (one line each, in directories of 500; made and committed in
${fixed(made / 1000, 1)} s), a thread's worktree of it made by the git adapter, and a plain clone of it. Each round
changes the same 3 files in both, then times the adapter's checkpoint (\`Worktrees.checkpoint\`: the thread's lock, the
worktree's place, its index copied to a temporary index, \`git add --all\` into it, \`write-tree\`, the files changed
since the previous checkpoint, \`commit-tree\`, a create-only \`update-ref\`; the hardened invocation every read uses)
and \`git add -A\` then \`git commit\` in the clone (two processes, as a shell would run them), which goes first
alternating; ${WARMUP} rounds of warm-up, then ${ROUNDS}. \`BENCH_ONLY=checkpoint npm run bench\` (bench/checkpoint.ts;
\`BENCH_CHECKPOINT_FILES\`, \`BENCH_CHECKPOINT_ROUNDS\`). On ${hostname()} (${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${fixed(totalmem() / 2 ** 30, 0)} GiB, Node ${process.version}, ${gitVersion}),
load average ${fixed(load, 1)} when the run began.

| | median | min | max |
|---|---|---|---|
| checkpoint | ${ms(median(checkpoints))} | ${ms(Math.min(...checkpoints))} | ${ms(Math.max(...checkpoints))} |
| \`git add -A && git commit\` | ${ms(median(commits))} | ${ms(Math.min(...commits))} | ${ms(Math.max(...commits))} |

The checkpoint costs **${fixed(ratio, 2)}×** the bare commit (goal ≤ ${GOAL}×: ${met ? 'met' : 'missed'}).
`);
}
