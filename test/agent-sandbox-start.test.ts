import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { probeSandbox } from '../adapters/acp/sandbox-probe.ts';
import { DEMO_LOGIN_TOKEN } from '../src/open-storage.ts';
import { serviceEntry } from './support/built.ts';

// The service says at start, in its log and in /readyz, whether agents run in a sandbox; the demo
// world's agents (the bundled demo agent, run from the installation) still answer inside it.

const ROOT = new URL('..', import.meta.url).pathname;
const probe = await probeSandbox(process.env.PATH ?? '/usr/bin:/bin');

/** Starts src/main.ts (memory storage, the demo world) and waits for /readyz; answers its log and readiness. */
async function started(env: Record<string, string>, check: (port: number) => Promise<void>): Promise<Record<string, unknown>[]> {
  const scratch = mkdtempSync(join(tmpdir(), 'sandbox-start-'));
  const child = spawn(process.execPath, [serviceEntry()], {
    cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'ignore'],
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: join(scratch, 'home'), LANG: 'C.UTF-8', HOST: '127.0.0.1', PORT: '0',
      CONSOLE_STORAGE: 'memory', DATA_DIR: join(scratch, 'data'), ARTIFACT_SANDBOX_ORIGIN: '', ...env,
    },
  });
  const lines: Record<string, unknown>[] = [];
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  try {
    const port = await new Promise<number>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        const entry = JSON.parse(line) as Record<string, unknown>;
        lines.push(entry);
        if (entry.msg === 'console service listening') resolve(Number(new URL(String(entry.url)).port));
      });
      void exited.then(() => reject(new Error('the service exited before listening')));
    });
    for (const end = Date.now() + 30_000; (await fetch(`http://127.0.0.1:${port}/readyz`)).status !== 200; await sleep(50)) {
      if (Date.now() > end) assert.fail('not ready within 30 s');
    }
    await check(port);
    return lines;
  } finally {
    process.kill(-child.pid!, 'SIGTERM');
    await exited;
    rmSync(scratch, { recursive: true, force: true });
  }
}

describe('the agent sandbox at start', { timeout: 120_000 }, () => {
  it('sandboxed where bubblewrap works: said in the log and /readyz, and the demo agents answer from inside it', { skip: probe.ok ? false : `no sandbox here: ${!probe.ok && probe.reason}` }, async () => {
    const log = await started({}, async (port) => {
      const ready = await (await fetch(`http://127.0.0.1:${port}/readyz`)).json();
      assert.equal(ready.agent_sandbox.kind, 'bubblewrap');
      const permissions = await (await fetch(`http://127.0.0.1:${port}/api/console/permissions`, { headers: { authorization: `Bearer ${DEMO_LOGIN_TOKEN}` } })).json();
      assert.ok(permissions.length > 0);
      for (const entry of permissions) assert.equal(entry.unavailable, null, `${entry.agent}: ${entry.unavailable}`);
    });
    assert.ok(log.some((entry) => entry.msg === 'agents run in a sandbox'));
  });

  it('AGENT_SANDBOX=off: agents run as the service runs, and the log (a warning) and /readyz say so', async () => {
    const log = await started({ AGENT_SANDBOX: 'off' }, async (port) => {
      const ready = await (await fetch(`http://127.0.0.1:${port}/readyz`)).json();
      assert.equal(ready.agent_sandbox.kind, 'off');
    });
    assert.ok(log.some((entry) => entry.msg === 'agents run without a sandbox' && entry.level === 40));
  });

  it('no bubblewrap on PATH: no sandbox, and the log and /readyz say why', async () => {
    const log = await started({ PATH: '/nonexistent' }, async (port) => {
      const ready = await (await fetch(`http://127.0.0.1:${port}/readyz`)).json();
      assert.deepEqual(ready.agent_sandbox, { kind: 'none', detail: 'bubblewrap is not installed (no bwrap on PATH)' });
    });
    assert.ok(log.some((entry) => entry.msg === 'agents run without a sandbox'));
  });
});
