import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { archivePage } from '../../adapters/xmpp/archive.ts';
import { xmppChannelPort, startXmppChannel } from '../../adapters/xmpp/channel-port.ts';
import { XmppConnection } from '../../adapters/xmpp/connection.ts';
import { xmlText } from '../../adapters/xmpp/stanzas.ts';
import { parseRoomThread, roomThreadAddress, type XmppAccount } from '../../domain/xmpp.ts';
import type { World } from '../../domain/world.ts';
import { channelPortContract } from '../contracts/channel-port.contract.ts';
import { ChatClient } from '../support/chat-client.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { prosodyMissing, startPrivateProsody } from '../support/private-prosody.ts';

const missing = prosodyMissing();
const silent = { info() {}, warn() {}, error() {} };
const BOT_PASSWORD = 'bot-password-1';

if (missing !== null) {
  describe('channel port contract: xmpp', () => it('needs a private Prosody', (t) => t.skip(missing)));
} else {
  channelPortContract('xmpp (a private Prosody)', async () => {
    const server = await startPrivateProsody();
    await server.register('console', BOT_PASSWORD);
    await server.register('alice', 'alice-password-1');
    await server.register('robot', 'robot-password-1');
    const alice = await ChatClient.connect(server, 'alice', 'alice-password-1');
    const robot = await ChatClient.connect(server, 'robot', 'robot-password-1');
    const general = `general@${server.muc}`;
    const back = `back@${server.muc}`;
    await alice.createRoom(general, { whois: 'anyone', name: 'General' });
    await alice.createRoom(back, { whois: 'moderators' });
    await robot.joinRoom(general);
    await alice.post(general, 'seed', 'Release thread: what is left?');
    const where = (at: string) => parseRoomThread(at) ?? { room: at, thread: null };
    /** A person in the room: posts, and waits for the room to echo the post back (it took it). */
    const person = (client: ChatClient, user: string) => ({
      address: `${user}@${server.domain}`,
      say: async (at: string, text: string, originId: string | null = null) => {
        const { room, thread } = where(at);
        const from = client.seen.length;
        await client.post(room, thread, text, originId);
        const body = xmlText(text);
        for (const end = Date.now() + 20_000; !client.seen.slice(from).some((m) => m.room === room && m.body === body);) {
          if (Date.now() > end) throw new Error(`${room} did not echo ${user}'s post`);
          await sleep(50);
        }
      },
    });
    const world: World = fixtureWorld();
    const storage = createMemoryStorage();
    await storage.importWorld({
      ...world,
      channels: [...world.channels, { id: 'team-xmpp', kind: 'xmpp', name: 'Team XMPP', shared: true, browsable: true, agents: ['claude'], defaults: null, linked_users: ['alice'], addresses: [] }],
    });
    const account: XmppAccount = { service: server.service, domain: server.domain, muc: server.muc, jid: `console@${server.domain}`, password_env: 'XMPP_PASSWORD', nick: 'console' };
    const build = () => startXmppChannel(xmppChannelPort({
      channelId: 'team-xmpp', account, password: BOT_PASSWORD, catalog: storage.catalog, log: silent, backoff: { firstMs: 100, maxMs: 1_000 },
    }));
    const port = build();
    const online = async (p: ReturnType<typeof build>) => {
      const end = Date.now() + 15_000;
      while (!p.connection.online) {
        if (Date.now() > end) throw new Error('the bot did not come online');
        await sleep(50);
      }
      return p;
    };
    await online(port);
    return {
      port,
      channel: { id: 'team-xmpp', kind: 'xmpp' },
      open: { id: general, inside: general },
      thread: `${general}#seed`,
      barred: { id: back, reason: /cannot see who writes/ },
      // What alice's client saw, once the room had a moment to send it everything: after a server restart her
      // client rejoins on its own time, so the first copy is waited for (up to 10 s), then any second one.
      // When her client has not come back by then (its stream may be refused resumption), the room's archive says.
      seen: async (id) => {
        for (const end = Date.now() + 10_000; alice.withOrigin(id).length === 0 && Date.now() < end;) await sleep(100);
        await sleep(700);
        const live = alice.withOrigin(id);
        const address = (thread: string | null) => (thread === null || thread === '' ? general : roomThreadAddress(general, thread));
        if (live.length > 0) return live.map((m) => ({ address: address(m.thread), body: m.body }));
        const page = await archivePage(port.connection, general, { max: 200 });
        return page.messages.filter((m) => m.originId === id).map((m) => ({ address: address(m.thread), body: m.body }));
      },
      read: async (at) => {
        const { room, thread } = where(at);
        return alice.seen.filter((m) => m.room === room && (thread === null || m.thread === thread)).map((m) => ({ body: m.body, originId: m.originId }));
      },
      addressBot: (text) => `${account.nick}: ${text}`,
      people: { alice: person(alice, 'alice'), robot: person(robot, 'robot') },
      another: async () => online(build()),
      server,
      close: async () => {
        await port.close();
        await alice.close();
        await robot.close();
        await server.destroy();
      },
    };
  });

  describe('a new xmpp session', () => {
    it('is not closed by the server for a wrong stream-management count when it joins a room at once', async () => {
      // xmpp.js says `online` before stream management is enabled; a join sent then (the bot's rooms, a person's
      // client) had the server close the session a moment later in about one session of ten (Prosody logs
      // "The client says it handled …"), out of the room it had just joined.
      const server = await startPrivateProsody();
      try {
        await server.register('console', BOT_PASSWORD);
        await server.register('alice', 'alice-password-1');
        await server.register('bob', 'bob-password-1');
        const alice = await ChatClient.connect(server, 'alice', 'alice-password-1');
        const room = `general@${server.muc}`;
        await alice.createRoom(room, { whois: 'anyone', name: 'General' });
        const account: XmppAccount = { service: server.service, domain: server.domain, muc: server.muc, jid: `console@${server.domain}`, password_env: 'XMPP_PASSWORD', nick: 'console' };
        const sessions = 12;
        for (let i = 0; i < sessions; i++) {
          const bot = new XmppConnection({ account, password: BOT_PASSWORD, log: silent });
          // At once, or a tick or two later (when the window was open).
          bot.onOnline(() => void setTimeout(() => void bot.join(room).catch(() => {}), i % 4));
          bot.start();
          for (const end = Date.now() + 20_000; !bot.online;) {
            assert.ok(Date.now() < end, 'the bot online');
            await sleep(20);
          }
          const bob = await ChatClient.connect(server, 'bob', 'bob-password-1');
          await bob.joinRoom(room);
          await alice.post(room, null, `hello ${i}`);
          await sleep(500);
          await bob.close();
          await bot.close();
        }
        await alice.close();
        const log = readFileSync(join(server.dir, 'prosody.log'), 'utf8');
        assert.deepEqual(log.split('\n').filter((line) => /The client says it handled/.test(line)), [], 'no session closed for its acks');
        assert.equal(log.match(/Authenticated as console@/g)?.length, sessions, 'one session of the bot each time');
        assert.equal(log.match(/Authenticated as bob@/g)?.length, sessions, 'one session of bob each time');
      } finally {
        await server.destroy();
      }
    });
  });
}
