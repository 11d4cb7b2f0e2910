import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ask } from './support/http.ts';
import { connectLive, typesOf } from './support/live-client.ts';
import { serviceEntry } from './support/built.ts';
import { git } from './support/git-repo.ts';

const DEMO_ARTIFACT = '01a1fd37-cdcc-7c02-8a30-31d9bdf0bd97';

/** A port free right now: the demo points its installation at the port it listens on, so it cannot be 0. */
async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const port = (probe.address() as { port: number }).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe('npm start with the demo world', () => {
  let port = 0;
  let child: ReturnType<typeof spawn>;
  const dataDir = mkdtempSync(join(tmpdir(), 'demo-'));
  before(async () => {
    port = await freePort();
    // As a user starts it: `npm start` compiles to dist/ when a source changed, then runs the JavaScript.
    child = spawn('npm', ['start'], {
      detached: true,
      env: { ...process.env, PORT: String(port), CONSOLE_STORAGE: 'memory', LOG_LEVEL: 'info', DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    for await (const line of createInterface({ input: child.stdout! })) {
      if (line.startsWith('{') && JSON.parse(line).msg === 'console service listening') break;
    }
    child.stdout!.resume();
  });
  after(async () => {
    const exited = once(child, 'exit');
    process.kill(-child.pid!, 'SIGTERM');
    await exited;
  });

  it('runs the compiled service: its viewer script is bundled from the compiled host', async () => {
    const res = await ask(port, { path: '/assets/viewer.js', headers: { host: `localhost:${port}` } });
    assert.equal(res.status, 200, res.text);
    assert.match(String(res.headers['content-type']), /javascript/);
    assert.ok(res.text.length > 1000);
  });

  it('shows a working artifact out of the box: the bundled provider declares a CSP', async () => {
    const res = await ask(port, {
      path: `/api/artifacts/${DEMO_ARTIFACT}`,
      headers: { host: `localhost:${port}`, authorization: 'Bearer dev-alice' },
    });
    assert.equal(res.status, 200, res.text);
    const view = res.json();
    assert.equal(view.resource.mimeType, 'text/html;profile=mcp-app');
    assert.ok(Array.isArray(view.resource.ui.csp.connectDomains));
    assert.ok(view.sandbox_url.startsWith(`http://sandbox.localhost:${port}/artifacts/sandbox?policy=`));
    assert.equal(view.viewer_path, `/artifacts/${DEMO_ARTIFACT}`);
    assert.ok(!res.text.includes('demo-provider-secret'));
  });

  it('shows live runs out of the box: the bundled demo agent answers a directive on the socket', async () => {
    const key = randomUUID();
    const socket = await connectLive(port, { thread: key, after: '0' }, { authorization: 'Bearer dev-alice' });
    assert.ok(!('refused' in socket));
    const res = await ask(port, {
      method: 'POST', path: `/api/console/threads/${key}/directives`,
      headers: { authorization: 'Bearer dev-alice', 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Say hello', model: 'claude:opus', project: 'acme-web' }),
    });
    assert.equal(res.status, 202, res.text);
    const events = await socket.until((all) => all.some((e) => e.type === 'reflex_asleep'), 30_000);
    socket.close();
    assert.deepEqual(typesOf(events).slice(0, 2), ['message', 'run_started']);
    assert.equal(typesOf(events).at(-2), 'run_finished');
  });

  it('has a repository project out of the box: the demo agent\'s edit is in Changes, and merges into main (docs/demo.md)', async () => {
    const alice = { authorization: 'Bearer dev-alice', 'content-type': 'application/json' };
    const repo = join(dataDir, 'demo-repo');
    assert.equal(git(repo, 'rev-parse', '--abbrev-ref', 'HEAD'), 'main', 'made at the first start, on main');
    const key = randomUUID();
    const socket = await connectLive(port, { thread: key, after: '0' }, { authorization: 'Bearer dev-alice' });
    assert.ok(!('refused' in socket));
    const res = await ask(port, {
      method: 'POST', path: `/api/console/threads/${key}/directives`, headers: alice,
      body: JSON.stringify({ text: '[approval] add a note', model: 'claude:opus', project: 'demo-repo' }),
    });
    assert.equal(res.status, 202, res.text);
    const threadId = res.json().thread_id as string;
    const asked = (await socket.until((all) => all.some((e) => e.type === 'approval_requested'), 30_000)).find((e) => e.type === 'approval_requested')!;
    const pending = asked.data.pending as { id: string };
    const answered = await ask(port, { method: 'POST', path: `/api/console/threads/${threadId}/responses`, headers: alice, body: JSON.stringify({ responses: [{ id: pending.id, option: 'allow' }] }) });
    assert.equal(answered.status, 202, answered.text);
    await socket.until((all) => all.some((e) => e.type === 'reflex_asleep'), 30_000);
    socket.close();
    const changes = await ask(port, { path: `/api/console/threads/${threadId}/changes`, headers: alice });
    assert.equal(changes.status, 200, changes.text);
    assert.deepEqual(changes.json().files.map((file: { path: string; status: string }) => [file.path, file.status]), [['notes.md', 'modified']]);
    const merged = await ask(port, { method: 'POST', path: `/api/console/threads/${threadId}/changes/merge`, headers: alice, body: JSON.stringify({ strategy: 'squash', message: 'A note' }) });
    assert.equal(merged.status, 200, merged.text);
    assert.match(git(repo, 'show', 'main:notes.md'), /- \[approval\] add a note/);
  });

  it('the demo provider answers only the installation credential: no open tool endpoint', async () => {
    const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_forecast', arguments: { city: 'Paris' } } });
    const res = await ask(port, {
      method: 'POST', path: '/demo/mcp',
      headers: { host: `localhost:${port}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: call,
    });
    assert.equal(res.status, 401);
    assert.ok(!res.text.includes('Sunny'));
  });

  it('never serves the demo provider on the sandbox origin', async () => {
    const res = await ask(port, { method: 'POST', path: '/demo/mcp', headers: { host: `sandbox.localhost:${port}`, 'content-type': 'application/json' }, body: '{}' });
    assert.equal(res.status, 404);
  });
});

describe('the demo world across restarts on other ports', () => {
  it('its artifact loads after a restart of the same data dir on another port, and on port 0 (a regression: the first start froze its provider URL)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'demo-ports-'));
    for (const wanted of [await freePort(), await freePort(), 0]) {
      const child = spawn(process.execPath, [serviceEntry()], {
        // The default origins follow PORT, which port 0 cannot name: the sandbox origin is given.
        env: { ...process.env, PORT: String(wanted), CONSOLE_STORAGE: 'embedded', LOG_LEVEL: 'info', DATA_DIR: dataDir, ARTIFACT_SANDBOX_ORIGIN: 'http://sandbox.localhost:1' },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const exited = once(child, 'exit');
      try {
        let port = 0;
        for await (const line of createInterface({ input: child.stdout! })) {
          const entry = JSON.parse(line) as { msg?: string; url?: string };
          if (entry.msg === 'console service listening') {
            port = Number(new URL(entry.url!).port);
            break;
          }
        }
        child.stdout!.resume();
        assert.ok(port > 0);
        const res = await ask(port, { path: `/api/artifacts/${DEMO_ARTIFACT}`, headers: { authorization: 'Bearer dev-alice' } });
        assert.equal(res.status, 200, `port ${port}: ${res.text}`);
      } finally {
        child.kill('SIGTERM');
        await exited;
      }
    }
  });
});
