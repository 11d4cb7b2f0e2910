// The adversarial run's chat probe (docs/operations.md, "Tried as an attacker would"): in a private
// Prosody's room, mallory (an unlinked person) claims to be alice every way a stanza can carry an
// identity (her real JID in a muc#user item, her occupant id, both, a second item, her nick once she
// left, a groupchat message sent straight to the bot, a forged archive result, a forged carbon of a
// link code), live and while the service is down (read back from the archive). Nothing may run as
// alice, open a thread of hers, or link an address. Bounded: a fixed count of forged stanzas.
import assert from 'node:assert/strict';
import { xml, type Element } from '@xmpp/client';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { emptyState } from '../../adapters/memory/state.ts';
import type { World } from '../../domain/world.ts';
import { chatChannels } from '../../src/channels/chat-channels.ts';
import { createLogger } from '../../src/logging.ts';
import { ChatClient } from '../support/chat-client.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { testId } from '../support/ids.ts';
import { prosodyMissing, startPrivateProsody } from '../support/private-prosody.ts';
import { startService, type TestService } from '../support/service.ts';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const PASSWORD = 'bot-secret-password-7';
const MUC_USER = 'http://jabber.org/protocol/muc#user';
const OCCUPANT_ID = 'urn:xmpp:occupant-id:0';
const THREAD = testId(52_000);

async function eventually<T>(what: string, found: () => Promise<T | undefined | null | false> | T | undefined | null | false, ms = 30_000): Promise<T> {
  for (const started = Date.now(); Date.now() - started < ms; await new Promise((resolve) => setTimeout(resolve, 100))) {
    const value = await found();
    if (value !== undefined && value !== null && value !== false) return value;
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Runs the probe; answers what it sent, or why it could not run here. */
export async function chatIdentities(): Promise<{ sent: number } | { skipped: string }> {
  const missing = prosodyMissing();
  if (missing !== null) return { skipped: missing };
  const server = await startPrivateProsody();
  const clients: ChatClient[] = [];
  let service: TestService | null = null;
  try {
    await server.register('console', PASSWORD);
    for (const user of ['alice', 'mallory']) await server.register(user, `${user}-password-1`);
    const room = `general@${server.muc}`;
    const bot = `console@${server.domain}`;
    const alice = await ChatClient.connect(server, 'alice', 'alice-password-1');
    clients.push(alice);
    await alice.createRoom(room, { whois: 'anyone' });
    const fixture = fixtureWorld();
    const world: World = {
      ...fixture,
      channels: [...fixture.channels, { id: 'team-xmpp', kind: 'xmpp', name: 'Team XMPP', shared: true, browsable: true, agents: ['claude'], defaults: null, linked_users: ['alice'], addresses: [] }],
      threads: [...fixture.threads, {
        id: THREAD, key: null, channel: 'console', owner: 'alice', members: [], project: null, title: 'Probe target', fork_of: null, fork_cutoff: null,
        messages: [{ id: testId(52_001), role: 'user', text: 'the target', artifact_id: null }],
        conversations: [{ id: testId(52_002), agent: 'claude', model: 'opus', permission_mode: 'default', effort: null, address: null, turn_running: false, pending: [], runs: [] }],
      }],
      xmpp: [{ channel: 'team-xmpp', account: { service: server.service, domain: server.domain, muc: server.muc, jid: bot, password_env: 'PROBE_XMPP_PASSWORD', nick: 'console' }, links: { alice: `alice@${server.domain}` } }],
    };
    const state = emptyState();
    await createMemoryStorage(state).importWorld(world);
    const start = async () => {
      const storage = createMemoryStorage(state);
      const channels = await chatChannels({
        world, env: { PROBE_XMPP_PASSWORD: PASSWORD }, catalog: storage.catalog, log: createLogger('error'), file: 'probe world',
        living: (channel) => storage.conversations.livingOn(channel),
      });
      assert.ok(channels !== null);
      service = await startService({}, { storage, channels, worldLinks: (c): Record<string, string> => (c.id === 'team-xmpp' ? { alice: `alice@${server.domain}` } : {}), deliveryTiming: { intervalMs: 200, retryMs: 100, maxRetryMs: 500 } });
      channels.listen(service.chat);
      await service.knowOffers();
      await eventually('the bot online', async () => (await service!.ask({ path: `/api/console/threads/${THREAD}/channels/team-xmpp/addresses`, headers: ALICE })).status === 200);
    };
    await start();
    // Alice's conversation moves into the room: what the forgeries aim at.
    const moved = await service!.ask({ method: 'POST', path: `/api/console/threads/${THREAD}/teleport`, headers: ALICE, body: JSON.stringify({ destination: { channel: 'team-xmpp', id: room } }) });
    assert.equal(moved.status, 202, moved.text);
    const thread = (await eventually('the delivery in the room', () => alice.seen.find((m) => m.room === room && m.body?.includes('Probe target'))))!.thread!;
    const [source] = (await service!.ask({ path: `/api/console/threads/${THREAD}/conversations`, headers: ALICE })).json();
    const landing = source.moved_to.thread_id as string;
    const threads = async () => ((await service!.ask({ path: '/api/console/threads?limit=100', headers: ALICE })).json().items as { id: string; title: string }[]);
    const texts = async () => {
      const [conversation] = (await service!.ask({ path: `/api/console/threads/${landing}/conversations`, headers: ALICE })).json();
      const runs = (await service!.ask({ path: `/api/console/threads/${landing}/conversations/${conversation.id}/runs?limit=100`, headers: ALICE })).json().items as { status: string }[];
      const ledger = (await service!.ask({ path: `/api/console/threads/${landing}/messages?limit=200`, headers: ALICE })).json().items as { role: string; text: string }[];
      return { idle: runs.every((r) => r.status !== 'running'), user: ledger.filter((m) => m.role === 'user').map((m) => m.text) };
    };
    /** Alice says `sentinel` and it runs: the room's messages are handled in order, so all before it were. */
    const sentinel = async (text: string, poster: (text: string) => Promise<void> = (t) => alice.post(room, thread, t)) => {
      await poster(text);
      await eventually(`alice's "${text}" to run`, async () => { const seen = await texts(); return seen.idle && seen.user.includes(text); }, 40_000);
    };
    await sentinel('alice first');

    const mallory = await ChatClient.connect(server, 'mallory', 'mallory-password-1');
    clients.push(mallory);
    const aliceItem = (jid = `alice@${server.domain}`) => xml('x', { xmlns: MUC_USER }, xml('item', { jid, affiliation: 'owner', role: 'moderator' }));
    await mallory.joinRoom(room, [aliceItem()]);
    const aliceOccupant = await eventually('alice\'s occupant id', () => mallory.occupantIds.get(`${room}/alice`));
    const claims: readonly (readonly Element[])[] = [
      [aliceItem()], [aliceItem(`alice@${server.domain}/phone`)], [aliceItem(`ALICE@${server.domain.toUpperCase()}`)],
      [xml('occupant-id', { xmlns: OCCUPANT_ID, id: aliceOccupant })],
      [aliceItem(), xml('occupant-id', { xmlns: OCCUPANT_ID, id: aliceOccupant })],
      [xml('x', { xmlns: MUC_USER }, xml('item', { jid: `mallory@${server.domain}` })), aliceItem()],
    ];
    let sent = 0;
    const forge = async (label: string) => {
      for (const [i, claim] of claims.entries()) {
        await mallory.post(room, thread, `forged ${label} ${i}`, null, [...claim]);
        await mallory.post(room, null, `console: forged ${label} ${i}`, null, [...claim]);
        sent += 2;
      }
      // Straight to the bot, typed as a room message, claiming alice: no room stamped it.
      await mallory.sendRaw(xml('message', { to: bot, type: 'groupchat' }, xml('body', {}, `forged ${label} direct`), xml('thread', {}, thread), aliceItem()));
      // A forged archive result and a forged carbon of a direct message, sent to the bot.
      await mallory.sendRaw(xml('message', { to: bot }, xml('result', { xmlns: 'urn:xmpp:mam:2', queryid: 'guess', id: `forged-${label}` },
        xml('forwarded', { xmlns: 'urn:xmpp:forward:0' }, xml('message', { from: `${room}/alice`, type: 'groupchat' }, xml('body', {}, `forged ${label} archive`), xml('thread', {}, thread), aliceItem())))));
      await mallory.sendRaw(xml('message', { to: bot, type: 'chat' }, xml('received', { xmlns: 'urn:xmpp:carbons:2' },
        xml('forwarded', { xmlns: 'urn:xmpp:forward:0' }, xml('message', { from: `alice@${server.domain}/phone`, to: bot, type: 'chat' }, xml('body', {}, `forged ${label} carbon`))))));
      sent += 3;
    };

    await forge('live');
    await sentinel('alice after the live forgeries');

    // While the service is down: the same claims, read back from the archive after the restart.
    await service!.close();
    service = null;
    await forge('away');
    await eventually('the room to take the last forgery', () => alice.seen.some((m) => m.body === `forged away ${claims.length - 1}`));
    await start();
    await sentinel('alice after the archived forgeries');

    // Alice leaves and mallory takes her nick: the room says who is behind it now.
    await alice.close();
    const impostor = await ChatClient.connect(server, 'mallory', 'mallory-password-1', 'alice');
    clients.push(impostor);
    await eventually('mallory under alice\'s nick', async () => impostor.joinRoom(room).then(() => true, () => false));
    await impostor.post(room, thread, 'forged under her nick', null, [aliceItem()]);
    sent += 1;
    const back = await ChatClient.connect(server, 'alice', 'alice-password-1');
    clients.push(back);
    await impostor.close();
    await sentinel('alice is back', async (text) => {
      await eventually('alice back in the room', async () => back.joinRoom(room).then(() => true, () => false));
      await back.post(room, thread, text);
    });

    const seen = await texts();
    const forged = seen.user.filter((text) => text.includes('forged'));
    assert.deepEqual(forged, [], 'no forged text is a directive in alice\'s thread');
    const titles = (await threads()).map((t) => t.title).filter((title) => title.includes('forged'));
    assert.deepEqual(titles, [], 'no thread was opened as alice');
    const links = (await service!.ask({ path: '/api/account/links', headers: ALICE })).json() as { address: string }[];
    assert.deepEqual(links.map((l) => l.address), [`alice@${server.domain}`], 'no address was linked to alice');
    return { sent };
  } finally {
    await (service as TestService | null)?.close();
    for (const client of clients) await client.close();
    await server.destroy();
  }
}
