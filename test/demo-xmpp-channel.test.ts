// Issue 26, "Operated": the demo world offers an XMPP channel only when its variables are set
// (DEMO_XMPP_SERVICE, DEMO_XMPP_JID, DEMO_XMPP_PASSWORD; DEMO_XMPP_MUC and DEMO_XMPP_NICK optional). Unset, the
// demo world is as it was. The password stays in the environment: the channel names its variable
// (`password_env`), and no log line, banner or answer carries it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger } from '../src/logging.ts';
import { loadConfig, type Config } from '../src/config.ts';
import { DEMO_XMPP_CHANNEL, withDemoXmppChannel } from '../src/demo/xmpp-channel.ts';
import { DEMO_LOGIN_TOKEN, openStorage, readWorld } from '../src/open-storage.ts';
import { ChatClient } from './support/chat-client.ts';
import { freePort } from './support/free-port.ts';
import { prosodyMissing, startPrivateProsody } from './support/private-prosody.ts';
import { serviceEntry } from './support/built.ts';

const PASSWORD = 'demo-xmpp-secret-7q';
const SET = { DEMO_XMPP_SERVICE: 'xmpp://127.0.0.1:5222', DEMO_XMPP_JID: 'console@chat.example', DEMO_XMPP_PASSWORD: PASSWORD };
const DEMO_JSON = JSON.parse(readFileSync(new URL('../src/world/demo-world.json', import.meta.url), 'utf8'));
const SOURCE = DEMO_JSON.threads[0].id as string;

const config = (env: Record<string, string>): Config => {
  // A DATA_DIR of its own: the demo world makes its repository there (docs/demo.md).
  const loaded = loadConfig({ CONSOLE_STORAGE: 'memory', DATA_DIR: mkdtempSync(join(tmpdir(), 'demo-world-')), ...env });
  assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.error));
  return loaded.value;
};

describe('the demo world\'s XMPP channel: configuration and world', () => {
  it('is absent while its variables are unset (or set empty): the demo world as it was', async () => {
    for (const env of [{}, { DEMO_XMPP_SERVICE: '', DEMO_XMPP_JID: '', DEMO_XMPP_PASSWORD: '' }] as Record<string, string>[]) {
      const c = config(env);
      assert.equal(c.demoXmpp, null);
      const world = (await readWorld(c))!;
      assert.deepEqual(world.channels.map((ch) => ch.id), DEMO_JSON.channels.map((ch: { id: string }) => ch.id));
      assert.deepEqual(world.xmpp ?? [], []);
    }
    assert.equal(withDemoXmppChannel(DEMO_JSON, null), DEMO_JSON, 'the JSON itself, untouched');
  });

  it('is an xmpp channel when all three are set: its account from them, the password named, never held', async () => {
    const c = config(SET);
    assert.deepEqual(c.demoXmpp, {
      service: 'xmpp://127.0.0.1:5222', domain: 'chat.example', muc: 'conference.chat.example', jid: 'console@chat.example', password_env: 'DEMO_XMPP_PASSWORD', nick: 'console',
    });
    assert.doesNotMatch(JSON.stringify(c), new RegExp(PASSWORD), 'the configuration holds no password');
    const world = (await readWorld(c))!;
    const channel = world.channels.find((ch) => ch.id === DEMO_XMPP_CHANNEL);
    assert.deepEqual(channel, { id: DEMO_XMPP_CHANNEL, kind: 'xmpp', name: 'XMPP chat', shared: true, browsable: true, agents: ['claude', 'codex'], linked_users: [], addresses: [], defaults: null });
    assert.deepEqual(world.xmpp, [{ channel: DEMO_XMPP_CHANNEL, account: c.demoXmpp, links: {} }]);
    assert.deepEqual(world.channels.slice(0, -1).map((ch) => ch.id), DEMO_JSON.channels.map((ch: { id: string }) => ch.id), 'the others as they were');
    assert.doesNotMatch(JSON.stringify(world), new RegExp(PASSWORD), 'the world holds no password');
    const own = config({ ...SET, DEMO_XMPP_MUC: 'rooms.chat.example', DEMO_XMPP_NICK: 'agent-bot' });
    assert.equal(own.demoXmpp?.muc, 'rooms.chat.example');
    assert.equal(own.demoXmpp?.nick, 'agent-bot');
  });

  it('refuses a partial or bad setting, naming each variable and never the password', () => {
    const partial = loadConfig({ CONSOLE_STORAGE: 'memory', DEMO_XMPP_JID: SET.DEMO_XMPP_JID, DEMO_XMPP_PASSWORD: PASSWORD });
    assert.ok(!partial.ok);
    assert.deepEqual(partial.error.map((issue) => issue.path), ['DEMO_XMPP_SERVICE']);
    assert.match(partial.error[0]!.message, /DEMO_XMPP_JID and DEMO_XMPP_PASSWORD/);
    const onlyPassword = loadConfig({ CONSOLE_STORAGE: 'memory', DEMO_XMPP_PASSWORD: PASSWORD });
    assert.ok(!onlyPassword.ok);
    assert.deepEqual(onlyPassword.error.map((issue) => issue.path), ['DEMO_XMPP_SERVICE', 'DEMO_XMPP_JID']);
    assert.doesNotMatch(JSON.stringify(onlyPassword.error), new RegExp(PASSWORD));
    for (const [name, value] of [['DEMO_XMPP_SERVICE', 'http://127.0.0.1:5222'], ['DEMO_XMPP_JID', 'console@chat.example/res'], ['DEMO_XMPP_MUC', 'not a domain'], ['DEMO_XMPP_NICK', 'a b']] as const) {
      const bad = loadConfig({ CONSOLE_STORAGE: 'memory', ...SET, [name]: value });
      assert.ok(!bad.ok, name);
      assert.deepEqual(bad.error.map((issue) => issue.path), [name]);
    }
  });

  it('is not offered where the demo world is not served (a world file named, or PostgreSQL)', () => {
    assert.equal(config({ ...SET, CONSOLE_WORLD: 'world.json' }).demoXmpp, null);
    assert.equal(config({ ...SET, CONSOLE_STORAGE: 'postgres', DATABASE_URL: 'postgres://u@127.0.0.1/db' }).demoXmpp, null);
  });

  it('embedded: set on a later start than the first, the channel is added and what was written is kept', { timeout: 150_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'console-demo-xmpp-'));
    const log = createLogger('silent');
    const first = config({ CONSOLE_STORAGE: 'embedded', DATA_DIR: dataDir });
    let storage = await openStorage(first, log);
    const before = (await storage.catalog.channels()).map((ch) => ch.id);
    assert.ok(!before.includes(DEMO_XMPP_CHANNEL));
    const thread = await storage.writer.createConsoleThread({
      owner: 'alice', key: 'kept-across-starts', project: null, title: 'kept', conversation: { agent: 'claude', model: null, permission_mode: null, effort: null },
    });
    await storage.close();
    storage = await openStorage(config({ CONSOLE_STORAGE: 'embedded', DATA_DIR: dataDir, ...SET }), log);
    try {
      const after = await storage.catalog.channels();
      assert.deepEqual(after.map((ch) => ch.id).sort(), [...before, DEMO_XMPP_CHANNEL].sort());
      assert.equal(after.find((ch) => ch.id === DEMO_XMPP_CHANNEL)?.kind, 'xmpp');
      assert.ok(await storage.threads.exists(thread.thread.id), 'the thread written before is still there');
    } finally {
      await storage.close();
    }
  });
});

/** Runs `src/main.ts` in memory mode until it listens; keeps every line it prints, on stdout and stderr. */
async function startMain(env: Record<string, string>) {
  const child = spawn(process.execPath, [serviceEntry()], {
    env: { ...process.env, PORT: '0', CONSOLE_STORAGE: 'memory', LOG_LEVEL: 'debug', DATA_DIR: mkdtempSync(join(tmpdir(), 'console-demo-xmpp-')), ARTIFACT_SANDBOX_ORIGIN: 'http://sandbox.localhost:1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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

const linkChannels = async (port: number) => (JSON.parse((await api(port, '/api/account/link-channels')).text) as { id: string; kind: string }[]);

describe('the demo world\'s XMPP channel through src/main.ts', () => {
  it('unset: no XMPP channel; set with no server there: offered all the same, the password in no line', { timeout: 60_000 }, async () => {
    const plain = await startMain({});
    try {
      assert.ok(!(await linkChannels(plain.port)).some((ch) => ch.id === DEMO_XMPP_CHANNEL));
    } finally {
      await plain.stop();
    }
    const port = await freePort();
    const main = await startMain({ ...SET, DEMO_XMPP_SERVICE: `xmpp://127.0.0.1:${port}` });
    try {
      const offered = await linkChannels(main.port);
      assert.ok(offered.some((ch) => ch.id === DEMO_XMPP_CHANNEL && ch.kind === 'xmpp'), JSON.stringify(offered));
      // Its bot tries to connect meanwhile, and fails (nothing listens there).
      await sleep(1_500);
    } finally {
      await main.stop();
    }
    assert.match(main.output(), /xmpp/i, 'the bot\'s connection is logged');
    assert.doesNotMatch(main.output(), new RegExp(PASSWORD), 'no line carries the password');
  });

  it('set, with a private Prosody: the demo channel connects, alice links herself, and its rooms are listed', { skip: prosodyMissing() ?? false, timeout: 90_000 }, async (t) => {
    const server = await startPrivateProsody();
    t.after(() => server.destroy());
    await server.register('console', PASSWORD);
    await server.register('alice', 'alice-pw-9');
    const alice = await ChatClient.connect(server, 'alice', 'alice-pw-9');
    t.after(() => alice.close());
    const room = `demo-room@${server.muc}`;
    await alice.createRoom(room, { whois: 'anyone', name: 'Demo room' });
    const main = await startMain({ DEMO_XMPP_SERVICE: server.service, DEMO_XMPP_JID: `console@${server.domain}`, DEMO_XMPP_PASSWORD: PASSWORD, DEMO_XMPP_MUC: server.muc });
    try {
      const code = await fetch(`http://127.0.0.1:${main.port}/api/account/links`, {
        method: 'POST', headers: { authorization: `Bearer ${DEMO_LOGIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ channel: DEMO_XMPP_CHANNEL }),
      });
      assert.equal(code.status, 201);
      const { code: linkCode } = await code.json() as { code: string };
      let linked: { body: string } | undefined;
      for (const started = Date.now(); linked === undefined && Date.now() - started < 30_000; await sleep(200)) {
        // Sent again until the bot, still connecting at first, answers.
        if (alice.direct.length === 0) await alice.sendDirect(`console@${server.domain}`, `link ${linkCode}`);
        linked = alice.direct.find((m) => m.body.startsWith('Linked:'));
        if (linked === undefined) await sleep(800);
      }
      assert.ok(linked !== undefined, `alice was linked: ${JSON.stringify(alice.direct)}`);
      const places = await api(main.port, `/api/console/threads/${SOURCE}/channels/${DEMO_XMPP_CHANNEL}/addresses`);
      assert.equal(places.status, 200, places.text);
      assert.ok((JSON.parse(places.text) as { id: string }[]).some((place) => place.id === room), places.text);
    } finally {
      await main.stop();
    }
    assert.doesNotMatch(main.output(), new RegExp(PASSWORD), 'no line carries the password');
  });
});
