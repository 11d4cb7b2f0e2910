// Issue 26 end to end through `npm start`, as an operator runs it: a world file with an xmpp channel pointing
// at a private Prosody, the bot's password in XMPP_PASSWORD, the bundled demo agent. A console conversation is
// teleported into a room; people there, on their own XMPP clients, see it, reply in its thread and read the
// agent's answers there; an approval is answered with its number; an unlinked person is told how to link and
// nothing runs; bob links himself with a code sent to the bot in a direct message, and then his message runs.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { HOW_TO_LINK } from '../../core/channels/inbound.ts';
import { ChatClient, type SeenMessage } from '../support/chat-client.ts';
import { startNpm, type NpmStarted } from '../support/npm-start.ts';
import { prosodyMissing, startPrivateProsody, type PrivateProsody } from '../support/private-prosody.ts';

const PASSWORD = 'bot-npm-password-3';
const missing = prosodyMissing();

async function eventually<T>(what: string, found: () => T | undefined | null | false | Promise<T | undefined | null | false>, ms = 40_000): Promise<T> {
  for (const started = Date.now(); Date.now() - started < ms; await sleep(100)) {
    const value = await found();
    if (value !== undefined && value !== null && value !== false) return value;
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('an xmpp channel through npm start', { skip: missing ?? false }, () => {
  let server: PrivateProsody;
  let alice: ChatClient;
  let bob: ChatClient;
  let carol: ChatClient;
  let started: NpmStarted;
  let general: string;
  let thread: string;
  let source: string;

  const api = async (token: string, path: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${started.port}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, text: await res.text() };
  };
  /** What the bot posted in the conversation's thread, as `client` saw it. */
  const botSaid = (client: ChatClient): SeenMessage[] =>
    client.seen.filter((m) => m.room === general && m.thread === thread && m.originId !== null && /^[0-9a-f-]{36}$/.test(m.originId));

  before(async () => {
    server = await startPrivateProsody();
    await server.register('console', PASSWORD);
    for (const user of ['alice', 'bob', 'carol']) await server.register(user, `${user}-pw-1`);
    alice = await ChatClient.connect(server, 'alice', 'alice-pw-1');
    bob = await ChatClient.connect(server, 'bob', 'bob-pw-1');
    carol = await ChatClient.connect(server, 'carol', 'carol-pw-1');
    general = `general@${server.muc}`;
    await alice.createRoom(general, { whois: 'anyone', name: 'General' });
    await bob.joinRoom(general);
    await carol.joinRoom(general);
    const world = JSON.parse(readFileSync(new URL('../../src/world/demo-world.json', import.meta.url), 'utf8'));
    world.channels.push({
      id: 'team-xmpp', kind: 'xmpp', name: 'Team XMPP', shared: true, browsable: true, agents: ['claude'],
      xmpp: { service: server.service, domain: server.domain, muc: server.muc, jid: `console@${server.domain}`, password_env: 'XMPP_PASSWORD', nick: 'console' },
      links: { alice: `alice@${server.domain}` },
    });
    source = world.threads[0].id;
    const file = join(mkdtempSync(join(tmpdir(), 'console-xmpp-world-')), 'world.json');
    writeFileSync(file, JSON.stringify(world));
    // Started from a hook: its group is killed by this file's `after`, not by one registered inside the hook.
    started = await startNpm({ CONSOLE_WORLD: file, XMPP_PASSWORD: PASSWORD }, { killAfterFile: false });
    await eventually('the room listed', async () => {
      const res = await api('dev-alice', `/api/console/threads/${source}/channels/team-xmpp/addresses`);
      return res.status === 200 && res.text.includes(general);
    });
  });
  after(async () => {
    try {
      if (started !== undefined) process.kill(-started.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    for (const client of [alice, bob, carol]) await client?.close();
    await server?.destroy();
  });

  it('a teleported conversation lands in the room, and a reply in its thread gets the agent\'s answer there', async () => {
    const moved = await api('dev-alice', `/api/console/threads/${source}/teleport`, { destination: { channel: 'team-xmpp', id: general } });
    assert.equal(moved.status, 202, moved.text);
    const landed = await eventually('the delivery seen by bob', () => bob.seen.find((m) => m.room === general && m.body?.includes('moved the conversation')));
    thread = landed.thread!;
    await alice.post(general, thread, 'What is left to do?');
    const answer = await eventually('the answer in the thread', () => botSaid(bob).find((m) => m.body!.includes('All done here.')));
    assert.match(answer.body!, /turn=1 /);
  });

  it('an approval asked in the room is answered with its number from chat', async () => {
    await alice.post(general, thread, '[approval] note the release date');
    const ask = await eventually('the approval', () => botSaid(bob).find((m) => m.body!.startsWith('Approval needed:')));
    const allow = ask.body!.split('\n').find((line) => /^\d+\. Allow/.test(line))!;
    assert.ok(allow, ask.body!);
    await alice.post(general, thread, allow.split('.')[0]!);
    const done = await eventually('the turn after the approval', () => botSaid(bob).find((m) => m.body!.includes('Permission: allow.')));
    assert.match(done.body!, /All done here\.[\s\S]*turn=2 /);
  });

  it('an unlinked person is told how to link, and nothing runs', async () => {
    const before = botSaid(carol).length;
    await carol.post(general, thread, 'please deploy to production');
    await eventually('the how-to-link reply', () => botSaid(carol).some((m) => m.body === HOW_TO_LINK));
    await sleep(2_000);
    assert.ok(!botSaid(carol).slice(before).some((m) => /turn=3 /.test(m.body!)), 'no turn ran for carol');
  });

  it('bob links his address with a code sent in a direct message, and then his message runs', async () => {
    const code = await api('dev-bob-token', '/api/account/links', { channel: 'team-xmpp' });
    assert.equal(code.status, 201, code.text);
    await bob.sendDirect(`console@${server.domain}`, `link ${JSON.parse(code.text).code}`);
    await eventually('the bot\'s answer', () => bob.direct.find((m) => m.body.startsWith('Linked:')));
    await bob.post(general, thread, 'bob here: anything for me?');
    await eventually('the answer to bob', () => botSaid(alice).find((m) => /turn=3 /.test(m.body!)));
  });
});
