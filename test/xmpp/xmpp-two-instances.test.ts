// Two instances of the service on one PostgreSQL, each with its own session of the bot in one XMPP room
// (contract section 9, "exactly once across instances"): both hear every message; each person's message
// runs once, an unlinked person is told how to link once, and a direct message is answered once.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { HOW_TO_LINK } from '../../core/channels/inbound.ts';
import type { World } from '../../domain/world.ts';
import type { Storage } from '../../ports/storage.ts';
import { chatChannels } from '../../src/channels/chat-channels.ts';
import { createLogger } from '../../src/logging.ts';
import { ChatClient } from '../support/chat-client.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { testId } from '../support/ids.ts';
import { prosodyMissing, startPrivateProsody, type PrivateProsody } from '../support/private-prosody.ts';
import { startService, type TestService } from '../support/service.ts';
import { storageKinds, type OpenedStorage } from '../support/storage-kinds.ts';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const PASSWORD = 'bot-two-password-5';
const THREAD = testId(42_000);
const P = '/api/console/threads';
const kind = storageKinds('xmpp_two').find((k) => k.name === 'PostgreSQL');
const missing = prosodyMissing() ?? (kind === undefined ? 'TEST_DATABASE_URL is not set (two instances share a PostgreSQL)' : null);

async function eventually<T>(what: string, found: () => T | undefined | null | false | Promise<T | undefined | null | false>, ms = 30_000): Promise<T> {
  for (const started = Date.now(); Date.now() - started < ms; await sleep(100)) {
    const value = await found();
    if (value !== undefined && value !== null && value !== false) return value;
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('two instances of the service in one xmpp room', { skip: missing ?? false }, () => {
  let server: PrivateProsody;
  let alice: ChatClient;
  let carol: ChatClient;
  let opened: OpenedStorage;
  const services: TestService[] = [];
  let general: string;
  let thread: string;
  let landing: string;

  const runsOf = async () => {
    const [conversation] = (await services[0]!.ask({ path: `${P}/${landing}/conversations`, headers: ALICE })).json();
    return (await services[0]!.ask({ path: `${P}/${landing}/conversations/${conversation.id}/runs?limit=100`, headers: ALICE })).json().items as { status: string }[];
  };

  /** Each instance's bot log lines. */
  const botLogs: string[][] = [];
  const joined = (i: number) => botLogs[i]!.some((line) => line.includes('xmpp room joined') && line.includes(general));

  async function instance(storage: Storage, world: World): Promise<TestService> {
    const lines: string[] = [];
    botLogs.push(lines);
    const sink = new Writable({ write(chunk: Buffer, _encoding, done) { lines.push(chunk.toString('utf8')); done(); } });
    const channels = await chatChannels({
      world, env: { TEST_XMPP_PASSWORD: PASSWORD }, catalog: storage.catalog, log: createLogger('info', sink), file: 'test world',
      living: (channel) => storage.conversations.livingOn(channel),
    });
    assert.ok(channels !== null);
    const service = await startService({}, { storage, channels, worldLinks: (c) => world.xmpp?.find((x) => x.channel === c.id)?.links ?? {}, deliveryTiming: { intervalMs: 200, retryMs: 100, maxRetryMs: 500 } });
    channels.listen(service.chat);
    await service.knowOffers();
    await eventually('the bot online', async () => (await service.ask({ path: `${P}/${THREAD}/channels/team-xmpp/addresses`, headers: ALICE })).status === 200);
    return service;
  }

  before(async () => {
    server = await startPrivateProsody();
    await server.register('console', PASSWORD);
    for (const user of ['alice', 'carol']) await server.register(user, `${user}-password-1`);
    alice = await ChatClient.connect(server, 'alice', 'alice-password-1');
    carol = await ChatClient.connect(server, 'carol', 'carol-password-1');
    general = `general@${server.muc}`;
    await alice.createRoom(general, { whois: 'anyone' });
    await carol.joinRoom(general);
    const fixture = fixtureWorld();
    const world: World = {
      ...fixture,
      channels: [...fixture.channels, { id: 'team-xmpp', kind: 'xmpp', name: 'Team XMPP', shared: true, browsable: true, agents: ['claude'], defaults: null, linked_users: ['alice'], addresses: [] }],
      threads: [...fixture.threads, {
        id: THREAD, key: null, channel: 'console', owner: 'alice', members: [], project: null, title: 'Two of us', fork_of: null, fork_cutoff: null,
        messages: [{ id: testId(42_001), role: 'user', text: 'hello', artifact_id: null }],
        conversations: [{ id: testId(42_002), agent: 'claude', model: 'opus', permission_mode: 'default', effort: null, address: null, turn_running: false, pending: [], runs: [] }],
      }],
      xmpp: [{ channel: 'team-xmpp', account: { service: server.service, domain: server.domain, muc: server.muc, jid: `console@${server.domain}`, password_env: 'TEST_XMPP_PASSWORD', nick: 'console' }, links: { alice: `alice@${server.domain}` } }],
    };
    opened = await kind!.open();
    await opened.storage.importWorld(world);
    services.push(await instance(opened.storage, world));
    const res = await services[0]!.ask({ method: 'POST', path: `${P}/${THREAD}/teleport`, headers: ALICE, body: JSON.stringify({ destination: { channel: 'team-xmpp', id: general } }) });
    assert.equal(res.status, 202, res.text);
    thread = (await eventually('the delivery', () => carol.seen.find((m) => m.room === general && m.body?.includes('moved the conversation')))).thread!;
    const [source] = (await services[0]!.ask({ path: `${P}/${THREAD}/conversations`, headers: ALICE })).json();
    landing = source.moved_to.thread_id;
    // The second instance starts once the conversation lives in the room: it joins it at start.
    services.push(await instance(await opened.reopen(), world));
    await eventually('both bots in the room', () => joined(0) && joined(1));
  });
  after(async () => {
    for (const service of services) await service.close();
    await opened?.close();
    for (const client of [alice, carol]) await client?.close();
    await server?.destroy();
  });

  it('a message both instances hear runs once; an unlinked person is told once', async () => {
    await alice.post(general, thread, 'one message, two bots');
    await eventually('the run', async () => (await runsOf()).length === 1);
    await carol.post(general, thread, 'who are you?');
    await eventually('the how-to-link reply', () => carol.seen.some((m) => m.body === HOW_TO_LINK));
    await eventually('the turn to end', async () => (await runsOf()).every((r) => r.status !== 'running'));
    await sleep(3_000);
    assert.equal((await runsOf()).length, 1, 'one run');
    assert.equal(carol.seen.filter((m) => m.body === HOW_TO_LINK).length, 1, 'told once');
    assert.equal(carol.seen.filter((m) => m.body?.includes('All done here.')).length, 1, 'the answer posted once');
  });

  it('a direct message is answered once', async () => {
    await carol.sendDirect(`console@${server.domain}`, 'hello bot');
    await eventually('the help text', () => carol.direct.length > 0);
    await sleep(2_000);
    assert.equal(carol.direct.length, 1, JSON.stringify(carol.direct));
  });
});
