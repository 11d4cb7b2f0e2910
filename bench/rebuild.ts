import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, hostname, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { uuidv7 } from 'uuidv7';
import { gitWorktrees } from '../adapters/git/worktrees.ts';
import { benchRepository, git, GIT_ENV, median } from './git-repository.ts';
import { writeSection } from './report.ts';
import { fixed } from './stats.ts';

// A thread's worktree rebuilt on an instance that did not run its turns (issue 40): a repository of 50,000 small
// files reached by a file:// URL, a thread whose earlier turns (on another instance) changed 3 files and pushed their
// checkpoint; the instance has its clone, not the thread's worktree. Timed: `Worktrees.ensure` there (a fetch, the
// worktree made from the branch, its files brought to the latest checkpoint), beside the bare way to the same files:
// `git clone --reference <the instance's clone>` of the remote, a fetch of the checkpoint and its `git checkout`. Goal: ≤ 1.5×.
// Also: `ensure` of a worktree that is already current (what every turn and read pays), beside `git for-each-ref`
// over the thread's checkpoints (the one git command the check adds).

const FILES = Number(process.env.BENCH_REBUILD_FILES ?? 50_000);
const ROUNDS = Number(process.env.BENCH_REBUILD_ROUNDS ?? 7);
const WARMUP = 1;
const GOAL = 1.5;
/** 3 files spread over the repository, whatever its size. */
const CHANGED = [0, Math.floor(FILES / 3), Math.floor((2 * FILES) / 3)].map((i) => `dir-${Math.floor(i / 500)}/file-${i % 500}.txt`);
const exec = promisify(execFile);
const ms = (value: number) => `${fixed(value, 1)} ms`;

export async function rebuildBench(): Promise<void> {
  const parent = mkdtempSync(join(tmpdir(), 'console-bench-rebuild-'));
  const load = loadavg()[0]!;
  const rebuilds: number[] = [];
  const bares: number[] = [];
  const currents: number[] = [];
  const refs: number[] = [];
  const plains: number[] = [];
  try {
    const repo = benchRepository(parent, FILES);
    const remote = join(parent, 'remote.git');
    git(parent, 'clone', '--bare', '--quiet', repo, remote);
    const url = `file://${remote}`;
    // Instance A runs the thread's turns: 3 files changed, the checkpoint pushed.
    const a = gitWorktrees({ root: join(parent, 'a'), timeoutMs: 120_000 });
    const threadId = uuidv7();
    const onA = await a.ensure({ repo: url, base: 'main', threadId });
    if (!onA.ok) throw new Error(`no worktree on A: ${JSON.stringify(onA.error)}`);
    for (const path of CHANGED) writeFileSync(join(onA.value.path, path), 'changed by an earlier turn\n');
    const taken = await a.checkpoint({ threadId, path: onA.value.path, runId: uuidv7(), messageId: null });
    if (!taken.ok || taken.value === null) throw new Error(`no checkpoint: ${JSON.stringify(taken)}`);
    const checkpoint = taken.value.commit;
    const checkpointRef = `refs/console/checkpoints/${threadId}/${taken.value.run_id}`;
    // Instance B has its clone (made for another thread), not this thread's worktree.
    const rootB = join(parent, 'b');
    const b = gitWorktrees({ root: rootB, timeoutMs: 120_000 });
    const other = await b.ensure({ repo: url, base: 'main', threadId: uuidv7() });
    if (!other.ok) throw new Error(`no clone on B: ${JSON.stringify(other.error)}`);
    const cloneB = git(other.value.path, 'rev-parse', '--path-format=absolute', '--git-common-dir');

    const rebuild = async () => {
      const started = performance.now();
      const made = await b.ensure({ repo: url, base: 'main', threadId });
      const took = performance.now() - started;
      if (!made.ok || readFileSync(join(made.value.path, CHANGED[0]!), 'utf8') !== 'changed by an earlier turn\n') throw new Error(`the rebuild went wrong: ${JSON.stringify(made)}`);
      // Checked current again (every turn and read pays this), then gone for the next round.
      const again = performance.now();
      await b.ensure({ repo: url, base: 'main', threadId });
      currents.push(performance.now() - again);
      const refStarted = performance.now();
      await exec('git', [`--git-dir=${cloneB}`, 'for-each-ref', '--format=%(objectname)%00%(contents)%00', `refs/console/checkpoints/${threadId}/`], { env: GIT_ENV });
      refs.push(performance.now() - refStarted);
      git(parent, `--git-dir=${cloneB}`, 'worktree', 'remove', '--force', '--force', made.value.path);
      rmSync(join(rootB, '.current', threadId), { force: true });
      return took;
    };
    const bare = async (round: number) => {
      const dir = join(parent, `bare-${round}`);
      const started = performance.now();
      await exec('git', ['clone', '--quiet', '--no-checkout', '--reference', cloneB, url, dir], { env: GIT_ENV });
      await exec('git', ['fetch', '--quiet', 'origin', checkpointRef], { cwd: dir, env: GIT_ENV });
      await exec('git', ['checkout', '--quiet', checkpoint], { cwd: dir, env: GIT_ENV });
      const took = performance.now() - started;
      if (readFileSync(join(dir, CHANGED[0]!), 'utf8') !== 'changed by an earlier turn\n') throw new Error('the bare checkout went wrong');
      rmSync(dir, { recursive: true, force: true });
      return took;
    };
    for (let round = 1; round <= WARMUP + ROUNDS; round += 1) {
      const took = round % 2 === 0 ? { rebuild: await rebuild(), bare: await bare(round) } : { bare: await bare(round), rebuild: await rebuild() };
      if (round > WARMUP) {
        rebuilds.push(took.rebuild);
        bares.push(took.bare);
      }
    }
    // The same check on a project named by a plain path (one machine, as before issue 40): its thread's worktree,
    // made once, then found current again each round (no remote to fetch from).
    const c = gitWorktrees({ root: join(parent, 'c'), timeoutMs: 120_000 });
    const plainThread = uuidv7();
    const plain = await c.ensure({ repo, base: 'main', threadId: plainThread });
    if (!plain.ok) throw new Error(`no worktree on a plain path: ${JSON.stringify(plain.error)}`);
    for (let round = 1; round <= WARMUP + ROUNDS; round += 1) {
      const started = performance.now();
      const again = await c.ensure({ repo, base: 'main', threadId: plainThread });
      if (!again.ok) throw new Error(`a plain path's current worktree went wrong: ${JSON.stringify(again.error)}`);
      if (round > WARMUP) plains.push(performance.now() - started);
    }
  } finally {
    try {
      rmSync(parent, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    } catch (error) {
      console.warn(`could not remove ${parent}: ${String(error)}`);
    }
  }
  if (existsSync(parent)) console.warn(`left ${parent}`);
  const ratio = median(rebuilds) / median(bares);
  const met = ratio <= GOAL;
  const gitVersion = execFileSync('git', ['--version']).toString('utf8').trim();
  console.log(`worktree rebuilt from a checkpoint in ${FILES} files: median ${ms(median(rebuilds))} beside clone --reference + checkout ${ms(median(bares))}: ${fixed(ratio, 2)}× (goal ≤ ${GOAL}×: ${met ? 'met' : 'MISSED'}); a current worktree checked ${ms(median(currents))}`);
  writeSection('rebuild', `
## A thread's worktree rebuilt on another instance beside \`git clone --reference\` and a checkout

A repository of ${FILES.toLocaleString('en')} small files reached by a \`file://\` URL; a thread whose earlier turns, on
instance A, changed 3 files and pushed their checkpoint; instance B has its clone of the repository (made for another
thread), not this thread's worktree. Each round times \`Worktrees.ensure\` on B (a fetch of the thread's refs, the
worktree added from the branch, its files brought to the latest checkpoint: a snapshot, a two-tree \`read-tree -u\`,
the branch and index set) beside the bare way to the same files, \`git clone --no-checkout --reference <B's clone>\` of
the remote, a \`git fetch\` of the checkpoint's ref, then \`git checkout\` of it, which goes first alternating; ${WARMUP} round of warm-up, then
${ROUNDS}. Then the \`ensure\` of the worktree now current (what every turn and changes read pays) beside the one git
command the check adds (\`git for-each-ref\` over the thread's checkpoints), and the \`ensure\` of a current worktree of a
project named by a plain path (no remote). \`BENCH_ONLY=rebuild npm run bench\`
(bench/rebuild.ts; \`BENCH_REBUILD_FILES\`, \`BENCH_REBUILD_ROUNDS\`). On ${hostname()} (${cpus().length} × ${cpus()[0]?.model ?? 'cpu'},
${fixed(totalmem() / 2 ** 30, 0)} GiB, Node ${process.version}, ${gitVersion}), load average ${fixed(load, 1)} when the run began.

| | median | min | max |
|---|---|---|---|
| rebuild (\`ensure\` on B) | ${ms(median(rebuilds))} | ${ms(Math.min(...rebuilds))} | ${ms(Math.max(...rebuilds))} |
| \`git clone --reference\` + \`git checkout\` | ${ms(median(bares))} | ${ms(Math.min(...bares))} | ${ms(Math.max(...bares))} |
| \`ensure\` of a current worktree | ${ms(median(currents))} | ${ms(Math.min(...currents))} | ${ms(Math.max(...currents))} |
| \`git for-each-ref\` of its checkpoints | ${ms(median(refs))} | ${ms(Math.min(...refs))} | ${ms(Math.max(...refs))} |
| \`ensure\` of a current worktree, the project a plain path | ${ms(median(plains))} | ${ms(Math.min(...plains))} | ${ms(Math.max(...plains))} |

The rebuild costs **${fixed(ratio, 2)}×** the bare clone and checkout (goal ≤ ${GOAL}×: ${met ? 'met' : 'missed'}). A current
worktree of a project named by a git URL costs ${ms(median(currents) - median(plains))} more per turn or changes read than one of a
project named by a plain path (one machine, as before): the fetch that tells whether another instance went on.
`);
}
