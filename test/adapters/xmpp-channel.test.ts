import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { archivePage } from '../../adapters/xmpp/archive.ts';
import { xmppChannelPort, startXmppChannel } from '../../adapters/xmpp/channel-port.ts';
import type { XmppAccount } from '../../domain/xmpp.ts';
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
    const alice = await ChatClient.connect(server, 'alice', 'alice-password-1');
    const general = `general@${server.muc}`;
    const back = `back@${server.muc}`;
    await alice.createRoom(general, { whois: 'anyone', name: 'General' });
    await alice.createRoom(back, { whois: 'moderators' });
    await alice.post(general, 'seed', 'Release thread: what is left?');

    const world: World = fixtureWorld();
    const storage = createMemoryStorage();
    await storage.importWorld({
      ...world,
      channels: [...world.channels, { id: 'team-xmpp', kind: 'xmpp', name: 'Team XMPP', shared: true, browsable: true, agents: ['claude'], linked_users: ['alice'], addresses: [] }],
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
        if (live.length > 0) return live;
        const page = await archivePage(port.connection, general, { max: 200 });
        return page.messages.filter((m) => m.originId === id).map((m) => ({ thread: m.thread, body: m.body }));
      },
      another: async () => online(build()),
      server,
      close: async () => {
        await port.close();
        await alice.close();
        await server.destroy();
      },
    };
  });
}
