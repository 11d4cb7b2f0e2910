import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';

const root = new URL('..', import.meta.url).pathname;
const env = () => ({
  ...process.env, PORT: '0', CONSOLE_STORAGE: 'memory', DATA_DIR: mkdtempSync(join(tmpdir(), 'console-log-lines-')),
  ARTIFACT_SANDBOX_ORIGIN: 'http://sandbox.localhost:1', LOG_LEVEL: 'info',
});

/** Starts `command` in a process group of its own, killed when the file ends; its stdout's lines until `until` matches one. */
async function linesUntil(command: string, args: string[], until: RegExp): Promise<string[]> {
  const child = spawn(command, args, { cwd: root, detached: true, env: env(), stdio: ['ignore', 'pipe', 'ignore'] });
  after(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone already
    }
  });
  const lines: string[] = [];
  for await (const line of createInterface({ input: child.stdout! })) {
    lines.push(line);
    if (until.test(line)) return lines;
  }
  throw new Error(`the service ended before ${until}:\n${lines.join('\n')}`);
}

describe('the start\'s log for its reader (docs/operations.md, "Log lines")', () => {
  before(() => {
    assert.equal(spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { stdio: 'inherit' }).status, 0);
  });

  it('stdout a pipe: every line is a JSON record, the banner is not among them', { timeout: 60_000 }, async () => {
    const lines = await linesUntil(process.execPath, ['scripts/start.mjs'], /console service listening/);
    const records = lines.map((line) => JSON.parse(line) as { msg: string });
    assert.ok(records.some((record) => record.msg === 'console service listening'));
    assert.ok(!lines.some((line) => line.includes('Console service on')), 'the banner is on stderr');
  });

  it('stdout a terminal (a pseudo terminal, script(1)): lines for a person, not JSON', { timeout: 60_000, skip: spawnSync('script', ['-V']).error ? 'script(1) is not installed' : false }, async () => {
    const lines = await linesUntil('script', ['-qfec', `${process.execPath} scripts/start.mjs`, '/dev/null'], /console service listening/);
    const line = lines.find((l) => l.includes('console service listening'))!.replace(/\x1b\[[0-9;]*m/g, '');
    assert.match(line, /INFO.*console service listening/);
    assert.ok(!line.trimStart().startsWith('{'), line);
  });
});
