import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { HARD_EXIT_MS } from '../src/exit-on-signals.ts';
import { freePort } from './support/free-port.ts';
import { groupAlive, waitUntil } from './support/npm-start.ts';

const METRICS_TOKEN = 'metrics-token-for-the-stall';
const REQUESTS = 3_000;
const CONCURRENCY = 16;
/** Each request logs its path: about 1.2 KB a line, some 3.6 MB in all, the pipe's 64 KiB many times over. */
const LONG_PATH = `/nothing-here-${'x'.repeat(1_000)}`;

/**
 * `npm start | sleep 600`, a few thousand requests, then SIGTERM: the process never exited, its main
 * thread spinning in Atomics.wait (pino's synchronous write retrying on the full pipe), and no request
 * was answered meanwhile. A reader that stalls now costs log lines, counted, never the service.
 */
describe('a log reader that never reads', () => {
  it('npm start into a stalled pipe: requests and /healthz are answered, dropped lines are counted, SIGTERM exits within the deadline', { timeout: 120_000 }, async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'console-stalled-log-'));
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    // It holds the read end of the pipe open and never reads it.
    const reader = spawn('sleep', ['600'], { stdio: ['pipe', 'ignore', 'ignore'] });
    t.after(() => reader.kill('SIGKILL'));
    const port = await freePort();
    const npm = spawn('npm', ['start'], {
      detached: true,
      env: {
        ...process.env, PORT: String(port), CONSOLE_STORAGE: 'memory', DATA_DIR: dataDir, ARTIFACT_SANDBOX_ORIGIN: 'http://sandbox.localhost:1',
        LOG_LEVEL: 'info', METRICS_TOKEN,
      },
      // The JSON log, npm's lines and the banner all go into the pipe nobody reads.
      stdio: ['ignore', reader.stdin!, reader.stdin!],
    });
    const pgid = npm.pid!;
    t.after(() => {
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        // gone already, as it should be
      }
    });
    const url = (path: string) => `http://127.0.0.1:${port}${path}`;
    const answered = async (path: string, headers: Record<string, string> = {}) => {
      const res = await fetch(url(path), { headers, signal: AbortSignal.timeout(5_000) });
      return { status: res.status, text: await res.text() };
    };
    await waitUntil(async () => (await answered('/readyz').catch(() => null))?.status === 200, 60_000, '/readyz never answered 200');

    let sent = 0;
    const worker = async () => {
      while (sent < REQUESTS) {
        sent++;
        assert.equal((await answered(LONG_PATH)).status, 404);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));

    const health = await answered('/healthz');
    assert.equal(health.status, 200, 'alive while its log stalls');
    const metrics = await answered('/metrics', { authorization: `Bearer ${METRICS_TOKEN}` });
    assert.equal(metrics.status, 200, metrics.text);
    const dropped = Number(/^console_log_lines_dropped_total (\d+)/m.exec(metrics.text)?.[1]);

    const signalled = Date.now();
    process.kill(-pgid, 'SIGTERM');
    await waitUntil(() => !groupAlive(pgid), HARD_EXIT_MS + 2_000, 'the service did not exit after SIGTERM');
    t.diagnostic(`${dropped} lines dropped; exited ${Date.now() - signalled} ms after SIGTERM`);
    assert.ok(dropped > 0, `the dropped lines are counted: ${dropped}`);
  });
});
