// Two instances of the service on one PostgreSQL, each with its own Socket Mode connection of the bot to one Slack
// workspace (the tests' local Slack; contract section 10, "a second instance runs nothing twice"). Slack sends each
// envelope to one of an app's connections: the local Slack hands them out in turn, so alice's messages are split
// between the instances; and at worst it redelivers one to the other connection while the first had it too
// (`redeliverToOthers`: every envelope reaches both, the copy with `retry_attempt` 1). Either way each of alice's
// messages in the conversation's thread runs once and its answer is posted once, an unlinked person is told how
// to link once, a mention opens one thread, a direct message is answered once, and a delivery asked of both
// instances (through the outbox they share, or of each one's channel in turn) is posted once. Asked of both
// instances' channels at the same moment it is posted twice: a todo, below.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DELIVERY_EVENT } from '../../adapters/slack/deliver.ts';
import { HOW_TO_LINK } from '../../core/channels/inbound.ts';
import type { World } from '../../domain/world.ts';
import type { Delivery } from '../../ports/delivery-outbox.ts';
import type { Storage } from '../../ports/storage.ts';
import { chatChannels } from '../../src/channels/chat-channels.ts';
import { createLogger } from '../../src/logging.ts';
import { startFakeSlack, type FakeSlack, type SlackMessage } from '../support/fake-slack.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { testId } from '../support/ids.ts';
import { startService, type TestService } from '../support/service.ts';
import { storageKinds, type OpenedStorage } from '../support/storage-kinds.ts';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const THREAD = testId(44_000);
const P = '/api/console/threads';
const GENERAL = 'C0GENERAL';
const kind = storageKinds('slack_two').find((k) => k.name === 'PostgreSQL');
const missing = kind === undefined ? 'TEST_DATABASE_URL is not set (two instances share a PostgreSQL)' : null;

async function eventually<T>(what: string, found: () => T | undefined | null | false | Promise<T | undefined | null | false>, ms = 30_000): Promise<T> {
  for (const started = Date.now(); Date.now() - started < ms; await sleep(100)) {
    const value = await found();
    if (value !== undefined && value !== null && value !== false) return value;
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** What a message shows: its sections' text (the service's posts), else its text; entities decoded. */
function shownText(message: { text?: string; blocks?: unknown }): string {
  const sections = Array.isArray(message.blocks)
    ? (message.blocks as { type?: string; text?: { text?: string } }[]).filter((b) => b.type === 'section').map((b) => b.text?.text ?? '')
    : [];
  const raw = sections.length > 0 ? sections.join('') : (message.text ?? '');
  return raw.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** A UUIDv7 of now (a delivery id carries its time: the channel looks for its post from then on). */
function uuid7(): string {
  const time = Date.now().toString(16).padStart(12, '0');
  const random = randomBytes(10).toString('hex');
  const variant = ((parseInt(random[3]!, 16) & 0x3) | 0x8).toString(16);
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(0, 3)}-${variant}${random.slice(4, 7)}-${random.slice(7, 19)}`;
}

describe('two instances of the service on one Slack workspace', { skip: missing ?? false, timeout: 300_000 }, () => {
  let slack: FakeSlack;
  let opened: OpenedStorage;
  const services: TestService[] = [];
  const ports: Awaited<ReturnType<typeof chatChannels>>[] = [];
  /** Each instance's log lines. */
  const logs: string[][] = [];
  /** The Slack thread the conversation lives in (its parent's ts), and the console thread it landed on. */
  let ts: string;
  let landing: string;

  const runsOf = async () => {
    const [conversation] = (await services[0]!.ask({ path: `${P}/${landing}/conversations`, headers: ALICE })).json();
    return (await services[0]!.ask({ path: `${P}/${landing}/conversations/${conversation.id}/runs?limit=100`, headers: ALICE })).json().items as { status: string }[];
  };
  const userTexts = async () => ((await services[0]!.ask({ path: `${P}/${landing}/messages?limit=200`, headers: ALICE })).json().items as { role: string; text: string }[])
    .filter((m) => m.role === 'user').map((m) => m.text);
  /** Every post of the bot in the conversation's thread (its replies, the parent left out), oldest first. */
  const botReplies = (): SlackMessage[] => slack.replies(GENERAL, ts).filter((m) => m.ts !== ts && m.bot_id === slack.botId);
  /** The envelopes that carried a person's message (events_api `message` events of that ts), every copy. */
  const envelopesOf = (messageTs: string) => slack.envelopes.filter((e) => {
    const event = e.payload['event'] as { type?: string; ts?: string } | undefined;
    return e.type === 'events_api' && event?.type === 'message' && event.ts === messageTs;
  });
  /** Which instances logged handling a message (by its ts), as indexes. */
  const handledBy = (messageTs: string) => logs.flatMap((lines, i) => (lines.some((l) => l.includes('slack message handled') && l.includes(messageTs)) ? [i] : []));
  /** The posts anywhere in #general (threads included) that carry this delivery id. */
  const postsOf = (deliveryId: string) => slack.messages(GENERAL).filter((m) => m.bot_id === slack.botId && m.metadata?.event_type === DELIVERY_EVENT && m.metadata.event_payload['delivery_id'] === deliveryId);

  async function instance(storage: Storage, world: World): Promise<TestService> {
    const lines: string[] = [];
    logs.push(lines);
    const sink = new Writable({ write(chunk: Buffer, _encoding, done) { lines.push(chunk.toString('utf8')); done(); } });
    const channels = await chatChannels({
      world, env: { TWO_SLACK_APP: slack.appToken, TWO_SLACK_BOT: slack.botToken }, catalog: storage.catalog, log: createLogger('info', sink), file: 'test world',
      living: (channel) => storage.conversations.livingOn(channel),
    });
    assert.ok(channels !== null);
    ports.push(channels);
    const service = await startService({}, { storage, channels, worldLinks: (c) => world.slack?.find((s) => s.channel === c.id)?.links ?? {}, deliveryTiming: { intervalMs: 200, retryMs: 100, maxRetryMs: 500 } });
    channels.listen(service.chat);
    await service.knowOffers();
    await eventually('the bot online', async () => (await service.ask({ path: `${P}/${THREAD}/channels/team-slack/addresses`, headers: ALICE })).status === 200);
    return service;
  }

  /**
   * Alice writes `texts` in the thread back to back (each envelope sent before the next is written), then: each
   * ran as one directive in one run of its own, each answered once and nothing else posted; answers the messages' ts.
   */
  async function aliceWrites(texts: readonly string[]): Promise<string[]> {
    const runsBefore = (await runsOf()).length;
    const mark = botReplies().length;
    const posted: string[] = [];
    for (const text of texts) posted.push(await slack.post('U0ALICE', GENERAL, text, { threadTs: ts }));
    await eventually('every message run', async () => {
      const runs = await runsOf();
      return runs.length >= runsBefore + texts.length && runs.every((r) => r.status !== 'running');
    }, 60_000);
    await eventually('every answer posted', () => botReplies().slice(mark).filter((m) => shownText(m).includes('All done here.')).length >= texts.length)
      .catch((error: Error) => assert.fail(`${error.message}: ${JSON.stringify(botReplies().slice(mark).map((m) => shownText(m)))}`));
    await sleep(3_000);
    const users = await userTexts();
    for (const text of texts) assert.equal(users.filter((t) => t === text).length, 1, `one directive of "${text}"`);
    assert.equal((await runsOf()).length, runsBefore + texts.length, 'one run a message');
    const said = botReplies().slice(mark).map((m) => shownText(m));
    assert.equal(said.length, texts.length, `one post a message: ${JSON.stringify(said)}`);
    assert.ok(said.every((t) => t.includes('All done here.')), JSON.stringify(said));
    return posted;
  }

  before(async () => {
    slack = await startFakeSlack();
    for (const [id, name] of [['U0ALICE', 'alice'], ['U0CAROL', 'carol']] as const) slack.addUser({ id, name });
    slack.addChannel({ id: GENERAL, name: 'general' });
    const fixture = fixtureWorld();
    const world: World = {
      ...fixture,
      channels: [...fixture.channels, { id: 'team-slack', kind: 'slack', name: 'Team Slack', shared: true, browsable: true, agents: ['claude'], defaults: null, linked_users: ['alice'], addresses: [] }],
      threads: [...fixture.threads, {
        id: THREAD, key: null, channel: 'console', owner: 'alice', members: [], project: null, title: 'Two of us', fork_of: null, fork_cutoff: null,
        messages: [{ id: testId(44_001), role: 'user', text: 'hello', artifact_id: null }],
        conversations: [{ id: testId(44_002), agent: 'claude', model: 'opus', permission_mode: 'default', effort: null, address: null, turn_running: false, pending: [], runs: [] }],
      }],
      slack: [{ channel: 'team-slack', settings: { app_token_env: 'TWO_SLACK_APP', bot_token_env: 'TWO_SLACK_BOT', api_url: slack.apiUrl }, links: { alice: 'U0ALICE' } }],
    };
    opened = await kind!.open();
    await opened.storage.importWorld(world);
    services.push(await instance(opened.storage, world));
    const res = await services[0]!.ask({ method: 'POST', path: `${P}/${THREAD}/teleport`, headers: ALICE, body: JSON.stringify({ destination: { channel: 'team-slack', id: GENERAL } }) });
    assert.equal(res.status, 202, res.text);
    const top = await eventually('the top-level post', () => slack.history(GENERAL).find((m) => m.bot_id === slack.botId && shownText(m).includes('Two of us')));
    ts = top.ts;
    const [source] = (await services[0]!.ask({ path: `${P}/${THREAD}/conversations`, headers: ALICE })).json();
    landing = source.moved_to.thread_id;
    await eventually('the landed address', async () => {
      const [conversation] = (await services[0]!.ask({ path: `${P}/${landing}/conversations`, headers: ALICE })).json();
      return conversation.address?.id === `${GENERAL}:${ts}`;
    });
    // The second instance starts once the conversation lives in the thread: it reads it at connect.
    services.push(await instance(await opened.reopen(), world));
    await eventually('both bots connected', () => slack.connections() === 2);
  });
  after(async () => {
    // SLACK_TWO_LOGS=<path>: each instance's log lines (its bot's, then the service's) in <path>.0 and <path>.1.
    const keep = process.env.SLACK_TWO_LOGS;
    if (keep) for (const [i, lines] of logs.entries()) writeFileSync(`${keep}.${i}`, lines.join('') + (services[i]?.logs ?? []).map((l) => `${JSON.stringify(l)}\n`).join(''));
    for (const service of services) await service.close();
    await opened?.close();
    await slack?.close();
  });

  it("each envelope goes to one connection, in turn: alice's messages are split between the instances, each runs once and is answered once", async () => {
    const posted = await aliceWrites(['one of four', 'two of four', 'three of four', 'four of four']);
    for (const messageTs of posted) {
      const sent = envelopesOf(messageTs);
      assert.deepEqual(sent.map((e) => e.retry_attempt), [0], 'sent once, to one connection');
      assert.ok(sent[0]!.ackedAt !== null && sent[0]!.ackedAt - sent[0]!.sentAt <= 3_000, 'acknowledged in time');
    }
    assert.equal(new Set(posted.map((m) => envelopesOf(m)[0]!.connection)).size, 2, 'both connections got some');
    // Each handled where it arrived; both instances ran some.
    assert.deepEqual(new Set(posted.flatMap((m) => handledBy(m))), new Set([0, 1]), 'both instances handled some');
  });

  it('an unlinked person is told how to link once, to them alone, and nothing runs', async () => {
    const runsBefore = (await runsOf()).length;
    const from = slack.ephemerals.length;
    const told = () => slack.ephemerals.slice(from).filter((e) => e.user === 'U0CAROL' && shownText(e) === HOW_TO_LINK);
    await slack.post('U0CAROL', GENERAL, 'who are you?', { threadTs: ts });
    await eventually('the how-to-link reply', () => told().length === 1);
    await slack.post('U0CAROL', GENERAL, 'hello?', { threadTs: ts });
    await sleep(2_000);
    assert.equal(told().length, 1, 'told once');
    assert.equal((await runsOf()).length, runsBefore, 'nothing ran');
  });

  describe('every envelope reaching both instances (a redelivery to the other connection, retry_attempt 1)', () => {
    before(() => slack.redeliverToOthers(true));
    after(() => slack.redeliverToOthers(false));

    it("each of alice's messages runs once and its answer is posted once", async () => {
      const posted = await aliceWrites(['one of three, twice sent', 'two of three, twice sent', 'three of three, twice sent']);
      for (const messageTs of posted) {
        const sent = envelopesOf(messageTs);
        assert.deepEqual(sent.map((e) => e.retry_attempt).sort(), [0, 1], 'sent to both connections');
        assert.equal(new Set(sent.map((e) => e.connection)).size, 2);
        assert.ok(sent.every((e) => e.ackedAt !== null && e.ackedAt - e.sentAt <= 3_000), 'both acknowledged in time');
      }
    });

    it('a mention outside the thread opens one thread, answered once in the mention\'s own thread', async () => {
      const threadsBefore = (await services[0]!.ask({ path: `${P}?limit=200`, headers: ALICE })).json();
      const mention = await slack.post('U0ALICE', GENERAL, `<@${slack.botUserId}> start one thing`);
      await eventually("the answer in the mention's thread", () => slack.replies(GENERAL, mention).some((m) => m.bot_id === slack.botId && shownText(m).includes('All done here.')));
      await sleep(3_000);
      const answers = slack.replies(GENERAL, mention).filter((m) => m.bot_id === slack.botId);
      assert.equal(answers.length, 1, `answered once: ${JSON.stringify(answers.map((m) => shownText(m)))}`);
      const threads = (await services[0]!.ask({ path: `${P}?limit=200`, headers: ALICE })).json();
      const opened = JSON.stringify(threads).split('start one thing').length - 1;
      assert.equal(opened, 1, 'one console thread opened');
      assert.ok(JSON.stringify(threads).length > JSON.stringify(threadsBefore).length);
    });

    it('a direct message is answered once', async () => {
      const im = slack.imChannel('U0CAROL');
      await slack.dm('U0CAROL', 'hello bot');
      const answers = () => slack.messages(im).filter((m) => m.bot_id === slack.botId);
      await eventually('the help text', () => answers().length > 0);
      await sleep(2_000);
      assert.equal(answers().length, 1, JSON.stringify(answers().map((m) => m.text)));
    });
  });

  describe('a delivery asked of both instances is posted once', () => {
    const delivery = (text: string): Delivery => {
      const at = `${GENERAL}:${ts}`;
      return { id: uuid7(), channel: 'team-slack', place: at, new_thread: false, address: { channel: 'team-slack', id: at }, title: '', text };
    };

    it('through the outbox both instances look at', async () => {
      const d = delivery('asked of both, through the outbox');
      await opened.storage.outbox.add(d);
      await eventually('the post', () => postsOf(d.id).length > 0);
      await sleep(2_000);
      assert.equal(postsOf(d.id).length, 1);
    });

    // Two ports asked one delivery at the same moment, outside the outbox (whose claim gives a delivery to one
    // instance at a time): both search the thread before either posted. Through the outbox it takes a post that
    // Slack stores after the adapter gave up on it (a write is bounded to 5 s and never sent again by the SDK, well
    // under the dispatcher's 10 s window), then another instance's search before Slack stored it: Slack's
    // chat.postMessage has no idempotency key, so this stays a known limit.
    it("of both instances' channels at once, outside the outbox", { todo: 'posted twice: the search before a post is no claim across instances' }, async () => {
      const d = delivery('asked of both at once');
      await Promise.all([ports[0]!.deliver(d), ports[1]!.deliver(d)]);
      assert.equal(postsOf(d.id).length, 1);
    });

    it("of each instance's channel in turn (the first one's answer came too late)", async () => {
      const d = delivery('asked of both, one after the other');
      await ports[0]!.deliver(d);
      await ports[1]!.deliver(d);
      await ports[0]!.deliver(d);
      assert.equal(postsOf(d.id).length, 1);
    });
  });
});
