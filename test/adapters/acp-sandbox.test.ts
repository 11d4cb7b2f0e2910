import assert from 'node:assert/strict';
import { readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { type AcpAgentRunner, createAcpAgentRunner } from '../../adapters/acp/agent-runner.ts';
import { probeSandbox } from '../../adapters/acp/sandbox-probe.ts';
import type { AgentSandbox } from '../../adapters/acp/sandbox.ts';
import { AGENT_BASE_VARIABLES } from '../../domain/agent-env.ts';
import type { Agent } from '../../domain/model.ts';
import type { AgentRunner, TurnUpdate } from '../../ports/agent-runner.ts';
import { git, write } from '../support/git-repo.ts';
import { builtDemoAgent } from '../support/built.ts';

// Agents get a scrubbed environment, but an agent that runs a shell as the service's user could read
// the service's own (`/proc/<pid>/environ`), its data directory and other threads' worktrees. Under
// the sandbox it sees none of them, and still works and commits in its own worktree.

const log = pino({ level: 'silent' });
const SHELL_AGENT = fileURLToPath(new URL('../support/shell-acp-agent.mjs', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const shell: Agent = {
  id: 'shell', models: null, efforts: null, permission_modes: null, default_permission_mode: null,
  command: [process.execPath, SHELL_AGENT],
};

const probe = await probeSandbox(process.env.PATH ?? '/usr/bin:/bin');
const skip = probe.ok ? false : `no sandbox here: ${probe.reason}`;

/** One turn whose prompt is a shell command; answers what the command wrote. */
async function run(runner: AgentRunner, cwd: string, command: string, agent: Agent = shell): Promise<string> {
  const updates: TurnUpdate[] = [];
  await runner.runTurn({
    agent, sessionId: null, cwd, prompt: command, mode: null, model: null, effort: null,
    onSession: () => {}, onUpdate: (update) => void updates.push(update), onPermission: async () => ({ outcome: 'cancelled' }),
  });
  return updates.flatMap((update) => (update.kind === 'text' ? [update.text] : [])).join('');
}

/** The `NAME=value` entries of this process's own environment (as the kernel holds it) that no agent is given. */
function ownEnvironEntries(): string[] {
  const entries = readFileSync('/proc/self/environ', 'utf8').split('\0').filter((entry) => entry.includes('='));
  return entries.filter((entry) => {
    const name = entry.slice(0, entry.indexOf('='));
    return !AGENT_BASE_VARIABLES.includes(name) && !name.startsWith('LC_');
  });
}

describe('an agent in the bubblewrap sandbox', { skip, timeout: 120_000 }, () => {
  let scratch: string;
  let dataDir: string;
  let repo: string;
  let mine: string;
  let other: string;
  let runner: AcpAgentRunner;
  const sandboxOf = (): AgentSandbox => ({ bwrap: (probe as { bwrap: string }).bwrap, hide: [dataDir], show: [REPO_ROOT], homes: join(dataDir, 'agent-homes') });

  before(async () => {
    // Outside /tmp (which the sandbox replaces whole): what hides DATA_DIR is the sandbox's `hide`, not that.
    scratch = await mkdtemp('/var/tmp/acp-sandbox-');
    dataDir = join(scratch, 'data');
    repo = join(scratch, 'repo');
    await mkdir(repo, { recursive: true });
    git(repo, 'init', '--quiet', '--initial-branch=main');
    write(repo, 'README.md', '# Demo\n');
    git(repo, 'add', '--all');
    git(repo, 'commit', '--quiet', '-m', 'Initial commit');
    // Two threads' worktrees, laid out as the service's are (DATA_DIR/worktrees/<thread>, branch console/<thread>).
    mine = join(dataDir, 'worktrees', 'mine');
    other = join(dataDir, 'worktrees', 'other');
    git(repo, 'worktree', 'add', '--quiet', '-b', 'console/mine', mine, 'main');
    git(repo, 'worktree', 'add', '--quiet', '-b', 'console/other', other, 'main');
    writeFileSync(join(other, 'other-thread.txt'), 'other-thread-marker\n');
    writeFileSync(join(dataDir, 'secret.txt'), 'data-dir-marker\n');
    runner = createAcpAgentRunner({ demoAgent: builtDemoAgent(), log, env: process.env, sandbox: sandboxOf() });
  });
  after(async () => {
    await runner?.close();
    await rm(scratch, { recursive: true, force: true });
  });

  it("cannot read the service's environment, its data directory or another thread's worktree", async () => {
    const text = await run(runner, mine, [
      `echo "environ:"; tr '\\0' '\\n' < /proc/${process.pid}/environ`,
      `echo "processes:"; ls /proc | grep -x '${process.pid}'`,
      `echo "secret:"; cat '${join(dataDir, 'secret.txt')}'`,
      `echo "other:"; cat '${join(other, 'other-thread.txt')}'; ls '${other}' | sed 's/^/listed: /'`,
      'echo "home: $HOME"',
      `echo "run:"; ls /run | sed 's/^/in run: /'`,
      'exit 0',
    ].join('\n'));
    const own = ownEnvironEntries();
    assert.ok(own.length > 0, 'this test process has variables no agent gets');
    for (const entry of own) assert.ok(!text.includes(entry), `the agent read the service's ${entry.slice(0, entry.indexOf('='))}`);
    assert.doesNotMatch(text, /data-dir-marker/, 'the agent read a file of DATA_DIR');
    assert.doesNotMatch(text, /other-thread-marker|^listed: /m, "the agent read another thread's worktree");
    // /run is the sandbox's own, but for the resolver's file (systemd-resolved's lives there).
    const resolver = realpathSync('/etc/resolv.conf').split('/')[2];
    for (const entry of readdirSync('/run').filter((name) => name !== resolver)) {
      assert.ok(!text.includes(`in run: ${entry}\n`), `the agent sees /run/${entry} (the machine's daemons' sockets)`);
    }
    assert.doesNotMatch(text, new RegExp(`processes:\\n${process.pid}\\n`), "the agent sees the service's process");
    assert.match(text, new RegExp(`home: ${join(dataDir, 'agent-homes', 'shell')}\\n`), 'the agent has a home of its own');
  });

  it('hides a DATA_DIR named through a symbolic link, by either name', async () => {
    const link = join(scratch, 'data-link');
    symlinkSync(dataDir, link);
    const linked = createAcpAgentRunner({ demoAgent: builtDemoAgent(), log, env: process.env, sandbox: { ...sandboxOf(), hide: [link] } });
    try {
      const text = await run(linked, join(link, 'worktrees', 'mine'), `cat '${join(link, 'secret.txt')}' '${join(dataDir, 'secret.txt')}' 2>&1; ls '${join(link, 'worktrees')}'`);
      assert.doesNotMatch(text, /data-dir-marker|other/, text);
      assert.match(text, /^mine$/m, 'its own worktree is there');
    } finally {
      await linked.close();
    }
  });

  it('writes and commits in its own worktree, but cannot change the repository configuration or its worktree link', async () => {
    const text = await run(runner, mine, [
      'echo mine > mine.txt',
      'git add mine.txt && git -c user.name=Agent -c user.email=agent@example.com commit --quiet -m "the agent commit" && echo committed',
      'git config --local agent.hook evil 2>/dev/null || echo "config refused"',
      "echo 'gitdir: /tmp/elsewhere' > .git 2>/dev/null || echo 'link refused'",
      'exit 0',
    ].join('\n'));
    assert.match(text, /committed/, text);
    assert.equal(readFileSync(join(mine, 'mine.txt'), 'utf8'), 'mine\n');
    assert.equal(git(repo, 'log', '-1', '--format=%s', 'console/mine'), 'the agent commit');
    assert.match(text, /config refused/);
    assert.doesNotMatch(readFileSync(join(repo, '.git', 'config'), 'utf8'), /agent/);
    assert.match(text, /link refused/);
    assert.match(readFileSync(join(mine, '.git'), 'utf8'), /^gitdir: .*worktrees\/mine/);
  });

  it('runs the bundled demo agent (node and tsx from the installation, read-only) and learns what it offers', async () => {
    const demo: Agent = { ...shell, id: 'demo', command: null };
    const offer = await runner.offers(demo, { wait: true });
    assert.equal(offer.kind, 'offered');
    const updates: TurnUpdate[] = [];
    await runner.runTurn({
      agent: demo, sessionId: null, cwd: mine, prompt: 'hello', mode: null, model: null, effort: null,
      onSession: () => {}, onUpdate: (update) => void updates.push(update), onPermission: async () => ({ outcome: 'cancelled' }),
    });
    assert.match(updates.flatMap((update) => (update.kind === 'text' ? [update.text] : [])).join(''), /\[demo\] mode=/);
  });

  it('reaches the host\'s network by default, and only a loopback of its own with network "none"', async () => {
    const server = createServer((socket) => socket.end());
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as AddressInfo;
    const connect = `node -e "require('net').connect(${port}, '127.0.0.1').on('connect', () => { console.log('reached'); process.exit(0); }).on('error', (e) => { console.log('unreached', e.code); process.exit(0); })"`;
    try {
      assert.match(await run(runner, mine, connect), /^reached/);
      const offline = createAcpAgentRunner({ demoAgent: builtDemoAgent(), log, env: process.env, sandbox: sandboxOf() });
      try {
        assert.match(await run(offline, mine, connect, { ...shell, network: 'none' }), /^unreached ECONNREFUSED/);
      } finally {
        await offline.close();
      }
    } finally {
      server.close();
    }
  });

  it('says a command that is not found or not executable is so, as without the sandbox', async () => {
    await assert.rejects(run(runner, mine, 'true', { ...shell, id: 'missing', command: ['no-such-agent-command-here'] }), /^Error: the agent could not start: its command was not found$/);
    const plain = join(scratch, 'not-executable');
    writeFileSync(plain, '#!/bin/sh\n');
    await assert.rejects(run(runner, mine, 'true', { ...shell, id: 'plain', command: [plain] }), /^Error: the agent could not start: its command is not executable$/);
  });

  it('has one process per working directory, ends an idle one, and ends the least recently used past its bound', async () => {
    const elsewhere = join(scratch, 'elsewhere');
    const third = join(scratch, 'third');
    const bounded = createAcpAgentRunner({ demoAgent: builtDemoAgent(), log, env: process.env, sandbox: { ...sandboxOf(), homes: join(dataDir, 'agent-homes') }, sandboxedProcesses: 2, sandboxIdleMs: 1_000 });
    try {
      await run(bounded, mine, 'echo one');
      await run(bounded, elsewhere, 'echo two');
      assert.equal(bounded.stats().alive, 2);
      // Its own directory only: the other's process does not see the first's files.
      assert.match(await run(bounded, elsewhere, `ls '${mine}' 2>&1 || true`), /No such file/);
      await run(bounded, mine, 'echo again');
      assert.equal(bounded.stats().alive, 2);
      // A third directory at the bound of two: the least recently used (elsewhere's) is ended first.
      await run(bounded, third, 'echo three');
      for (const end = Date.now() + 10_000; bounded.stats().alive > 2; await sleep(25)) if (Date.now() > end) assert.fail('the bound was not kept');
      assert.equal(bounded.stats().restarts, 0);
      // Idle past sandboxIdleMs: ended.
      for (const end = Date.now() + 15_000; bounded.stats().alive > 0; await sleep(50)) if (Date.now() > end) assert.fail('idle processes were not ended');
    } finally {
      await bounded.close();
    }
  });
});
