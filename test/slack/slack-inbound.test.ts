// People in a Slack workspace talk to the agent (contract section 10), with the service composed as
// src/main.ts composes it over a local Slack of the tests' own (the Web API and Socket Mode) and the
// bundled demo agent: a teleport opens a thread with a top-level post and the conversation lives in it; a
// linked member's reply runs once and the agent's answer comes back in the thread; an approval is a message
// with buttons, a stranger's click refused to them alone, a linked member's answering it (the message then
// says who chose what); an unlinked person is told how to link once, ephemerally, and nothing runs; `link
// <code>` in a direct message links (and one Slack never sent is read back on reconnect); a mention opens a thread; bots are never directives; every envelope is
// acknowledged within 3 s; the tokens are in no answer and no log line.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { emptyState } from '../../adapters/memory/state.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { DELIVERY_EVENT } from '../../adapters/slack/deliver.ts';
import { HOW_TO_LINK } from '../../core/channels/inbound.ts';
import type { World } from '../../domain/world.ts';
import { chatChannels } from '../../src/channels/chat-channels.ts';
import { createLogger } from '../../src/logging.ts';
import { shownText } from '../support/slack.ts';
import { startFakeSlack, type FakeSlack } from '../support/fake-slack.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { testId } from '../support/ids.ts';
import { startService, type TestService } from '../support/service.ts';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const BOB = { authorization: 'Bearer token-bob', 'content-type': 'application/json' };
const THREAD = testId(43_000);
const P = '/api/console/threads';
const GENERAL = 'C0GENERAL';

/** Polls until `found` answers something, for at most `ms`. */
async function eventually<T>(what: string, found: () => T | undefined | null | false | Promise<T | undefined | null | false>, ms = 20_000): Promise<T> {
  for (const started = Date.now(); Date.now() - started < ms; await sleep(50)) {
    const value = await found();
    if (value !== undefined && value !== null && value !== false) return value;
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('people in a Slack workspace talk to the agent', () => {
  let slack: FakeSlack;
  let service: TestService;
  /** The Slack thread the conversation lives in, and the console thread it landed on. */
  let ts: string;
  let landing: string;
  const state = emptyState();
  let world: World;
  const lines: string[] = [];
  const log = new Writable({ write(chunk: Buffer, _encoding, done) { lines.push(chunk.toString('utf8')); done(); } });

  const fromBot = (filter: (m: { text?: string; blocks?: unknown; bot_id?: string; ts: string }) => boolean) =>
    slack.replies(GENERAL, ts).filter((m) => m.bot_id === slack.botId && filter(m));
  const runsOf = async () => {
    const [conversation] = (await service.ask({ path: `${P}/${landing}/conversations`, headers: ALICE })).json();
    return (await service.ask({ path: `${P}/${landing}/conversations/${conversation.id}/runs?limit=100`, headers: ALICE })).json().items as { status: string }[];
  };
  const idle = () => eventually('the thread to be idle', async () => {
    const runs = await runsOf();
    return runs.every((r) => r.status !== 'running') && runs;
  });
  const userTexts = async () => ((await service.ask({ path: `${P}/${landing}/messages?limit=200`, headers: ALICE })).json().items as { role: string; text: string }[])
    .filter((m) => m.role === 'user').map((m) => m.text);

  async function start(): Promise<void> {
    const storage = createMemoryStorage(state);
    const channels = await chatChannels({
      world, env: { TEST_SLACK_APP: slack.appToken, TEST_SLACK_BOT: slack.botToken }, catalog: storage.catalog, log: createLogger('info', log), file: 'test world',
      living: (channel) => storage.conversations.livingOn(channel),
    });
    assert.ok(channels !== null);
    service = await startService({}, { storage, channels, worldLinks: (c) => world.slack?.find((s) => s.channel === c.id)?.links ?? {}, deliveryTiming: { intervalMs: 200, retryMs: 100, maxRetryMs: 500 } });
    channels.listen(service.chat);
    await service.knowOffers();
    await eventually('the bot online', async () => (await service.ask({ path: `${P}/${THREAD}/channels/team-slack/addresses`, headers: ALICE })).status === 200);
  }

  before(async () => {
    slack = await startFakeSlack();
    for (const [id, name] of [['U0ALICE', 'alice'], ['U0BOB', 'bob'], ['U0CAROL', 'carol']] as const) slack.addUser({ id, name });
    slack.addUser({ id: 'U0ROBOT', name: 'robot', botId: 'B0ROBOT' });
    slack.addChannel({ id: GENERAL, name: 'general' });
    slack.addChannel({ id: 'C0OLD', name: 'old', archived: true });
    const fixture = fixtureWorld();
    world = {
      ...fixture,
      channels: [...fixture.channels, { id: 'team-slack', kind: 'slack', name: 'Team Slack', shared: true, browsable: true, agents: ['claude'], defaults: null, linked_users: ['alice'], addresses: [] }],
      threads: [...fixture.threads, {
        id: THREAD, key: null, channel: 'console', owner: 'alice', members: ['bob'], project: null, title: 'Ship it', fork_of: null, fork_cutoff: null,
        messages: [{ id: testId(43_001), role: 'user', text: 'ship the release', artifact_id: null }],
        conversations: [{ id: testId(43_002), agent: 'claude', model: 'opus', permission_mode: 'default', effort: null, address: null, turn_running: false, pending: [], runs: [] }],
      }],
      slack: [{ channel: 'team-slack', settings: { app_token_env: 'TEST_SLACK_APP', bot_token_env: 'TEST_SLACK_BOT', api_url: slack.apiUrl }, links: { alice: 'U0ALICE' } }],
    };
    await createMemoryStorage(state).importWorld(world);
    await start();
  });
  after(async () => {
    await service?.close();
    await slack?.close();
  });

  it('lists the channels the bot is in, the archived one barred', async () => {
    const res = await service.ask({ path: `${P}/${THREAD}/channels/team-slack/addresses`, headers: ALICE });
    assert.equal(res.status, 200, res.text);
    const rows = res.json() as { id: string; metadata: { barred?: string; inside?: string; name: string } }[];
    assert.equal(rows.find((r) => r.id === GENERAL)?.metadata.barred, undefined, res.text);
    assert.equal(rows.find((r) => r.id === GENERAL)?.metadata.inside, GENERAL);
    assert.match(rows.find((r) => r.id === 'C0OLD')?.metadata.barred ?? '', /archived/);
  });

  it('a teleport to a channel opens a thread with one top-level post naming the conversation, where the conversation lives', async () => {
    const res = await service.ask({ method: 'POST', path: `${P}/${THREAD}/teleport`, headers: ALICE, body: JSON.stringify({ destination: { channel: 'team-slack', id: GENERAL } }) });
    assert.equal(res.status, 202, res.text);
    const top = await eventually('the top-level post', () => slack.history(GENERAL).find((m) => m.bot_id === slack.botId && shownText(m).includes('Ship it')));
    assert.equal(top.metadata?.event_type, DELIVERY_EVENT);
    ts = top.ts;
    const [source] = (await service.ask({ path: `${P}/${THREAD}/conversations`, headers: ALICE })).json();
    landing = source.moved_to.thread_id;
    // The conversation lives in the post's thread, at the address Slack gave it.
    const address = await eventually('the landed address', async () => {
      const [conversation] = (await service.ask({ path: `${P}/${landing}/conversations`, headers: ALICE })).json();
      return conversation.address?.id === `${GENERAL}:${ts}` && conversation.address;
    });
    assert.deepEqual(address, { channel: 'team-slack', id: `${GENERAL}:${ts}` });
    await sleep(500);
    assert.equal(slack.history(GENERAL).filter((m) => m.bot_id === slack.botId).length, 1, 'posted once');
  });

  it("a linked member's reply in the thread runs once, and the agent's answer comes back in the thread", async () => {
    await slack.post('U0ALICE', GENERAL, 'Hello from the thread', { threadTs: ts });
    const answer = await eventually('the answer in the thread', () => fromBot(() => true).at(0));
    const runs = await idle();
    assert.equal(runs.length, 1, 'one run for one message');
    assert.equal((await userTexts()).filter((t) => t === 'Hello from the thread').length, 1);
    assert.ok(shownText(answer).length > 0);
    await sleep(500);
    assert.equal(fromBot((m) => m.ts === answer.ts).length, 1, 'posted once');
  });

  it("an approval is a message with a button per option: a stranger's click is refused to them alone, a linked member's answers it", async () => {
    const before = (await runsOf()).length;
    await slack.post('U0ALICE', GENERAL, '[approval] edit the notes', { threadTs: ts });
    const ask = await eventually('the approval in the thread', () => fromBot((m) => JSON.stringify(m.blocks ?? []).includes('console_answer')).at(0));
    const buttons = (ask.blocks as { type: string; elements?: { action_id: string; value: string; text: { text: string } }[] }[])
      .flatMap((b) => (b.type === 'actions' ? b.elements ?? [] : []));
    const allow = buttons.find((b) => /allow/i.test(b.text.text));
    assert.ok(allow, JSON.stringify(buttons));
    assert.equal(allow.action_id, 'console_answer');
    const ephemerals = slack.ephemerals.length;
    await slack.click('U0CAROL', { channel: GENERAL, ts: ask.ts, actionId: allow.action_id, value: allow.value });
    await eventually('the refusal to carol', () => slack.ephemerals.slice(ephemerals).find((e) => e.user === 'U0CAROL'));
    assert.equal((await runsOf())[0]!.status, 'running', 'her click answered nothing');
    await slack.click('U0ALICE', { channel: GENERAL, ts: ask.ts, actionId: allow.action_id, value: allow.value });
    const runs = await eventually('the turn to succeed', async () => {
      const all = await runsOf();
      return all.length === before + 1 && all[0]!.status === 'succeeded' && all;
    });
    assert.equal(runs.length, before + 1);
    const updated = slack.replies(GENERAL, ts).find((m) => m.ts === ask.ts)!;
    assert.match(JSON.stringify(updated.blocks), /<@U0ALICE> chose/);
    assert.ok(!(updated.blocks as { type: string }[]).some((b) => b.type === 'actions'), 'the buttons are gone');
  });

  it('an unlinked person is told how to link once, to them alone, and nothing runs', async () => {
    const before = (await runsOf()).length;
    const from = slack.ephemerals.length;
    const told = () => slack.ephemerals.slice(from).filter((e) => e.user === 'U0CAROL' && shownText(e) === HOW_TO_LINK);
    await slack.post('U0CAROL', GENERAL, 'run rm -rf /', { threadTs: ts });
    await eventually('the how-to-link reply', () => told().length === 1);
    await slack.post('U0CAROL', GENERAL, 'hello?', { threadTs: ts });
    await sleep(1_500);
    assert.equal(told().length, 1, 'told once');
    assert.equal(fromBot((m) => shownText(m) === HOW_TO_LINK).length, 0, 'never in the thread for everyone');
    assert.equal((await runsOf()).length, before);
  });

  it('bots, ours and others, are never directives', async () => {
    const before = (await runsOf()).length;
    await slack.post('U0ROBOT', GENERAL, 'I am another bot: deploy now', { threadTs: ts });
    await slack.post('U0ALICE', GENERAL, 'after the bot', { threadTs: ts });
    await eventually('alice after the bot', async () => (await userTexts()).includes('after the bot'));
    await idle();
    assert.equal((await runsOf()).length, before + 1);
    assert.ok(!(await userTexts()).some((t) => t.includes('another bot')));
  });

  it('`link <code>` in a direct message links the sender; a help text answers anything else', async () => {
    const code = await service.ask({ method: 'POST', path: '/api/account/links', headers: BOB, body: JSON.stringify({ channel: 'team-slack' }) });
    assert.equal(code.status, 201, code.text);
    await slack.dm('U0BOB', 'hi bot');
    const im = () => slack.calls.filter((c) => c.method === 'chat.postMessage' && String(c.args['channel']).startsWith('D')).map((c) => String(c.args['text']));
    await eventually('the help text', () => im().some((t) => t.includes('link &lt;code&gt;')));
    await slack.dm('U0BOB', `link ${code.json().code}`);
    await eventually('the linked reply', () => im().some((t) => t.startsWith('Linked:')));
    const links = (await service.ask({ path: '/api/account/links', headers: BOB })).json() as { channel: string; address: string }[];
    // Addresses are matched and kept without case (a JID's way; Slack's ids differ by more than case).
    assert.deepEqual(links.map((l) => [l.channel, l.address.toUpperCase()]), [['team-slack', 'U0BOB']]);
    const before = (await runsOf()).length;
    await slack.post('U0BOB', GENERAL, 'bob here, carry on', { threadTs: ts });
    await eventually("bob's message to run", async () => (await runsOf()).length === before + 1);
    await idle();
  });

  it('a direct message whose event Slack never sent (the socket down, or the instance that took it killed) is read back after the reconnect, and answered once', async () => {
    const im = slack.imChannel('U0BOB');
    const answers = () => slack.messages(im).filter((m) => m.bot_id === slack.botId).map((m) => String(m.text));
    const before = answers().length;
    await slack.stop();
    try {
      await slack.post('U0BOB', im, 'link not-a-code', { lost: true });
    } finally {
      await slack.start();
    }
    await eventually('the answer after the reconnect', () => answers().length > before);
    await sleep(1_000);
    assert.equal(answers().length, before + 1, JSON.stringify(answers().slice(before)));
    assert.doesNotMatch(answers().at(-1)!, /^Linked:/);
  });

  it('a mention outside a living thread opens a thread of the sender\'s, answered in the mention\'s own thread', async () => {
    const mention = await slack.post('U0ALICE', GENERAL, `<@${slack.botUserId}> start something new`);
    const reply = await eventually('the answer in the mention\'s thread', () => slack.replies(GENERAL, mention).find((m) => m.bot_id === slack.botId));
    assert.equal(reply.thread_ts, mention);
    const threads = JSON.stringify((await service.ask({ path: `${P}?limit=50`, headers: ALICE })).json());
    assert.ok(threads.includes('start something new'), 'a console thread titled by the message, without the mention');
    assert.ok(!threads.includes(`<@${slack.botUserId}>`));
  });

  it('`stop` in the thread cancels the running turn', async () => {
    const before = (await runsOf()).length;
    await slack.post('U0ALICE', GENERAL, '[slow] take your time', { threadTs: ts });
    await eventually('the slow turn running', async () => {
      const runs = await runsOf();
      return runs.length === before + 1 && runs[0]!.status === 'running';
    });
    await slack.post('U0ALICE', GENERAL, 'stop', { threadTs: ts });
    const runs = await eventually('the turn cancelled', async () => {
      const all = await runsOf();
      return all[0]!.status === 'cancelled' && all;
    });
    assert.equal(runs.length, before + 1, '`stop` ran no turn of its own');
    await eventually('the stop said in the thread', () => fromBot((m) => shownText(m) === 'The turn was stopped.').length === 1);
  });

  it("the agent's text pings nobody: a broadcast or a mention it writes is posted as text", async () => {
    await idle();
    const posted = slack.calls.length;
    // The demo agent says back what it works on: the agent's text holds the hostile marks.
    await slack.post('U0ALICE', GENERAL, 'ping <!channel> and <!here> and <@U0CAROL> and <#C0OLD> now', { threadTs: ts });
    const call = await eventually('the answer posted', () => slack.calls.slice(posted).find((c) => c.method === 'chat.postMessage' && String(c.args['text']).includes('ping')));
    await idle();
    const wire = JSON.stringify([call.args['text'], call.args['blocks']]);
    for (const mark of ['<!channel>', '<!here>', '<@U0CAROL>', '<#C0OLD>']) assert.ok(!wire.includes(mark), `${mark} is not in ${wire}`);
    assert.ok(wire.includes('&lt;!channel&gt;'), 'shown as the text it was');
  });

  it("a 429 is waited out (Retry-After) and the answer is posted once", async () => {
    await idle();
    const posted = slack.calls.length;
    slack.rateLimit('chat.postMessage', 1, 1);
    await slack.post('U0ALICE', GENERAL, 'answer me through a rate limit', { threadTs: ts });
    await eventually('the answer posted after the 429', () => fromBot((m) => shownText(m).includes('answer me through a rate limit')).length === 1);
    const calls = slack.calls.slice(posted).filter((c) => c.method === 'chat.postMessage' && !String(c.args['channel']).startsWith('D'));
    assert.deepEqual(calls.map((c) => c.status), [429, 200], JSON.stringify(calls.map((c) => [c.status, String(c.args['text']).slice(0, 40)])));
    await idle();
    await sleep(500);
    assert.equal(fromBot((m) => shownText(m).includes('answer me through a rate limit')).length, 1, 'posted once');
  });

  it('while Socket Mode is down places answer 503; a reply whose event Slack never sent is read from the thread after the reconnect, once', async () => {
    await idle();
    const before = (await runsOf()).length;
    await slack.stop();
    try {
      const res = await service.ask({ path: `${P}/${THREAD}/channels/team-slack/addresses`, headers: ALICE });
      assert.equal(res.status, 503, res.text);
      assert.equal(res.json().code, 'channel_unavailable');
      // Posted while the app was away, its event given up on: only the thread holds it.
      await slack.post('U0ALICE', GENERAL, 'written while the socket was down', { threadTs: ts, lost: true });
    } finally {
      await slack.start();
    }
    await eventually('the message to run after the reconnect', async () => (await userTexts()).includes('written while the socket was down'));
    await idle();
    await sleep(1_000);
    assert.equal((await userTexts()).filter((t) => t === 'written while the socket was down').length, 1, 'read once');
    assert.equal((await runsOf()).length, before + 1);
  });

  it('a reply lost while Socket Mode was down is read even when a later one arrives live first after the reconnect', async () => {
    await idle();
    const before = (await runsOf()).length;
    await slack.stop();
    try {
      await slack.post('U0ALICE', GENERAL, 'lost while down', { threadTs: ts, lost: true });
    } finally {
      await slack.start();
    }
    // Said the moment the socket is back, before the thread is read again: handled live, it must not move the
    // thread's cursor past the one Slack never sent.
    await slack.connected(20_000);
    await slack.post('U0ALICE', GENERAL, 'said right after the reconnect', { threadTs: ts });
    await eventually('both to run', async () => {
      const texts = await userTexts();
      return texts.includes('lost while down') && texts.includes('said right after the reconnect');
    });
    await idle();
    assert.equal((await runsOf()).length, before + 2);
  });

  it('an envelope whose ack was lost is redelivered by Slack (retry_attempt 1) and its message runs once', async () => {
    await idle();
    const before = (await runsOf()).length;
    slack.loseAcksOf('my ack went missing');
    const messageTs = await slack.post('U0ALICE', GENERAL, 'my ack went missing', { threadTs: ts });
    const sent = () => slack.envelopes.filter((e) => (e.payload.event as { ts?: string } | undefined)?.ts === messageTs);
    await eventually('the redelivery, acknowledged', () => sent().length === 2 && sent()[1]!.ackedAt !== null, 20_000);
    assert.deepEqual(sent().map((e) => [e.retry_attempt, e.retry_reason]), [[0, ''], [1, 'timeout']]);
    assert.equal(sent()[0]!.ackedAt, null, 'the first ack never arrived');
    await idle();
    await sleep(500);
    assert.equal((await userTexts()).filter((t) => t === 'my ack went missing').length, 1, 'stored once');
    assert.equal((await runsOf()).length, before + 1, 'run once');
  });

  it('acknowledges every envelope within 3 s, and no message runs twice', async () => {
    // An envelope sent a moment ago (the echo of the bot's last post) may still be on its way back: wait until each
    // is answered or past its 3 s, then judge them all.
    await eventually('each envelope answered or past its time', () => slack.envelopes.every((e) => e.ackedAt !== null || Date.now() - e.sentAt > 3_000), 5_000);
    // The envelope whose ack the test above lost on purpose is not the service's lateness.
    const lostOnPurpose = (e: (typeof slack.envelopes)[number]) => e.retry_attempt === 0 && (e.payload.event as { text?: string } | undefined)?.text === 'my ack went missing';
    const late = slack.envelopes.filter((e) => (e.ackedAt === null ? !lostOnPurpose(e) : e.ackedAt - e.sentAt > 3_000));
    assert.deepEqual(late.map((e) => e.envelope_id), [], 'every envelope acknowledged in time');
    assert.ok(slack.envelopes.length > 5);
    const texts = await userTexts();
    assert.equal(new Set(texts).size, texts.length, `no message ran twice: ${JSON.stringify(texts)}`);
  });

  it('the tokens are in no answer and no log line', async () => {
    const ops = await service.ask({ path: `${P}/${THREAD}/operations`, headers: ALICE });
    assert.equal(ops.status, 200);
    for (const token of [slack.appToken, slack.botToken]) {
      assert.ok(!ops.text.includes(token));
      assert.ok(!JSON.stringify(service.logs).includes(token));
      assert.ok(!lines.join('').includes(token));
    }
  });
});
