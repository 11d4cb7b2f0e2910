import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { createInterface } from 'node:readline';
import { randomUUID } from 'node:crypto';
import type { App } from '../src/app.ts';
import { connectLive } from './support/live-client.ts';
import { attach, createListener, listen, shutdown } from '../src/server.ts';
import { exitOnSignals, HARD_EXIT_MS } from '../src/exit-on-signals.ts';
import { createLogger } from '../src/logging.ts';
import { groupAlive, startNpm, waitUntil } from './support/npm-start.ts';
import { serviceEntry } from './support/built.ts';
import { waitFor } from './support/wait-for.ts';

/** Starts `src/main.ts` as `npm start` does, on an ephemeral port, and reads the port it logs. */
async function startMain() {
  const child = spawn(process.execPath, [serviceEntry()], {
    env: { ...process.env, PORT: '0', CONSOLE_STORAGE: 'memory', ARTIFACT_SANDBOX_ORIGIN: 'http://sandbox.localhost:1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  for await (const line of lines) {
    const entry = JSON.parse(line);
    if (entry.msg === 'console service listening') return { child, port: Number(new URL(entry.url).port) };
  }
  throw new Error('the service never listened');
}

describe('graceful shutdown', () => {
  it('finishes the request in flight with Connection: close, refuses new connections, then resolves', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const inFlight = new Promise<void>((resolve) => (started = resolve));
    let draining = false;
    let closedApp = false;
    const app: App = {
      onRequest: (_req, res) => {
        started();
        void held.then(() => {
          res.writeHead(200, draining ? { connection: 'close' } : {});
          res.end('done');
        });
      },
      onUpgrade: () => {},
      drain: () => {
        draining = true;
      },
      close: async () => {
        closedApp = true;
      },
    };
    const server = createListener();
    attach(server, app);
    const port = await listen(server, 0, '127.0.0.1');
    const answer = fetch(`http://127.0.0.1:${port}/slow`).then(async (res) => ({
      status: res.status,
      connection: res.headers.get('connection'),
      text: await res.text(),
    }));
    await inFlight;
    const stopped = shutdown(server, app, 5000);
    const refused = connect(port, '127.0.0.1');
    const [error] = await once(refused, 'error');
    assert.equal((error as NodeJS.ErrnoException).code, 'ECONNREFUSED');
    assert.equal(closedApp, false, 'the app is not released while a request is in flight');
    release();
    assert.deepEqual(await answer, { status: 200, connection: 'close', text: 'done' });
    await stopped;
    assert.equal(closedApp, true);
  });

  it('npm start exits 0 on SIGTERM at once, even with a keep-alive connection open', { timeout: 30_000 }, async () => {
    const { child, port } = await startMain();
    const exited = once(child, 'exit');
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await once(socket, 'data');
    const began = Date.now();
    child.kill('SIGTERM');
    const [code] = await exited;
    assert.equal(code, 0);
    assert.ok(Date.now() - began < 4000, 'an idle keep-alive connection does not hold the exit');
  });

  it('npm start closes live sockets with 1001 on SIGTERM and exits 0', { timeout: 30_000 }, async () => {
    const { child, port } = await startMain();
    const exited = once(child, 'exit');
    const socket = await connectLive(port, { thread: randomUUID() }, { authorization: 'Bearer dev-alice' });
    assert.ok(!('refused' in socket));
    child.kill('SIGTERM');
    assert.equal(await socket.closed, 1001);
    const [code] = await exited;
    assert.equal(code, 0);
  });

  it('npm start answers a POST with an h2c Upgrade header as plain HTTP/1.1 (its body read), then exits 0 on SIGTERM at once', { timeout: 30_000 }, async () => {
    const { child, port } = await startMain();
    const exited = once(child, 'exit');
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    await once(socket, 'connect');
    socket.on('error', () => {});
    let received = '';
    socket.on('data', (chunk) => (received += chunk));
    const body = JSON.stringify({ token: 'dev-alice' });
    socket.write(
      `POST /api/session HTTP/1.1\r\nHost: localhost:${port}\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n` +
        `HTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await waitUntil(() => received.includes('\r\n\r\n'), 5_000, 'no answer');
    assert.match(received, /^HTTP\/1\.1 204 /, 'the body was read: the demo token signs in');
    assert.match(received, /set-cookie: console_session=/i);
    // The connection stays open, idle, as a client's would: it must not hold the exit.
    const began = Date.now();
    child.kill('SIGTERM');
    const [code] = await exited;
    assert.equal(code, 0);
    assert.ok(Date.now() - began < 4000, `exited after ${Date.now() - began} ms`);
    socket.destroy();
  });

  it('npm start exits 0 on SIGTERM at once though a refused websocket upgrade is held open by its client', { timeout: 30_000 }, async () => {
    const { child, port } = await startMain();
    const exited = once(child, 'exit');
    // Half-open allowed: the client keeps its side open after the server's answer and FIN.
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    await once(socket, 'connect');
    socket.on('error', () => {});
    let received = '';
    socket.on('data', (chunk) => (received += chunk));
    // The sandbox path is never a websocket: refused 404; the client never closes its side.
    socket.write(`GET /artifacts/sandbox HTTP/1.1\r\nHost: localhost:${port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`);
    await waitUntil(() => received.includes('\r\n\r\n'), 5_000, 'no answer');
    assert.match(received, /^HTTP\/1\.1 404 /);
    const began = Date.now();
    child.kill('SIGTERM');
    const [code] = await exited;
    assert.equal(code, 0);
    assert.ok(Date.now() - began < 4000, `exited after ${Date.now() - began} ms`);
    socket.destroy();
  });

  it('npm start exits 0 on SIGINT', { timeout: 30_000 }, async () => {
    const { child } = await startMain();
    const exited = once(child, 'exit');
    child.kill('SIGINT');
    const [code] = await exited;
    assert.equal(code, 0);
  });

  it('npm start: SIGTERM to the npm process ends the whole process group and frees the port, with a request still in flight', { timeout: 60_000 }, async () => {
    const started = await startNpm();
    // A request whose body never ends: the drain waits for it, then the connection is cut.
    const stalled = connect(started.port, '127.0.0.1');
    await once(stalled, 'connect');
    stalled.on('error', () => {});
    stalled.write('POST /api/session HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"tok');
    const idle = connect(started.port, '127.0.0.1');
    await once(idle, 'connect');
    idle.on('error', () => {});
    const began = Date.now();
    process.kill(started.pid, 'SIGTERM');
    await waitUntil(() => !groupAlive(started.pid), HARD_EXIT_MS + 2_000, 'the process group is still alive');
    assert.ok(Date.now() - began <= HARD_EXIT_MS + 2_000);
    const refused = connect(started.port, '127.0.0.1');
    const [error] = await once(refused, 'error');
    assert.equal((error as NodeJS.ErrnoException).code, 'ECONNREFUSED', 'the port is free');
    stalled.destroy();
    idle.destroy();
  });

  it('npm start: SIGINT to the npm process ends the whole process group', { timeout: 60_000 }, async () => {
    const started = await startNpm();
    process.kill(started.pid, 'SIGINT');
    await waitUntil(() => !groupAlive(started.pid), 5_000, 'the process group is still alive');
  });

  it('exits 1 after the hard deadline when the drain never ends, without holding the event loop', async () => {
    const exits: number[] = [];
    const listeners = new Map<string, () => void>();
    exitOnSignals({
      log: createLogger('silent'),
      stop: () => new Promise(() => {}),
      exit: (code) => exits.push(code),
      on: (signal, listener) => listeners.set(signal, listener),
      hardExitMs: 50,
    });
    assert.deepEqual([...listeners.keys()].sort(), ['SIGINT', 'SIGTERM']);
    listeners.get('SIGTERM')!();
    listeners.get('SIGINT')!(); // npm and the terminal both deliver Ctrl-C: the second changes nothing
    await waitFor(() => exits.length > 0, { what: 'the exit past the hard deadline' });
    await new Promise((resolve) => setTimeout(resolve, 100)); // a window in which no second exit must come
    assert.deepEqual(exits, [1]);
  });

  it('exits 0 once the drain ends, and 1 when it fails', async () => {
    for (const [stop, code] of [[async () => {}, 0], [async () => Promise.reject(new Error('x')), 1]] as const) {
      const exits: number[] = [];
      let fire!: () => void;
      exitOnSignals({ log: createLogger('silent'), stop, exit: (c) => exits.push(c), on: (_s, l) => (fire = l), hardExitMs: 5_000 });
      fire();
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(exits, [code]);
    }
  });
});
