// The demo world offers a Slack channel only when its variables are set (DEMO_SLACK_APP_TOKEN and
// DEMO_SLACK_BOT_TOKEN, both or neither; DEMO_SLACK_API_URL optional), as it does an XMPP one
// (test/demo-xmpp-channel.test.ts). Unset, the demo world is as it was. The tokens stay in the environment:
// the channel names their variables (`app_token_env`, `bot_token_env`), and no configuration, world, log
// line, banner or answer carries them. No Slack is reached: the service's bot is pointed at a closed port
// on this machine (DEMO_SLACK_API_URL) and keeps failing to connect, quietly.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig, type Config } from '../src/config.ts';
import { DEMO_SLACK_CHANNEL, withDemoSlackChannel } from '../src/demo/slack-channel.ts';
import { DEMO_XMPP_CHANNEL } from '../src/demo/xmpp-channel.ts';
import { createLogger } from '../src/logging.ts';
import { DEMO_LOGIN_TOKEN, openStorage, readWorld } from '../src/open-storage.ts';
import { serviceEntry } from './support/built.ts';
import { freePort } from './support/free-port.ts';

const APP_TOKEN = 'xapp-1-A0DEMO-7731-c0ffee5eed5ecre7';
const BOT_TOKEN = 'xoxb-1111-2222-d3m0b0770ken9';
const SET = { DEMO_SLACK_APP_TOKEN: APP_TOKEN, DEMO_SLACK_BOT_TOKEN: BOT_TOKEN };
/** Neither token, nor any part after its prefix, may be printed anywhere. */
const TOKENS = new RegExp(`${APP_TOKEN}|${BOT_TOKEN}|c0ffee5eed5ecre7|d3m0b0770ken9`);
const DEMO_JSON = JSON.parse(readFileSync(new URL('../src/world/demo-world.json', import.meta.url), 'utf8'));
const SOURCE = DEMO_JSON.threads[0].id as string;

const config = (env: Record<string, string>): Config => {
  // A DATA_DIR of its own: the demo world makes its repository there (docs/demo.md).
  const loaded = loadConfig({ CONSOLE_STORAGE: 'memory', DATA_DIR: mkdtempSync(join(tmpdir(), 'demo-world-')), ...env });
  assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.error));
  return loaded.value;
};

describe('the demo world\'s Slack channel: configuration and world', () => {
  it('is absent while its variables are unset (or set empty): the demo world as it was', async () => {
    for (const env of [{}, { DEMO_SLACK_APP_TOKEN: '', DEMO_SLACK_BOT_TOKEN: '', DEMO_SLACK_API_URL: '' }, { DEMO_SLACK_API_URL: 'http://127.0.0.1:9/api/' }] as Record<string, string>[]) {
      const c = config(env);
      assert.equal(c.demoSlack, null);
      const world = (await readWorld(c))!;
      assert.deepEqual(world.channels.map((ch) => ch.id), DEMO_JSON.channels.map((ch: { id: string }) => ch.id));
      assert.deepEqual(world.slack ?? [], []);
    }
    assert.equal(withDemoSlackChannel(DEMO_JSON, null), DEMO_JSON, 'the JSON itself, untouched');
  });

  it('is a slack channel when both tokens are set: every agent, nobody linked, the variables named, never a token', async () => {
    const c = config(SET);
    assert.deepEqual(c.demoSlack, { app_token_env: 'DEMO_SLACK_APP_TOKEN', bot_token_env: 'DEMO_SLACK_BOT_TOKEN', api_url: null });
    assert.doesNotMatch(JSON.stringify(c), TOKENS, 'the configuration holds no token');
    const world = (await readWorld(c))!;
    const channel = world.channels.find((ch) => ch.id === DEMO_SLACK_CHANNEL);
    assert.deepEqual(channel, { id: DEMO_SLACK_CHANNEL, kind: 'slack', name: 'Slack', shared: true, browsable: true, agents: ['claude', 'codex'], linked_users: [], addresses: [], defaults: null });
    assert.deepEqual(world.slack, [{ channel: DEMO_SLACK_CHANNEL, settings: c.demoSlack, links: {} }]);
    assert.deepEqual(world.channels.slice(0, -1).map((ch) => ch.id), DEMO_JSON.channels.map((ch: { id: string }) => ch.id), 'the others as they were');
    assert.doesNotMatch(JSON.stringify(world), TOKENS, 'the world holds no token');
    // Its own Web API URL (a local Slack of the operator's).
    assert.equal(config({ ...SET, DEMO_SLACK_API_URL: 'http://127.0.0.1:3000/api/' }).demoSlack?.api_url, 'http://127.0.0.1:3000/api/');
  });

  it('sits beside the demo XMPP channel when both are set', async () => {
    const c = config({ ...SET, DEMO_XMPP_SERVICE: 'xmpp://127.0.0.1:5222', DEMO_XMPP_JID: 'console@chat.example', DEMO_XMPP_PASSWORD: 'demo-xmpp-secret' });
    const world = (await readWorld(c))!;
    assert.deepEqual(world.channels.slice(-2).map((ch) => ch.id), [DEMO_XMPP_CHANNEL, DEMO_SLACK_CHANNEL]);
    assert.deepEqual(world.xmpp?.map((s) => s.channel), [DEMO_XMPP_CHANNEL]);
    assert.deepEqual(world.slack?.map((s) => s.channel), [DEMO_SLACK_CHANNEL]);
  });

  it('refuses one token without the other, or a bad value, naming each variable and never a token', () => {
    const onlyApp = loadConfig({ CONSOLE_STORAGE: 'memory', DEMO_SLACK_APP_TOKEN: APP_TOKEN });
    assert.ok(!onlyApp.ok);
    assert.deepEqual(onlyApp.error.map((issue) => issue.path), ['DEMO_SLACK_BOT_TOKEN']);
    assert.match(onlyApp.error[0]!.message, /DEMO_SLACK_APP_TOKEN/);
    const onlyBot = loadConfig({ CONSOLE_STORAGE: 'memory', DEMO_SLACK_BOT_TOKEN: BOT_TOKEN, DEMO_SLACK_APP_TOKEN: '' });
    assert.ok(!onlyBot.ok);
    assert.deepEqual(onlyBot.error.map((issue) => issue.path), ['DEMO_SLACK_APP_TOKEN']);
    assert.match(onlyBot.error[0]!.message, /DEMO_SLACK_BOT_TOKEN/);
    assert.doesNotMatch(JSON.stringify([onlyApp.error, onlyBot.error]), TOKENS);
    for (const [name, value] of [
      // The two tokens swapped: each variable refused, its value never repeated.
      ['DEMO_SLACK_APP_TOKEN', BOT_TOKEN], ['DEMO_SLACK_BOT_TOKEN', APP_TOKEN],
      ['DEMO_SLACK_API_URL', 'http://127.0.0.1:3000/api'], ['DEMO_SLACK_API_URL', 'ftp://slack.example/api/'],
    ] as const) {
      const bad = loadConfig({ CONSOLE_STORAGE: 'memory', ...SET, [name]: value });
      assert.ok(!bad.ok, `${name}=${value}`);
      assert.deepEqual(bad.error.map((issue) => issue.path), [name]);
      assert.doesNotMatch(JSON.stringify(bad.error), TOKENS);
    }
  });

  it('is not offered where the demo world is not served (a world file named, or PostgreSQL)', () => {
    assert.equal(config({ ...SET, CONSOLE_WORLD: 'world.json' }).demoSlack, null);
    assert.equal(config({ ...SET, CONSOLE_STORAGE: 'postgres', DATABASE_URL: 'postgres://u@127.0.0.1/db' }).demoSlack, null);
  });

  it('embedded: set on a later start than the first, the channel is added and what was written is kept', { timeout: 150_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'console-demo-slack-'));
    const log = createLogger('silent');
    let storage = await openStorage(config({ CONSOLE_STORAGE: 'embedded', DATA_DIR: dataDir }), log);
    const before = (await storage.catalog.channels()).map((ch) => ch.id);
    assert.ok(!before.includes(DEMO_SLACK_CHANNEL));
    const thread = await storage.writer.createConsoleThread({
      owner: 'alice', key: 'kept-across-starts', project: null, title: 'kept', conversation: { agent: 'claude', model: null, permission_mode: null, effort: null },
    });
    await storage.close();
    storage = await openStorage(config({ CONSOLE_STORAGE: 'embedded', DATA_DIR: dataDir, ...SET }), log);
    try {
      const after = await storage.catalog.channels();
      assert.deepEqual(after.map((ch) => ch.id).sort(), [...before, DEMO_SLACK_CHANNEL].sort());
      assert.equal(after.find((ch) => ch.id === DEMO_SLACK_CHANNEL)?.kind, 'slack');
      assert.ok(await storage.threads.exists(thread.thread.id), 'the thread written before is still there');
    } finally {
      await storage.close();
    }
  });
});

const env = (more: Record<string, string>) => ({
  ...process.env, PORT: '0', CONSOLE_STORAGE: 'memory', LOG_LEVEL: 'debug', DATA_DIR: mkdtempSync(join(tmpdir(), 'console-demo-slack-')),
  ARTIFACT_SANDBOX_ORIGIN: 'http://sandbox.localhost:1', ...more,
});

/** Runs the service in memory mode until it listens; keeps every line it prints, on stdout and stderr. */
async function startMain(more: Record<string, string>) {
  const child = spawn(process.execPath, [serviceEntry()], { env: env(more), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = once(child, 'exit');
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  };
  for await (const line of createInterface({ input: child.stdout! })) {
    output += `${line}\n`;
    if (JSON.parse(line).msg === 'console service listening') {
      const port = Number(new URL(JSON.parse(line).url as string).port);
      child.stdout!.on('data', (chunk) => (output += chunk));
      return { port, output: () => output, stop };
    }
  }
  throw new Error(`the service never listened: ${output}`);
}

const api = async (port: number, path: string) => {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${DEMO_LOGIN_TOKEN}` } });
  return { status: res.status, text: await res.text() };
};

describe('the demo world\'s Slack channel through the service', () => {
  it('unset: no Slack channel; set with no Slack there: offered all the same, the tokens in no line or answer', { timeout: 60_000 }, async () => {
    const plain = await startMain({});
    try {
      const offered = JSON.parse((await api(plain.port, '/api/account/link-channels')).text) as { id: string }[];
      assert.ok(!offered.some((ch) => ch.id === DEMO_SLACK_CHANNEL));
    } finally {
      await plain.stop();
    }
    const closed = await freePort();
    const main = await startMain({ ...SET, DEMO_SLACK_API_URL: `http://127.0.0.1:${closed}/api/` });
    const answers: string[] = [];
    try {
      const linkChannels = await api(main.port, '/api/account/link-channels');
      answers.push(linkChannels.text);
      const offered = JSON.parse(linkChannels.text) as { id: string; kind: string }[];
      assert.ok(offered.some((ch) => ch.id === DEMO_SLACK_CHANNEL && ch.kind === 'slack'), linkChannels.text);
      // Its bot tries to connect meanwhile, and fails (nothing listens there). Its places are for linked people
      // (alice is not: 409), so what they answer while Slack is away is the adapter's tests' to show.
      await sleep(1_500);
      answers.push((await api(main.port, `/api/console/threads/${SOURCE}/channels/${DEMO_SLACK_CHANNEL}/addresses`)).text);
      const code = await fetch(`http://127.0.0.1:${main.port}/api/account/links`, {
        method: 'POST', headers: { authorization: `Bearer ${DEMO_LOGIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ channel: DEMO_SLACK_CHANNEL }),
      });
      assert.equal(code.status, 201, 'alice can ask for a link code all the same');
      answers.push(await code.text(), (await api(main.port, '/api/account/links')).text, (await api(main.port, `/api/console/threads/${SOURCE}`)).text);
    } finally {
      await main.stop();
    }
    assert.match(main.output(), /slack could not be reached; retrying/, 'the bot\'s failing connection is logged');
    assert.doesNotMatch(main.output(), TOKENS, 'no line carries a token');
    assert.doesNotMatch(answers.join('\n'), TOKENS, 'no answer carries a token');
  });

  it('one token without the other: the start is refused (status 2), naming the missing variable, never the token', { timeout: 30_000 }, () => {
    for (const [set, missing] of [[{ DEMO_SLACK_APP_TOKEN: APP_TOKEN }, 'DEMO_SLACK_BOT_TOKEN'], [{ DEMO_SLACK_BOT_TOKEN: BOT_TOKEN }, 'DEMO_SLACK_APP_TOKEN']] as const) {
      const run = spawnSync(process.execPath, [serviceEntry()], { env: env(set), encoding: 'utf8', timeout: 20_000 });
      assert.equal(run.status, 2, run.stderr);
      assert.match(run.stderr, new RegExp(missing));
      assert.doesNotMatch(run.stdout + run.stderr, TOKENS);
    }
  });
});
