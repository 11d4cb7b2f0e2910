/**
 * The local Slack (test/support/fake-slack.ts) speaks what the real libraries expect: `@slack/web-api`'s
 * WebClient, `@slack/socket-mode`'s SocketModeClient and a bare `@slack/bolt` App, unmodified, against it.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import bolt from '@slack/bolt';
import { SocketModeClient } from '@slack/socket-mode';
import webApi, { LogLevel, WebAPIPlatformError, WebClient, WebClientEvent, type Logger } from '@slack/web-api';
import { startFakeSlack, type FakeSlack } from '../support/fake-slack.ts';
import { waitFor } from '../support/wait-for.ts';
import { WebSocket } from 'ws';

// `retryPolicies` is a CommonJS `export default` re-export that Node's named-export detection does not see.
const { retryPolicies } = webApi;

/** A logger that keeps the libraries quiet (reconnects log errors on purpose here) but keeps what they said. */
function quietLogger(): Logger & { lines: string[] } {
  let level = LogLevel.ERROR;
  const lines: string[] = [];
  const keep = (...args: unknown[]): void => {
    lines.push(args.map(String).join(' '));
  };
  return {
    lines,
    debug: () => {},
    info: () => {},
    warn: keep,
    error: keep,
    setLevel: (l: LogLevel) => {
      level = l;
    },
    getLevel: () => level,
    setName: () => {},
  };
}

interface Received {
  type: string;
  envelope_id: string;
  retry_num?: number;
  retry_reason?: string;
  body: Record<string, unknown>;
  event?: Record<string, unknown>;
}

/** A SocketModeClient against the fake: every event it emits is kept; `ack` false leaves envelopes unacknowledged. */
async function socketClient(fake: FakeSlack, { ack = true }: { ack?: boolean } = {}): Promise<{ client: SocketModeClient; received: Received[] }> {
  const client = new SocketModeClient({
    appToken: fake.appToken,
    logger: quietLogger(),
    // The client waits clientPingTimeout × consecutive failures before reconnecting (5 s by default).
    clientPingTimeout: 300,
    // No retryConfig: the client's own (100 retries, factor 1.3) is what keeps apps.connections.open trying while
    // the Web API is unreachable; a short one makes the reconnect's rejection unhandled.
    clientOptions: { slackApiUrl: fake.apiUrl },
  });
  const received: Received[] = [];
  client.on('slack_event', async (e: { ack: () => Promise<void>; type: string; envelope_id: string; body: Record<string, unknown>; retry_num?: number; retry_reason?: string }) => {
    received.push({
      type: e.type,
      envelope_id: e.envelope_id,
      body: e.body,
      ...(e.retry_num !== undefined ? { retry_num: e.retry_num } : {}),
      ...(e.retry_reason !== undefined ? { retry_reason: e.retry_reason } : {}),
      ...(e.type === 'events_api' ? { event: e.body.event as Record<string, unknown> } : {}),
    });
    if (ack) await e.ack();
  });
  await client.start();
  return { client, received };
}

function eventsOf(received: Received[], type: string, ts?: string): Received[] {
  return received.filter((r) => r.event?.type === type && (ts === undefined || r.event.ts === ts));
}

async function platformError(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (error) {
    if (error instanceof WebAPIPlatformError) return error.data.error;
    throw error;
  }
  assert.fail('expected an ok:false answer');
}

function world(fake: FakeSlack): void {
  fake.addUser({ id: 'U0ALICE', name: 'alice' });
  fake.addUser({ id: 'U0BOB', name: 'bob' });
  fake.addUser({ id: 'U0OTHERBOT', name: 'otherbot', botId: 'BOTHER' });
  fake.addChannel({ id: 'C0GENERAL', name: 'general' });
  fake.addChannel({ id: 'C0RANDOM', name: 'random', member: false });
  fake.addChannel({ id: 'C0OLD', name: 'old', archived: true });
  fake.addChannel({ id: 'C0NEWS', name: 'news', readOnly: true });
  fake.addChannel({ id: 'G0SECRET', name: 'secret', private: true });
  fake.addChannel({ id: 'C0HIDDEN', name: 'hidden', private: true, member: false });
}

describe('fake Slack: the Web API as WebClient speaks it', () => {
  let fake: FakeSlack;
  let web: WebClient;
  after(async () => {
    await fake?.close();
  });

  test('auth.test, chat.postMessage with blocks and metadata, conversations.replies with and without metadata', async () => {
    fake = await startFakeSlack({ maxPageSize: 2 });
    world(fake);
    web = new WebClient(fake.botToken, { slackApiUrl: fake.apiUrl, logger: quietLogger(), retryConfig: retryPolicies.rapidRetryPolicy });

    const auth = await web.auth.test();
    assert.equal(auth.user_id, fake.botUserId);
    assert.equal(auth.bot_id, fake.botId);
    assert.match(String(auth.team_id), /^T/);
    assert.equal(fake.calls[0]!.token, fake.botToken);
    assert.equal(fake.calls[0]!.contentType, 'application/x-www-form-urlencoded');

    const parentTs = await fake.post('U0ALICE', 'C0GENERAL', 'hello bot');
    const blocks = [
      { type: 'section', text: { type: 'mrkdwn', text: '*Run* `ls`?' } },
      {
        type: 'actions',
        block_id: 'ask-1',
        elements: [
          { type: 'button', action_id: 'console_answer', text: { type: 'plain_text', text: 'Allow' }, value: 'p1:allow' },
          { type: 'button', action_id: 'console_answer_2', text: { type: 'plain_text', text: 'Deny' }, value: 'p1:deny' },
        ],
      },
    ];
    const metadata = { event_type: 'console_delivery', event_payload: { delivery_id: 'd-1' } };
    const posted = await web.chat.postMessage({ channel: 'C0GENERAL', thread_ts: parentTs, text: 'Run ls?', blocks, metadata });
    assert.equal(posted.channel, 'C0GENERAL');
    assert.match(String(posted.ts), /^\d+\.\d{6}$/);
    assert.ok(Number(posted.ts) > Number(parentTs));
    const call = fake.calls.find((c) => c.method === 'chat.postMessage')!;
    assert.deepEqual(call.args.blocks, blocks, 'blocks arrive as a JSON string in the form and decode to what was sent');
    assert.deepEqual(call.args.metadata, metadata);
    assert.equal(call.args.thread_ts, parentTs);

    const stored = fake.replies('C0GENERAL', parentTs);
    assert.deepEqual(stored.map((m) => m.ts), [parentTs, posted.ts]);
    assert.equal(stored[1]!.bot_id, fake.botId);
    assert.equal(stored[1]!.user, fake.botUserId);
    assert.deepEqual(stored[1]!.metadata, metadata);

    const plain = await web.conversations.replies({ channel: 'C0GENERAL', ts: parentTs });
    assert.equal(plain.messages![0]!.ts, parentTs, 'the parent comes first');
    assert.equal(plain.messages![1]!.metadata, undefined, 'no metadata without include_all_metadata');
    const withMeta = await web.conversations.replies({ channel: 'C0GENERAL', ts: parentTs, include_all_metadata: true });
    assert.deepEqual(withMeta.messages![1]!.metadata, metadata);
    const fromLastSeen = await web.conversations.replies({ channel: 'C0GENERAL', ts: parentTs, oldest: String(posted.ts) });
    assert.deepEqual(fromLastSeen.messages!.map((m) => m.ts), [parentTs], 'oldest is exclusive; the parent is still first');

    const history = await web.conversations.history({ channel: 'C0GENERAL' });
    assert.deepEqual(history.messages!.map((m) => m.ts), [parentTs], 'replies are not top-level');
    assert.equal(history.messages![0]!.reply_count, 1);
    assert.equal(history.messages![0]!.latest_reply, posted.ts);
    assert.equal(history.messages![0]!.thread_ts, parentTs);
  });

  test('paginates conversations.list and conversations.history with real cursors', async () => {
    const ids: string[] = [];
    for await (const page of web.paginate('conversations.list', { types: 'public_channel,private_channel', exclude_archived: true, limit: 100 })) {
      const channels = (page as unknown as { channels: { id: string; is_member: boolean; is_private: boolean; is_read_only?: boolean }[] }).channels;
      assert.ok(channels.length <= 2, 'the page size option caps each page');
      ids.push(...channels.map((c) => c.id));
    }
    assert.deepEqual(ids.sort(), ['C0GENERAL', 'C0NEWS', 'C0RANDOM', 'G0SECRET'], 'archived excluded, a private channel only when a member');
    const info = await web.conversations.info({ channel: 'C0NEWS' });
    assert.equal((info.channel as { is_read_only?: boolean }).is_read_only, true);

    const tss = [await fake.post('U0BOB', 'C0GENERAL', 'one'), await fake.post('U0BOB', 'C0GENERAL', 'two'), await fake.post('U0BOB', 'C0GENERAL', 'three')];
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await web.conversations.history({ channel: 'C0GENERAL', limit: 2, ...(cursor ? { cursor } : {}) });
      seen.push(...page.messages!.map((m) => m.ts!));
      cursor = page.response_metadata?.next_cursor || undefined;
      assert.equal(page.has_more, cursor !== undefined);
    } while (cursor !== undefined);
    assert.deepEqual(seen.slice(0, 3), [...tss].reverse(), 'newest first');
    assert.equal(seen.length, 4);
  });

  test('answers errors as Slack does', async () => {
    const stranger = new WebClient('xoxb-wrong', { slackApiUrl: fake.apiUrl, logger: quietLogger(), retryConfig: retryPolicies.rapidRetryPolicy });
    assert.equal(await platformError(stranger.auth.test()), 'invalid_auth');
    assert.equal(await platformError(web.apps.connections.open({})), 'not_allowed_token_type', 'the bot token does not open sockets');
    assert.equal(await platformError(web.chat.postMessage({ channel: 'C0RANDOM', text: 'x' })), 'not_in_channel');
    assert.equal(await platformError(web.conversations.history({ channel: 'C0RANDOM' })), 'not_in_channel');
    assert.equal(await platformError(web.chat.postMessage({ channel: 'C0HIDDEN', text: 'x' })), 'channel_not_found');
    assert.equal(await platformError(web.chat.postMessage({ channel: 'C0NOPE', text: 'x' })), 'channel_not_found');
    assert.equal(await platformError(web.chat.postMessage({ channel: 'C0OLD', text: 'x' })), 'is_archived');
    assert.equal(await platformError(web.chat.postMessage({ channel: 'C0NEWS', text: 'x' })), 'restricted_action_read_only_channel');
    assert.equal(await platformError(web.chat.postMessage({ channel: 'C0GENERAL', text: 'x'.repeat(40_001) })), 'msg_too_long');
    const section = (text: string) => ({ type: 'section' as const, text: { type: 'mrkdwn' as const, text } });
    const button = (action_id: string, text: string) => ({ type: 'button' as const, action_id, text: { type: 'plain_text' as const, text }, value: 'v' });
    for (const blocks of [
      [section('x'.repeat(3001))],
      Array.from({ length: 51 }, () => section('x')),
      [{ type: 'actions', elements: [button('a', 'x'.repeat(76))] }],
      [{ type: 'actions', elements: [button('same', 'A'), button('same', 'B')] }],
    ]) {
      assert.equal(await platformError(web.chat.postMessage({ channel: 'C0GENERAL', text: 'x', blocks })), 'invalid_blocks');
    }
    const fine = await web.chat.postMessage({ channel: 'C0GENERAL', text: 'x', blocks: [section('x'.repeat(3000)), { type: 'actions', elements: [button('a', 'x'.repeat(75))] }] });
    assert.equal(fine.ok, true);
    assert.equal(await platformError(web.apiCall('chat.nope', {})), 'unknown_method');

    const eph = await web.chat.postEphemeral({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'link first' });
    assert.match(String(eph.message_ts), /^\d+\.\d{6}$/);
    assert.deepEqual(fake.ephemerals.map((e) => [e.channel, e.user, e.text]), [['C0GENERAL', 'U0ALICE', 'link first']]);
    assert.ok(!fake.messages('C0GENERAL').some((m) => m.text === 'link first'), 'an ephemeral is not in the history');

    const updated = await web.chat.update({ channel: 'C0GENERAL', ts: fine.ts!, text: 'alice chose Allow', blocks: [section('alice chose *Allow*')] });
    assert.equal(updated.ts, fine.ts);
    const after = fake.messages('C0GENERAL').find((m) => m.ts === fine.ts)!;
    assert.equal(after.text, 'alice chose Allow');
    assert.equal(after.edited?.user, fake.botUserId);
  });

  test('takes JSON bodies too, and refuses a call without a token', async () => {
    const post = async (method: string, body: unknown, token?: string) => {
      const response = await fetch(`${fake.apiUrl}${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(body),
      });
      assert.equal(response.status, 200);
      return (await response.json()) as { ok: boolean; error?: string; ts?: string };
    };
    const blocks = [{ type: 'section', text: { type: 'mrkdwn', text: 'json' } }];
    const answer = await post('chat.postMessage', { channel: 'C0GENERAL', text: 'json', blocks }, fake.botToken);
    assert.equal(answer.ok, true);
    assert.deepEqual(fake.messages('C0GENERAL').find((m) => m.ts === answer.ts)!.blocks, blocks);
    assert.deepEqual(await post('auth.test', {}), { ok: false, error: 'not_authed' });
  });

  test('a 429 on chat.postMessage is retried by WebClient after Retry-After, and the message is stored once', async () => {
    fake.rateLimit('chat.postMessage', 1, 1);
    const before = fake.messages('G0SECRET').length;
    const started = Date.now();
    let rateLimited: number | undefined;
    web.once(WebClientEvent.RATE_LIMITED, (seconds: number) => {
      rateLimited = seconds;
    });
    const posted = await web.chat.postMessage({ channel: 'G0SECRET', text: 'after the limit' });
    const took = Date.now() - started;
    assert.equal(rateLimited, 1);
    assert.ok(took >= 1000, `waited Retry-After (took ${took} ms)`);
    assert.ok(took < 3000, `no long extra backoff with rapidRetryPolicy (took ${took} ms)`);
    const attempts = fake.calls.filter((c) => c.method === 'chat.postMessage' && c.args.text === 'after the limit');
    assert.deepEqual(attempts.map((c) => c.status), [429, 200]);
    assert.equal(fake.messages('G0SECRET').length, before + 1);
    assert.equal(fake.messages('G0SECRET').at(-1)!.ts, posted.ts);
  });

  test('stop() refuses connections; start() serves again on the same port with the same data', async () => {
    const port = fake.port;
    await fake.stop();
    await assert.rejects(fetch(`${fake.apiUrl}auth.test`, { method: 'POST' }), /fetch failed/);
    await fake.start();
    assert.equal(fake.port, port);
    const again = await web.conversations.replies({ channel: 'G0SECRET', ts: fake.history('G0SECRET')[0]!.ts });
    assert.equal(again.messages!.length, 1);
  });
});

describe('fake Slack: Socket Mode as SocketModeClient speaks it', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  async function setUp(options: Parameters<typeof startFakeSlack>[0] = {}, client: { ack?: boolean } = {}) {
    const fake = await startFakeSlack({ ackTimeoutMs: 400, ...options });
    cleanups.push(() => fake.close());
    world(fake);
    const sm = await socketClient(fake, client);
    cleanups.push(() => sm.client.disconnect());
    return { fake, ...sm };
  }

  test('connects (hello), delivers message and app_mention envelopes, and the acks reach the fake', async () => {
    const { fake, client, received } = await setUp();
    assert.equal(fake.connections(), 1);
    const messages: Record<string, unknown>[] = [];
    const mentions: Record<string, unknown>[] = [];
    client.on('message', ({ event }: { event: Record<string, unknown> }) => messages.push(event));
    client.on('app_mention', ({ event }: { event: Record<string, unknown> }) => mentions.push(event));

    const ts = await fake.post('U0ALICE', 'C0GENERAL', `<@${fake.botUserId}> start something`);
    await waitFor(() => messages.length === 1 && mentions.length === 1, { what: 'message and app_mention' });
    assert.equal(messages[0]!.ts, ts);
    assert.equal(mentions[0]!.ts, ts);
    assert.equal(messages[0]!.channel_type, 'channel');
    assert.equal(messages[0]!.user, 'U0ALICE');
    assert.equal(messages[0]!.bot_id, undefined);
    await waitFor(() => fake.envelopes.length === 2 && fake.envelopes.every((e) => e.ackedAt !== null), { what: 'acks' });
    assert.deepEqual(fake.envelopes[0]!.ackPayload, {}, 'ack() sends {envelope_id, payload: {}}');

    const replyTs = await fake.post('U0OTHERBOT', 'G0SECRET', 'a bot speaks', {});
    await waitFor(() => messages.length === 2, { what: 'the other bot message' });
    assert.equal(messages[1]!.bot_id, 'BOTHER');
    assert.equal(messages[1]!.channel_type, 'group');
    assert.equal(messages[1]!.ts, replyTs);

    const dmTs = await fake.dm('U0BOB', 'link 1234');
    await waitFor(() => messages.length === 3, { what: 'the direct message' });
    assert.equal(messages[2]!.channel_type, 'im');
    assert.match(String(messages[2]!.channel), /^D/);
    assert.equal(messages[2]!.ts, dmTs);

    // The bot's own post comes back as a message event with bot_id.
    const web = new WebClient(fake.botToken, { slackApiUrl: fake.apiUrl, logger: quietLogger() });
    const own = await web.chat.postMessage({ channel: 'C0GENERAL', thread_ts: ts, text: 'on it' });
    await waitFor(() => messages.some((m) => m.ts === own.ts), { what: 'the echo of the bot post' });
    const echo = messages.find((m) => m.ts === own.ts)!;
    assert.equal(echo.bot_id, fake.botId);
    assert.equal(echo.thread_ts, ts);
    assert.equal(echo.parent_user_id, 'U0ALICE');
    assert.equal(eventsOf(received, 'message').length, 4);
  });

  test('hello carries num_connections and the app id; a ticket opens one socket only', async () => {
    const { fake } = await setUp();
    const opener = new WebClient(fake.appToken, { slackApiUrl: fake.apiUrl, logger: quietLogger() });
    const { url } = await opener.apps.connections.open({});
    assert.match(String(url), new RegExp(`^ws://127\\.0\\.0\\.1:${fake.port}/link/\\?ticket=`));
    const first = new WebSocket(String(url));
    const hello = await new Promise<Record<string, unknown>>((resolve, reject) => {
      first.once('message', (data) => resolve(JSON.parse(String(data)) as Record<string, unknown>));
      first.once('error', reject);
    });
    assert.equal(hello.type, 'hello');
    assert.equal(hello.num_connections, 2);
    assert.deepEqual(hello.connection_info, { app_id: fake.appId });
    assert.equal(fake.connections(), 2);
    const second = new WebSocket(String(url));
    const refused = await new Promise<number>((resolve) => second.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)));
    assert.equal(refused, 401);
    second.on('error', () => {}); // ending a socket still CONNECTING reports an error: expected here
    second.terminate();
    await new Promise<void>((resolve) => {
      first.once('close', () => resolve());
      first.close();
    });
    await waitFor(() => fake.connections() === 1, { what: 'the raw socket closing' });
  });

  test('an envelope not acknowledged is redelivered with retry_attempt 1 and retry_reason timeout', async () => {
    const { fake, received } = await setUp({ ackTimeoutMs: 200, maxRetries: 1 }, { ack: false });
    const ts = await fake.post('U0ALICE', 'C0GENERAL', 'anyone?');
    await waitFor(() => eventsOf(received, 'message', ts).length === 2, { what: 'the redelivery' });
    const [first, second] = eventsOf(received, 'message', ts);
    assert.equal(first!.retry_num, 0);
    assert.equal(second!.retry_num, 1);
    assert.equal(second!.retry_reason, 'timeout');
    assert.equal(first!.body.event_id, second!.body.event_id, 'the same event');
    assert.deepEqual(fake.envelopes.map((e) => [e.retry_attempt, e.ackedAt]), [[0, null], [1, null]]);
    // maxRetries 1: nothing more comes.
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.equal(eventsOf(received, 'message', ts).length, 2);
  });

  test('after dropSockets() the client reconnects by itself and an envelope sent meanwhile arrives once', async () => {
    const { fake, received } = await setUp();
    const opened = fake.calls.filter((c) => c.method === 'apps.connections.open').length;
    fake.dropSockets();
    assert.equal(fake.connections(), 0);
    const ts = await fake.post('U0ALICE', 'C0GENERAL', 'while you were away');
    assert.equal(fake.envelopes.length, 0, 'queued, not sent');
    await fake.connected(5000);
    await waitFor(() => eventsOf(received, 'message', ts).length === 1 && fake.envelopes[0]?.ackedAt != null, { what: 'the queued envelope' });
    assert.equal(fake.calls.filter((c) => c.method === 'apps.connections.open').length, opened + 1, 'a new URL for the new socket');
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(eventsOf(received, 'message', ts).length, 1, 'once');
    assert.equal(received.find((r) => r.event?.ts === ts)!.retry_num, 0);
  });

  test('an envelope unacknowledged when the socket drops is redelivered on the next connection', async () => {
    const { fake, client, received } = await setUp({ ackTimeoutMs: 5000 }, { ack: false });
    const ts = await fake.post('U0ALICE', 'C0GENERAL', 'half-way');
    await waitFor(() => eventsOf(received, 'message', ts).length === 1, { what: 'the first delivery' });
    client.on('slack_event', (e: { ack: () => Promise<void> }) => void e.ack());
    fake.dropSockets();
    await waitFor(() => eventsOf(received, 'message', ts).length === 2, { what: 'the redelivery after reconnecting' });
    assert.equal(eventsOf(received, 'message', ts)[1]!.retry_num, 1);
    await waitFor(() => fake.envelopes.at(-1)!.ackedAt !== null, { what: 'the ack of the redelivery' });
  });

  test('after disconnect() the client closes, reconnects, and an envelope sent meanwhile arrives once', async () => {
    const { fake, received } = await setUp();
    fake.disconnect('refresh_requested');
    await waitFor(() => fake.connections() === 0, { what: 'the client closing on disconnect' });
    const ts = await fake.post('U0ALICE', 'C0GENERAL', 'during the refresh');
    await fake.connected(5000);
    await waitFor(() => eventsOf(received, 'message', ts).length === 1 && fake.envelopes.every((e) => e.ackedAt !== null), { what: 'the queued envelope' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(eventsOf(received, 'message', ts).length, 1);
  });

  test('after stop() and start() of the whole fake the client reconnects by itself', async () => {
    const { fake, received } = await setUp();
    await fake.stop();
    assert.equal(fake.connections(), 0);
    const ts = await fake.post('U0ALICE', 'C0GENERAL', 'while Slack was down');
    // Long enough for the client's first apps.connections.open to be refused (it retries it after about 1 s).
    await new Promise((resolve) => setTimeout(resolve, 600));
    await fake.start();
    await fake.connected(8000);
    await waitFor(() => eventsOf(received, 'message', ts).length === 1, { what: 'the queued envelope', timeoutMs: 3000 });
  });

  test('a click on a button arrives as an interactive block_actions envelope', async () => {
    const { fake, client } = await setUp();
    const web = new WebClient(fake.botToken, { slackApiUrl: fake.apiUrl, logger: quietLogger() });
    const parent = await fake.post('U0ALICE', 'C0GENERAL', 'do it');
    const ask = await web.chat.postMessage({
      channel: 'C0GENERAL',
      thread_ts: parent,
      text: 'Run ls?',
      blocks: [
        { type: 'section', text: { type: 'mrkdwn', text: 'Run `ls`?' } },
        { type: 'actions', block_id: 'ask', elements: [{ type: 'button', action_id: 'console_answer', text: { type: 'plain_text', text: 'Allow' }, value: 'p1:allow' }] },
      ],
    });
    const clicks: { body: Record<string, unknown>; accepts_response_payload: boolean }[] = [];
    client.on('interactive', (e: { body: Record<string, unknown>; accepts_response_payload: boolean }) => clicks.push(e));
    await fake.click('U0BOB', { channel: 'C0GENERAL', ts: ask.ts!, actionId: 'console_answer', value: 'p1:allow' });
    await waitFor(() => clicks.length === 1, { what: 'the interactive envelope' });
    const body = clicks[0]!.body as {
      type: string;
      user: { id: string };
      container: { message_ts: string; thread_ts: string; channel_id: string };
      actions: { action_id: string; value: string; block_id: string; type: string }[];
      message: { blocks: unknown[] };
      trigger_id: string;
      response_url: string;
    };
    assert.equal(clicks[0]!.accepts_response_payload, true);
    assert.equal(body.type, 'block_actions');
    assert.equal(body.user.id, 'U0BOB');
    assert.equal(body.container.message_ts, ask.ts);
    assert.equal(body.container.thread_ts, parent);
    assert.equal(body.container.channel_id, 'C0GENERAL');
    assert.deepEqual(
      body.actions.map((a) => [a.action_id, a.value, a.block_id, a.type]),
      [['console_answer', 'p1:allow', 'ask', 'button']],
    );
    assert.equal(body.message.blocks.length, 2);
    assert.ok(body.trigger_id && body.response_url);
    await waitFor(() => fake.envelopes.filter((e) => e.type === 'interactive').every((e) => e.ackedAt !== null), { what: 'the ack of the click' });
  });
});

describe('fake Slack: a bare Bolt app', () => {
  test('receives a message over Socket Mode and posts a reply in its thread', async () => {
    const fake = await startFakeSlack();
    world(fake);
    const app = new bolt.App({
      token: fake.botToken,
      appToken: fake.appToken,
      socketMode: true,
      logger: quietLogger(),
      clientOptions: { slackApiUrl: fake.apiUrl, retryConfig: retryPolicies.rapidRetryPolicy },
    });
    const seen: { text?: string; retryNum?: number }[] = [];
    app.message(async ({ message, say, context }) => {
      if (message.subtype !== undefined) return;
      seen.push({ text: message.text, retryNum: context.retryNum });
      await say({ text: `echo: ${message.text}`, thread_ts: message.ts });
    });
    try {
      await app.start();
      assert.equal(fake.connections(), 1);
      const ts = await fake.post('U0ALICE', 'C0GENERAL', 'ping');
      await waitFor(() => fake.replies('C0GENERAL', ts).length === 2, { what: "Bolt's reply" });
      const reply = fake.replies('C0GENERAL', ts)[1]!;
      assert.equal(reply.text, 'echo: ping');
      assert.equal(reply.bot_id, fake.botId);
      assert.deepEqual(seen, [{ text: 'ping', retryNum: 0 }], 'its own echoed post is dropped by Bolt');
      await waitFor(() => fake.envelopes.length === 2 && fake.envelopes.every((e) => e.ackedAt !== null), { what: "Bolt's acks" });
      assert.ok(fake.calls.some((c) => c.method === 'auth.test' && c.token === fake.botToken));
    } finally {
      await app.stop();
      // Bolt's stop() does not wait for the Socket Mode client's close handshake: wait for it here.
      await waitFor(() => fake.connections() === 0, { what: 'the Bolt socket closing' });
      await fake.close();
    }
  });
});
