// Runs node:test suites in a Chromium page: the files named on the command line are bundled by esbuild
// for the browser (their `node:test`, `node:assert`, `node:crypto` and `node:timers/promises` pointed at
// the small shims beside this file; nothing else of Node is offered, so a suite that needs more fails to
// bundle), served on 127.0.0.1, and run in headless Chromium. One line per test; exit 1 on a failure.
// `node --import tsx test/runtimes/chromium.ts test/domain/csp.test.ts ...`
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { launchChromium, NO_CHROMIUM } from '../support/chromium.ts';
import type { Result } from './shims/node-test.ts';

const here = fileURLToPath(new URL('.', import.meta.url));
const SHIMS: Readonly<Record<string, string>> = {
  'node:test': join(here, 'shims/node-test.ts'),
  'node:assert': join(here, 'shims/assert.ts'),
  'node:assert/strict': join(here, 'shims/assert.ts'),
  'node:crypto': join(here, 'shims/crypto.ts'),
  'node:timers/promises': join(here, 'shims/timers.ts'),
};

/** `node:` modules: the shims, or a build error naming the file that asked for another. */
const nodeShims: Plugin = {
  name: 'node-shims',
  setup(builder) {
    builder.onResolve({ filter: /^node:/ }, (args) =>
      SHIMS[args.path] !== undefined ? { path: SHIMS[args.path] } : { errors: [{ text: `${args.path} is not offered in the browser (asked by ${args.importer})` }] });
  },
};

const files = process.argv.slice(2).map((file) => resolve(file));
if (files.length === 0) {
  console.error('usage: chromium.ts <test files>');
  process.exit(2);
}

const entry = [
  ...files.map((file) => `import ${JSON.stringify(file)};`),
  `import { runAll } from ${JSON.stringify(SHIMS['node:test'])};`,
  'runAll().then((results) => { globalThis.__results = results; }, (error) => { globalThis.__results = [{ name: "the run", status: "fail", error: String(error) }]; });',
].join('\n');
const bundled = await build({
  stdin: { contents: entry, resolveDir: process.cwd(), sourcefile: 'runtimes-entry.ts', loader: 'ts' },
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  write: false,
  logLevel: 'silent',
  plugins: [nodeShims],
});
const script = bundled.outputFiles[0]!.text;

const browser = await launchChromium();
if (browser === null) {
  console.log(`# chromium: skipped: ${NO_CHROMIUM}`);
  process.exit(0);
}
const server = createServer((req, res) => {
  if (req.url === '/bundle.js') {
    res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(script);
    return;
  }
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!DOCTYPE html><title>runtimes</title><script type="module" src="/bundle.js"></script>');
});
await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
let failed = 0;
try {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(String(error)));
  await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  await page.waitForFunction(() => (globalThis as { __results?: unknown }).__results !== undefined, undefined, { timeout: 180_000 });
  const results = (await page.evaluate(() => (globalThis as { __results?: unknown }).__results)) as Result[];
  for (const result of results) {
    console.log(`${result.status === 'fail' ? 'not ok' : 'ok'} - ${result.name}${result.status === 'skip' ? ' # SKIP' : ''}`);
    if (result.status === 'fail') console.log(`  ${String(result.error).split('\n').slice(0, 6).join('\n  ')}`);
  }
  failed = results.filter((r) => r.status === 'fail').length + errors.length;
  for (const error of errors) console.log(`not ok - page error: ${error}`);
  const count = (status: Result['status']) => results.filter((r) => r.status === status).length;
  console.log(`# chromium: ${count('pass')} passed, ${count('fail')} failed, ${count('skip')} skipped (${files.length} files)`);
} finally {
  await browser.close();
  server.close();
}
process.exit(failed > 0 ? 1 : 0);
