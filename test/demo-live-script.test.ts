// docs/demo.md's "A run from a shell" needs nothing from the network (issue 41): its live socket command is
// `node scripts/live.mjs` (the `ws` package the service depends on), no `npx`. The command is read from the doc
// as written and run against a started service, with the doc's directive; it prints the run's events.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startFixtureService, type TestService } from './support/service.ts';

const root = join(import.meta.dirname, '..');
const WAIT = 30_000;

describe("docs/demo.md's live socket command", () => {
  let service: TestService;
  before(async () => {
    service = await startFixtureService();
  });
  after(() => service?.close());

  it('no doc nor the README fetches a package with npx', () => {
    const docs = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
    for (const doc of docs) assert.doesNotMatch(readFileSync(join(root, doc), 'utf8'), /\bnpx\s/, doc);
  });

  it('prints the events of the run the documented directive starts', { timeout: 60_000 }, async (t) => {
    const demo = readFileSync(join(root, 'docs/demo.md'), 'utf8');
    const command = /^node scripts\/live\.mjs --token (\S+) "ws:\/\/localhost:8080(\/api\/console\/live\?thread=\$KEY&after=0)" &$/m.exec(demo);
    assert.ok(command !== null, 'docs/demo.md runs scripts/live.mjs');
    const directive = /-d '(\{"text": [^']+\})' localhost:8080\/api\/console\/threads\/\$KEY\/directives/.exec(demo);
    assert.ok(directive !== null, 'docs/demo.md sends a directive');
    assert.equal(command[1], 'dev-alice', "the demo world's token");
    // The fixture world's alice holds `token-alice` where the demo world's holds `dev-alice`.
    const key = randomUUID();
    const child = spawn(process.execPath, [join(root, 'scripts/live.mjs'), '--token', 'token-alice', `ws://localhost:${service.port}${command[2]!.replace('$KEY', key)}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    t.after(() => child.kill());
    let out = '';
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
    const seen = new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        if (out.split('\n').some((line) => line.includes('"run_finished"'))) resolve();
      });
      child.on('exit', (code) => reject(new Error(`live.mjs ended (${code}): ${err}\n${out}`)));
      setTimeout(() => reject(new Error(`no run end within ${WAIT} ms: ${err}\n${out}`)), WAIT).unref();
    });
    // The thread key is new and the socket asks from `after=0`: whenever it opens, it replays the run from its start.
    const res = await service.ask({ method: 'POST', path: `/api/console/threads/${key}/directives`, headers: { authorization: 'Bearer token-alice', 'content-type': 'application/json' }, body: directive[1]! });
    assert.equal(res.status, 202, res.text);
    await seen;
    const events = out.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { type: string });
    assert.ok(events.some((event) => event.type === 'run_started'), out);
    assert.match(out, /Say hello/);
  });
});
