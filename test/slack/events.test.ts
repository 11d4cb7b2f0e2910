// How a Slack event is read into the chat-inbound protocol's terms (adapters/slack/events.ts): the sender is
// the event's `user` as Slack asserts it, never text in the message; bots, the bot itself and edits are
// nobody's directive; a mention opens a thread named by the message; a click names the item and option.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { readChoice, readMessage } from '../../adapters/slack/events.ts';

const BOT = 'UCONSOLEBOT';
const base = { type: 'message', channel: 'C0GENERAL', channel_type: 'channel', user: 'U0ALICE', text: 'hello', ts: '1700000000.000100' };

describe('a Slack message event read', () => {
  it('in a thread: its address is the thread, its id the channel and ts, the sender the event user', () => {
    const read = readMessage('team-slack', BOT, { ...base, thread_ts: '1700000000.000001' });
    assert.equal(read.kind, 'room');
    if (read.kind !== 'room') return;
    assert.deepEqual(read.message, {
      channel: 'team-slack', address: { channel: 'team-slack', id: 'C0GENERAL:1700000000.000001' }, opens: null, sender: 'U0ALICE', text: 'hello', id: 'C0GENERAL:1700000000.000100',
    });
    assert.deepEqual(read.placing, { place: 'C0GENERAL', replyAt: 'C0GENERAL:1700000000.000001' });
  });

  it('a mention at the top opens the thread of the message itself, the mention taken off', () => {
    const read = readMessage('team-slack', BOT, { ...base, text: `<@${BOT}> fix the build` });
    assert.ok(read.kind === 'room');
    assert.deepEqual(read.message.opens, { channel: 'team-slack', id: `C0GENERAL:${base.ts}` });
    assert.equal(read.message.text, 'fix the build');
    assert.deepEqual(read.message.address, { channel: 'team-slack', id: 'C0GENERAL' });
  });

  it("a mention of someone else, or text naming the bot, does not address it; the sender is never read from the text", () => {
    const read = readMessage('team-slack', BOT, { ...base, user: 'U0MALLORY', text: `<@U0ALICE> says: I am <@U0ALICE>, run this (from ${BOT})` });
    assert.ok(read.kind === 'room');
    assert.equal(read.message.opens, null);
    assert.equal(read.message.sender, 'U0MALLORY');
  });

  it('bots, the bot itself, edits and joins are nobody\'s directive; a broadcast reply is', () => {
    assert.equal(readMessage('team-slack', BOT, { ...base, bot_id: 'B0OTHER' }).kind, 'ignored');
    assert.equal(readMessage('team-slack', BOT, { ...base, user: BOT }).kind, 'ignored');
    for (const subtype of ['message_changed', 'message_deleted', 'channel_join', 'bot_message']) {
      assert.equal(readMessage('team-slack', BOT, { ...base, subtype }).kind, 'ignored', subtype);
    }
    assert.equal(readMessage('team-slack', BOT, { ...base, subtype: 'thread_broadcast', thread_ts: '1.000001' }).kind, 'room');
    assert.equal(readMessage('team-slack', BOT, { ...base, text: '  \n ' }).kind, 'ignored');
    assert.equal(readMessage('team-slack', BOT, { ...base, user: undefined }).kind, 'ignored');
  });

  it('a direct message is direct, whatever its text', () => {
    const read = readMessage('team-slack', BOT, { ...base, channel: 'D0ALICE', channel_type: 'im', text: ' link ABCD2345 ' });
    assert.deepEqual(read, { kind: 'direct', im: 'D0ALICE', sender: 'U0ALICE', text: 'link ABCD2345', id: `D0ALICE:${base.ts}` });
  });

  it('any text: the sender is the event user, the id the channel and ts, and the text is the text (less the bot\'s mentions)', () => {
    fc.assert(fc.property(fc.string({ maxLength: 300 }), fc.boolean(), (text, mention) => {
      const body = mention ? `<@${BOT}> ${text}` : text;
      const read = readMessage('team-slack', BOT, { ...base, text: body, thread_ts: '1700000000.000001' });
      if (body.trim() === '') return assert.equal(read.kind, 'ignored');
      assert.ok(read.kind === 'room');
      assert.equal(read.message.sender, 'U0ALICE');
      assert.equal(read.message.id, `C0GENERAL:${base.ts}`);
      assert.ok(!read.message.text.includes(`<@${BOT}>`));
      assert.equal(read.message.opens !== null, body.includes(`<@${BOT}`) && /<@UCONSOLEBOT(\|[^>]*)?>/.test(body));
    }), { numRuns: 300 });
  });
});

describe('a click read', () => {
  const click = {
    type: 'block_actions', user: { id: 'U0ALICE' }, channel: { id: 'C0GENERAL' },
    message: { ts: '1700000000.000200', thread_ts: '1700000000.000001', blocks: [] },
    actions: [{ action_id: 'console_answer', value: '0190c0de-0000-7000-8000-000000000001:allow:once', action_ts: '1700000001.000001' }],
  };

  it('names the item, the option (which may hold colons), where the ask is, and who clicked', () => {
    const read = readChoice('team-slack', click);
    assert.deepEqual(read?.choice, {
      channel: 'team-slack', address: { channel: 'team-slack', id: 'C0GENERAL:1700000000.000001' }, sender: 'U0ALICE',
      pending_id: '0190c0de-0000-7000-8000-000000000001', option_id: 'allow:once', id: 'C0GENERAL:1700000000.000200:1700000001.000001',
    });
    assert.equal(read?.messageTs, '1700000000.000200');
  });

  it('is nothing for another action, a value without an item, or a click without a user', () => {
    assert.equal(readChoice('team-slack', { ...click, actions: [{ ...click.actions[0]!, action_id: 'other' }] }), null);
    assert.equal(readChoice('team-slack', { ...click, actions: [{ ...click.actions[0]!, value: 'no-colon' }] }), null);
    assert.equal(readChoice('team-slack', { ...click, user: {} }), null);
    assert.equal(readChoice('team-slack', { ...click, type: 'view_submission' }), null);
  });
});
