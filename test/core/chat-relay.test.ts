// The chat relay (core/channels/relay.ts): an approval or a question the turn asks goes to the chat place with
// its ask (the pending item's id, kind, title and options), for a platform that draws buttons; a text split
// to fit carries it on its last part alone, and what asks nothing carries none. Runtime-free like the rest of test/core.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chatRelay } from '../../core/channels/relay.ts';
import { CHAT_MESSAGE_LIMIT } from '../../domain/chat-text.ts';
import type { Conversation, Pending } from '../../domain/model.ts';
import type { Delivery } from '../../ports/delivery-outbox.ts';
import type { EventLog } from '../../ports/event-log.ts';

const ADDRESS = { channel: 'team-chat', id: 'general/t1' };

/** The relay over a thread whose latest conversation lives at ADDRESS, and a log that keeps every event's posts. */
function relayed() {
  const conversation = { id: 'c1', thread_id: 't1', address: ADDRESS, moved_to: null } as unknown as Conversation;
  let ids = 0;
  const posts: Delivery[][] = [];
  const log: EventLog = {
    append: async (threadId, type, data, given = []) => {
      posts.push([...given]);
      return { seq: posts.length, type, thread_id: threadId, at: new Date(0).toISOString(), data };
    },
    since: async () => [],
    lastSeq: async () => posts.length,
  };
  const wrap = chatRelay({ storage: { conversations: { latestByThread: async () => conversation } as never }, newId: () => `post-${++ids}`, poke: () => {} });
  return { log: wrap(log), posts };
}

const pending = (fields: Partial<Pending> = {}): Pending => ({
  id: 'p1', kind: 'approval', conversation_id: 'c1', run_id: 'r1', title: 'Run "npm test"?', tool_call: null,
  options: [{ id: 'allow', name: 'Allow', kind: 'allow_once' }, { id: 'reject', name: 'Reject', kind: 'reject_once' }],
  ...fields,
});

describe('the chat relay', () => {
  it("an approval's post carries its ask: the item's id, kind, title and options (id and name)", async () => {
    const r = relayed();
    await r.log.append('t1', 'approval_requested', { pending: pending() });
    const [post] = r.posts[0]!;
    assert.equal(r.posts[0]!.length, 1);
    assert.deepEqual(post!.ask, {
      pending_id: 'p1', kind: 'approval', title: 'Run "npm test"?', options: [{ id: 'allow', name: 'Allow' }, { id: 'reject', name: 'Reject' }],
    });
    assert.match(post!.text, /^Approval needed: Run "npm test"\?\n1\. Allow\n2\. Reject/, 'the words say it too');
    assert.deepEqual(post!.address, ADDRESS);
  });

  it("a question split to fit carries its ask on the last part alone", async () => {
    const r = relayed();
    const long = 'x'.repeat(CHAT_MESSAGE_LIMIT);
    await r.log.append('t1', 'question_asked', { pending: pending({ id: 'p2', kind: 'question', title: long, options: [{ id: 'a', name: 'A', kind: null }] }) });
    const parts = r.posts[0]!;
    assert.ok(parts.length > 1, 'split');
    assert.deepEqual(parts.slice(0, -1).map((part) => part.ask), parts.slice(0, -1).map(() => null));
    assert.deepEqual(parts.at(-1)!.ask, { pending_id: 'p2', kind: 'question', title: long, options: [{ id: 'a', name: 'A' }] });
  });

  it("a turn's reply asks nothing", async () => {
    const r = relayed();
    await r.log.append('t1', 'message', { message: { role: 'assistant', text: 'Done.' } });
    assert.deepEqual(r.posts[0]!.map((post) => [post.text, post.ask]), [['Done.', null]]);
  });
});
