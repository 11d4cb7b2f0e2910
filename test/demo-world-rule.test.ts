import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { MEMORY_DATA_DIR, startEmbeddedPostgres } from '../adapters/embedded/pglite-server.ts';
import { DEMO_LOGIN_TOKEN, DEMO_MCP_PATH } from '../src/open-storage.ts';
import { serviceEntry } from './support/built.ts';

/** Runs `src/main.ts` until it listens; answers its port, log lines, stderr so far, and a stop. */
async function startMain(env: Record<string, string>) {
  const child = spawn(process.execPath, [serviceEntry()], {
    env: { ...process.env, PORT: '0', DATA_DIR: mkdtempSync(join(tmpdir(), 'console-demo-')), ARTIFACT_SANDBOX_ORIGIN: 'http://sandbox.localhost:1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const logs: Record<string, unknown>[] = [];
  for await (const line of createInterface({ input: child.stdout! })) {
    const entry = JSON.parse(line);
    logs.push(entry);
    if (entry.msg === 'console service listening') {
      child.stdout!.resume();
      // The banner follows the listening line.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const stop = async () => {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        await exited;
      };
      return { port: Number(new URL(entry.url as string).port), logs, stderr: () => stderr, stop };
    }
  }
  throw new Error(`the service never listened: ${stderr}`);
}

describe('the demo world', () => {
  it('is never imported into a PostgreSQL database by default: no demo token, no demo provider', { timeout: 60_000 }, async () => {
    // An empty PostgreSQL, served by PGlite over the wire protocol, is what a fresh production database looks like.
    const server = await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR, maxConnections: 20 });
    try {
      const main = await startMain({ CONSOLE_STORAGE: 'postgres', DATABASE_URL: server.url });
      try {
        assert.ok(!main.logs.some((l) => l.msg === 'world imported'));
        assert.ok(main.logs.some((l) => /no world imported/.test(String(l.msg))), 'says why no one can sign in');
        const threads = await fetch(`http://127.0.0.1:${main.port}/api/console/threads`, { headers: { authorization: `Bearer ${DEMO_LOGIN_TOKEN}` } });
        assert.equal(threads.status, 401, 'the demo login token names no user');
        const provider = await fetch(`http://127.0.0.1:${main.port}${DEMO_MCP_PATH}`, { method: 'POST', headers: { authorization: 'Bearer demo-provider-secret' } });
        assert.equal(provider.status, 404, 'the demo MCP provider is not mounted');
        assert.doesNotMatch(main.stderr(), new RegExp(DEMO_LOGIN_TOKEN), 'no demo token is printed');
      } finally {
        await main.stop();
      }
    } finally {
      await server.close();
    }
  });

  it('is served in memory mode with its token and its provider', { timeout: 60_000 }, async () => {
    const main = await startMain({ CONSOLE_STORAGE: 'memory' });
    try {
      const threads = await fetch(`http://127.0.0.1:${main.port}/api/console/threads`, { headers: { authorization: `Bearer ${DEMO_LOGIN_TOKEN}` } });
      assert.equal(threads.status, 200);
      const provider = await fetch(`http://127.0.0.1:${main.port}${DEMO_MCP_PATH}`, { method: 'POST' });
      assert.equal(provider.status, 401, 'mounted, and asks for its credential');
      assert.match(main.stderr(), new RegExp(`demo login token \\(alice\\): ${DEMO_LOGIN_TOKEN}`));
    } finally {
      await main.stop();
    }
  });
});
