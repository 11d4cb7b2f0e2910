// The XMPP bot in rooms it was not in, and people who answer outside its threads (issue 41, items 1 and 2), with
// the service composed as src/main.ts composes it over a private Prosody and the bundled demo agent: a linked
// user's invitation (direct, XEP-0249, or mediated, XEP-0045) brings the bot into the room, which it says there,
// and the room is joined again after a restart; an unlinked inviter is told how to link. In the room, a reply
// (XEP-0461) to one of the bot's posts goes to that post's conversation, a plain message goes to the room's sole
// conversation, `console: …` starts another (contract section 9), and with several a message naming none runs
// nothing and its sender is told once how to reach one.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { xml } from '@xmpp/client';
import { setTimeout as sleep } from 'node:timers/promises';
import { emptyState } from '../../adapters/memory/state.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { xmppHint } from '../../adapters/xmpp/inbound.ts';
import type { World } from '../../domain/world.ts';
import { HOW_TO_LINK } from '../../core/channels/inbound.ts';
import { chatChannels } from '../../src/channels/chat-channels.ts';
import { createLogger } from '../../src/logging.ts';
import { ChatClient, type SeenMessage } from '../support/chat-client.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { prosodyMissing, startPrivateProsody, type PrivateProsody } from '../support/private-prosody.ts';
import { startService, type TestService } from '../support/service.ts';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const PASSWORD = 'bot-secret-password-9';
const P = '/api/console/threads';
const missing = prosodyMissing();

/** Polls until `found` answers something, for at most `ms`. */
async function eventually<T>(what: string, found: () => T | undefined | null | false | Promise<T | undefined | null | false>, ms = 30_000): Promise<T> {
  for (const started = Date.now(); Date.now() - started < ms; await sleep(100)) {
    const value = await found();
    if (value !== undefined && value !== null && value !== false) return value;
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('the xmpp bot in rooms it is invited to, and replies outside its threads', { skip: missing ?? false }, () => {
  let server: PrivateProsody;
  let alice: ChatClient;
  let carol: ChatClient;
  let service: TestService;
  let lab: string;
  let ops: string;
  let den: string;
  let bot: string;
  const state = emptyState();
  let world: World;

  const fromBot = (client: ChatClient, room: string, filter: (m: SeenMessage) => boolean = () => true) =>
    client.seen.filter((m) => m.room === room && m.originId !== null && /^[0-9a-f-]{36}$/.test(m.originId) && filter(m));
  const threads = async () => (await service.ask({ path: `${P}?limit=100`, headers: ALICE })).json().items as { id: string; title: string }[];
  const threadTitled = (title: string) => eventually(`the thread "${title}"`, async () => (await threads()).find((t) => t.title === title));
  const userTexts = async (threadId: string) => ((await service.ask({ path: `${P}/${threadId}/messages?limit=200`, headers: ALICE })).json().items as { role: string; text: string }[])
    .filter((m) => m.role === 'user').map((m) => m.text);
  const ran = (threadId: string, text: string) => eventually(`"${text}" to run`, async () => (await userTexts(threadId)).includes(text));
  const allUserTexts = async () => (await Promise.all((await threads()).map((t) => userTexts(t.id)))).flat();

  /** Starts the service; `late`: the app listens only once the bot has been online a moment (as after a slow start). */
  async function start(late = false): Promise<void> {
    const storage = createMemoryStorage(state);
    const channels = await chatChannels({
      world, env: { TEST_XMPP_PASSWORD: PASSWORD }, catalog: storage.catalog, log: createLogger(process.env.TEST_LOG ?? 'warn'), file: 'test world',
      living: (channel) => storage.conversations.livingOn(channel),
    });
    assert.ok(channels !== null);
    service = await startService({}, { storage, channels, worldLinks: (c) => world.xmpp?.find((x) => x.channel === c.id)?.links ?? {}, deliveryTiming: { intervalMs: 200, retryMs: 100, maxRetryMs: 500 } });
    if (late) {
      await eventually('the bot online', () => channels.places('team-xmpp', null).then(() => true, () => false));
      await sleep(1_000);
    }
    channels.listen(service.chat);
    await service.knowOffers();
  }

  before(async () => {
    server = await startPrivateProsody();
    await server.register('console', PASSWORD);
    for (const user of ['alice', 'carol']) await server.register(user, `${user}-password-1`);
    alice = await ChatClient.connect(server, 'alice', 'alice-password-1');
    carol = await ChatClient.connect(server, 'carol', 'carol-password-1');
    bot = `console@${server.domain}`;
    lab = `lab@${server.muc}`;
    ops = `ops@${server.muc}`;
    den = `den@${server.muc}`;
    await alice.createRoom(lab, { whois: 'anyone' });
    await alice.createRoom(ops, { whois: 'anyone' });
    await carol.createRoom(den, { whois: 'anyone' });
    const fixture = fixtureWorld();
    world = {
      ...fixture,
      channels: [...fixture.channels, { id: 'team-xmpp', kind: 'xmpp', name: 'Team XMPP', shared: true, browsable: true, agents: ['claude'], defaults: null, linked_users: ['alice'], addresses: [] }],
      xmpp: [{ channel: 'team-xmpp', account: { service: server.service, domain: server.domain, muc: server.muc, jid: bot, password_env: 'TEST_XMPP_PASSWORD', nick: 'console' }, links: { alice: `alice@${server.domain}` } }],
    };
    await createMemoryStorage(state).importWorld(world);
    await start();
    await eventually('the bot online', async () => (await service.ask({ path: `${P}/${fixture.threads[0]!.id}/channels/team-xmpp/addresses`, headers: ALICE })).status === 200);
  });
  after(async () => {
    await service?.close();
    for (const client of [alice, carol]) await client?.close();
    await server?.destroy();
  });

  it("a linked user's direct invitation (XEP-0249) brings the bot into the room, which it says there", async () => {
    await alice.sendRaw(xml('message', { to: bot }, xml('x', { xmlns: 'jabber:x:conference', jid: lab })));
    const notice = await eventually('the bot to say it came', () => fromBot(alice, lab).at(0));
    assert.match(notice.body!, /^alice invited me here\. Start a conversation with "console: …"/, 'named by her nick in the room, never her JID');
    assert.equal(notice.thread, null, 'said in the room, not in a thread');
  });

  it("a linked user's mediated invitation (XEP-0045) brings the bot into the room too", async () => {
    await alice.sendRaw(xml('message', { to: ops }, xml('x', { xmlns: 'http://jabber.org/protocol/muc#user' }, xml('invite', { to: bot }))));
    await eventually('the bot to say it came', () => fromBot(alice, ops).at(0));
  });

  it('an unlinked inviter is told how to link in a direct message, and the bot stays away', async () => {
    await carol.sendRaw(xml('message', { to: bot }, xml('x', { xmlns: 'jabber:x:conference', jid: den })));
    await eventually('the how-to-link reply', () => carol.direct.some((m) => m.from === bot && m.body === HOW_TO_LINK));
    await carol.post(den, null, 'console: are you here?');
    await sleep(2_000);
    assert.deepEqual(fromBot(carol, den), [], 'the bot is not in the room');
  });

  it('after a restart the bot is in the rooms it was invited to again: `console: …` there starts a conversation', async () => {
    await service.close();
    await start();
    await alice.post(lab, null, 'console: anyone here?');
    const answer = await eventually('the answer in a new thread', () => fromBot(alice, lab, (m) => m.thread !== null).at(0));
    assert.ok(answer.body !== HOW_TO_LINK);
    const thread = await threadTitled('anyone here?');
    await ran(thread.id, 'anyone here?');
  });

  it("with one conversation in the room, a linked member's plain message goes to it", async () => {
    const thread = await threadTitled('anyone here?');
    const before = (await threads()).length;
    await alice.post(lab, null, 'a plain message in the room');
    await ran(thread.id, 'a plain message in the room');
    assert.equal((await threads()).length, before, 'no new thread');
  });

  it('`console: …` starts another conversation where one lives', async () => {
    await alice.post(lab, null, 'console: a second conversation');
    const second = await threadTitled('a second conversation');
    await ran(second.id, 'a second conversation');
  });

  /** Alice replies (XEP-0461, with a quote for other clients) to the bot's latest post in the first conversation's thread. */
  async function replyToFirst(text: string): Promise<void> {
    const firstThread = fromBot(alice, lab, (m) => m.thread !== null).at(0)!.thread;
    const post = fromBot(alice, lab, (m) => m.thread === firstThread && m.stanzaId !== null).at(-1)!;
    const quote = `> ${post.body!.split('\n')[0]}\n`;
    await alice.sendRaw(xml('message', { to: lab, type: 'groupchat' },
      xml('body', {}, `${quote}${text}`),
      xml('reply', { xmlns: 'urn:xmpp:reply:0', to: `${lab}/console`, id: post.stanzaId! }),
      xml('fallback', { xmlns: 'urn:xmpp:fallback:0', for: 'urn:xmpp:reply:0' }, xml('body', { start: '0', end: String(Array.from(quote).length) }))));
  }

  it("a reply (XEP-0461) to one of the bot's posts goes to that post's conversation, its quote taken off", async () => {
    const first = await threadTitled('anyone here?');
    await replyToFirst('replying to the first');
    await ran(first.id, 'replying to the first');
    const second = await threadTitled('a second conversation');
    assert.ok(!(await userTexts(second.id)).includes('replying to the first'));
  });

  it('with several conversations in the room, a message naming none runs nothing and its sender is told once how to reach one', async () => {
    const hint = xmppHint('console');
    const texts = (await allUserTexts()).length;
    await alice.post(lab, null, 'which one is this for?');
    await eventually('the hint', () => fromBot(alice, lab, (m) => m.body === hint).length === 1);
    await alice.post(lab, null, 'and this one?');
    await alice.post(lab, null, 'still nobody?');
    await sleep(2_000);
    assert.equal(fromBot(alice, lab, (m) => m.body === hint).length, 1, 'told once');
    assert.equal((await allUserTexts()).length, texts, 'nothing ran');
  });

  it('an invitation sent while the service was down is taken once it is back, even before the app listens', async () => {
    const attic = `attic@${server.muc}`;
    await alice.createRoom(attic, { whois: 'anyone' });
    await service.close();
    await alice.sendRaw(xml('message', { to: bot }, xml('x', { xmlns: 'jabber:x:conference', jid: attic })));
    await sleep(500);
    await start(true);
    await eventually('the bot to say it came', () => fromBot(alice, attic).at(0));
  });

  it('after a restart, a reply to a post from before it still goes to its conversation (found in the room\'s archive)', async () => {
    await service.close();
    await start();
    const first = await threadTitled('anyone here?');
    await replyToFirst('replying after the restart');
    await ran(first.id, 'replying after the restart');
  });

  it('a room that bans the bot, or refuses it at a restart, is served no more: nothing but an invitation brings it back', async () => {
    const attic = `attic@${server.muc}`;
    const served = () => state.chatInbox.served.get('team-xmpp') ?? [];
    assert.ok(served().includes(ops) && served().includes(attic), JSON.stringify(served()));
    // Banned while the service runs: the room removes the bot at once.
    await alice.admin(ops, { jid: bot, affiliation: 'outcast' });
    await eventually('ops served no more', () => !served().includes(ops));
    // Banned while the service is down: the room refuses the bot's join at the start.
    await service.close();
    await alice.admin(attic, { jid: bot, affiliation: 'outcast' });
    await start();
    await eventually('attic served no more', () => !served().includes(attic));
    // Both bans lifted: a restart does not bring the bot back.
    for (const room of [ops, attic]) await alice.admin(room, { jid: bot, affiliation: 'none' });
    await service.close();
    await start();
    const before = fromBot(alice, ops).length + fromBot(alice, attic).length;
    for (const room of [ops, attic]) await alice.post(room, null, 'console: still here?');
    await sleep(2_000);
    assert.equal(fromBot(alice, ops).length + fromBot(alice, attic).length, before, 'the bot stays away');
    // Invited again: it comes, and serves the room again.
    await alice.sendRaw(xml('message', { to: bot }, xml('x', { xmlns: 'jabber:x:conference', jid: ops })));
    await eventually('the bot to come back', () => fromBot(alice, ops).length > before - fromBot(alice, attic).length);
    assert.ok(served().includes(ops));
  });
});
