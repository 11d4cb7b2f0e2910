import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { before, describe, it } from 'node:test';

const root = new URL('..', import.meta.url).pathname;

/**
 * The CommonJS modules node loaded from node_modules (its require cache, read as the process exits)
 * by the built service, started on `storage` until `/readyz` answers 200. (MikroORM's check that its
 * packages share one version reads their package.json files: data, not modules.)
 */
async function modulesLoaded(storage: 'embedded' | 'memory'): Promise<{ packages: string[]; builtins: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'console-bundle-'));
  const report = join(dir, 'loaded.json');
  const preload = join(dir, 'report.cjs');
  writeFileSync(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(report)}, JSON.stringify({ cache: Object.keys(require.cache), builtins: process.moduleLoadList })));\n`);
  const child = spawn(process.execPath, ['--require', preload, join(root, 'dist', 'src', 'main.js')], {
    env: { ...process.env, PORT: '0', CONSOLE_STORAGE: storage, DATA_DIR: join(dir, 'data'), ARTIFACT_SANDBOX_ORIGIN: 'http://sandbox.localhost:1', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const exited = once(child, 'exit');
  try {
    let port = 0;
    for await (const line of createInterface({ input: child.stdout! })) {
      if (line.startsWith('{') && JSON.parse(line).msg === 'console service listening') {
        port = Number(new URL(JSON.parse(line).url).port);
        break;
      }
    }
    child.stdout!.resume();
    assert.ok(port > 0, 'the service never listened');
    for (let i = 0; (await fetch(`http://127.0.0.1:${port}/readyz`).then((res) => res.status, () => 0)) !== 200; i++) {
      assert.ok(i < 600, '/readyz never answered 200');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
  const { cache, builtins } = JSON.parse(readFileSync(report, 'utf8')) as { cache: string[]; builtins: string[] };
  return { packages: cache.filter((file) => file.includes('/node_modules/') && !file.endsWith('.json')), builtins };
}

/** Checks a start: no package module loaded by node, and no undici (pg's question whether it runs on Cloudflare loaded it). */
function assertBundled({ packages, builtins }: { packages: string[]; builtins: string[] }): void {
  assert.deepEqual(packages, []);
  assert.deepEqual(builtins.filter((name) => name.includes('undici')), [], 'node loaded undici before /readyz');
}

describe('dist/src/main.js bundles the service with its dependencies (docs/benchmarks.md, second start)', () => {
  before(() => {
    assert.equal(spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { stdio: 'inherit' }).status, 0);
  });

  it('a start on embedded storage to /readyz loads no CommonJS module from node_modules (MikroORM, knex, pg, pino are in the bundle), nor undici', { timeout: 120_000 }, async () => {
    assertBundled(await modulesLoaded('embedded'));
  });

  it('and none in memory mode', { timeout: 60_000 }, async () => {
    assertBundled(await modulesLoaded('memory'));
  });

  it('the demo agent is one file: it imports no package (the ACP SDK and zod are in it)', () => {
    const agent = readFileSync(join(root, 'dist', 'src', 'demo', 'acp-agent.js'), 'utf8');
    assert.deepEqual([...agent.matchAll(/\b(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map((match) => match[1]).filter((name) => !name!.startsWith('node:')), []);
  });
});
