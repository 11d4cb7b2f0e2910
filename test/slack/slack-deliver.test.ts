// The Slack adapter's posts (contract section 10, outbound) against a local Slack: a 429 is waited out
// (Retry-After) and a thread's posts keep their order; a long answer is split into sections that fit and
// messages of at most 50 blocks, each post once; an ask is a message with a button per option; a post for one
// person is ephemeral.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { uuidv7 } from 'uuidv7';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { slackChannelPort, startSlackChannel, type SlackChannelPort } from '../../adapters/slack/channel-port.ts';
import { DELIVERY_EVENT } from '../../adapters/slack/deliver.ts';
import type { Delivery } from '../../ports/delivery-outbox.ts';
import { online } from '../support/slack.ts';
import { startFakeSlack, type FakeSlack } from '../support/fake-slack.ts';

const silent = { info() {}, warn() {}, error() {} };

describe('the slack adapter posts', () => {
  let slack: FakeSlack;
  let port: SlackChannelPort;
  let thread: string;
  const at = (text: string, extra: Partial<Delivery> = {}): Delivery => ({
    id: uuidv7(), channel: 'team-slack', place: `C0GENERAL:${thread}`, new_thread: false, address: { channel: 'team-slack', id: `C0GENERAL:${thread}` }, title: '', text, ...extra,
  });
  const posts = () => slack.replies('C0GENERAL', thread).filter((m) => m.bot_id === slack.botId);
  const deliveryOf = (m: { metadata?: { event_payload?: Record<string, unknown> } }) => m.metadata?.event_payload?.['delivery_id'];

  before(async () => {
    slack = await startFakeSlack();
    slack.addUser({ id: 'U0ALICE', name: 'alice' });
    slack.addChannel({ id: 'C0GENERAL', name: 'general' });
    thread = await slack.post('U0ALICE', 'C0GENERAL', 'a thread');
    const storage = createMemoryStorage();
    port = await online(startSlackChannel(slackChannelPort({
      channelId: 'team-slack', settings: { app_token_env: 'A', bot_token_env: 'B', api_url: slack.apiUrl },
      appToken: slack.appToken, botToken: slack.botToken, catalog: storage.catalog, log: silent, backoff: { firstMs: 100, maxMs: 500 },
    })));
  });
  after(async () => {
    await port?.close();
    await slack?.close();
  });

  it("waits out a 429's Retry-After, and a thread's posts asked meanwhile keep their order, each once", async () => {
    slack.rateLimit('chat.postMessage', 1, 1);
    const ds = ['first', 'second', 'third'].map((text) => at(text));
    // Asked at once, as two instances' outboxes or a retry might: posted in the order asked.
    await Promise.all(ds.map((d) => port.deliver(d)));
    const ids = posts().map(deliveryOf).filter((id) => ds.some((d) => d.id === id));
    assert.deepEqual(ids, ds.map((d) => d.id));
    assert.equal(slack.calls.filter((c) => c.method === 'chat.postMessage' && c.status === 429).length, 1, 'one 429 was answered');
  });

  it('splits a long answer into sections under 3,000 characters and messages of at most 50 blocks, posted once when asked again', async () => {
    const long = Array.from({ length: 6_000 }, (_, i) => `word${i}${i % 30 === 29 ? '\n' : ' '}`).join('');
    assert.ok(long.length > 50 * 3_000 / 3);
    const d = at(long);
    await port.deliver(d);
    await port.deliver(d);
    const mine = posts().filter((m) => deliveryOf(m) === d.id);
    assert.ok(mine.length >= 1);
    const sections = mine.flatMap((m) => (m.blocks as { type: string; text?: { text: string } }[]));
    for (const m of mine) assert.ok((m.blocks as unknown[]).length <= 50);
    for (const block of sections) assert.ok((block.text?.text.length ?? 0) <= 3_000, `${block.text?.text.length}`);
    assert.equal(sections.map((b) => b.text?.text ?? '').join(''), long, 'joined, the answer');
    assert.deepEqual(mine.map((m) => m.metadata?.event_payload?.['part']), mine.map((_, i) => i), 'each part once, in order');
    assert.ok(mine.every((m) => m.metadata?.event_type === DELIVERY_EVENT));
  });

  it("handed over for the first time, a post reads nothing first; handed over again, it finds its post and posts nothing more", async () => {
    const d = { ...at('first time in the outbox'), handed_before: false };
    const from = slack.calls.length;
    await port.deliver(d);
    assert.deepEqual(slack.calls.slice(from).map((c) => c.method), ['chat.postMessage'], 'no read of the thread before a first post');
    await port.deliver({ ...d, handed_before: true });
    assert.equal(posts().filter((m) => deliveryOf(m) === d.id).length, 1, 'posted once');
    assert.ok(slack.calls.slice(from).some((c) => c.method === 'conversations.replies'), 'handed over again: its post was looked for');
  });

  it('posts an ask with a button per option, and a post for one person as an ephemeral message', async () => {
    const pending = uuidv7();
    const ask = at('Approval needed: edit notes.md\n1. Allow\n2. Reject', {
      ask: { pending_id: pending, kind: 'approval', title: 'edit notes.md', options: [{ id: 'allow', name: 'Allow' }, { id: 'reject', name: 'Reject' }] },
    });
    await port.deliver(ask);
    const [message] = posts().filter((m) => deliveryOf(m) === ask.id);
    const buttons = (message!.blocks as { type: string; elements?: { action_id: string; value: string }[] }[]).flatMap((b) => b.elements ?? []);
    assert.deepEqual(buttons.map((b) => [b.action_id, b.value]), [['console_answer', `${pending}:allow`], ['console_answer', `${pending}:reject`]]);
    const before = slack.ephemerals.length;
    await port.deliver(at('only for alice <!channel>', { to: 'U0ALICE' }));
    assert.equal(posts().filter((m) => String(m.text).includes('only for alice')).length, 0, 'not in the thread for everyone');
    const [ephemeral] = slack.ephemerals.slice(before);
    assert.equal(ephemeral?.user, 'U0ALICE');
    assert.equal(ephemeral?.thread_ts, thread);
    assert.ok(!ephemeral!.text.includes('<!channel>'));
  });
});
