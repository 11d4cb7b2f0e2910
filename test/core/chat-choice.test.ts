// A click on an ask's button (core/channels/inbound.ts, chatChoice) on memory storage: the item the conversation
// living where the ask was posted waits on is answered with the button's option by the clicker's console user,
// when they may answer there; every other click is refused with a reply for the clicker alone. Runtime-free
// like the rest of test/core.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { chatChoice, HOW_TO_LINK, NOT_WAITING } from '../../core/channels/inbound.ts';
import type { User } from '../../domain/model.ts';
import { fail, ok } from '../../domain/result.ts';
import type { ChatChoice } from '../../ports/chat-inbound.ts';
import type { PendingAnswer } from '../../ports/event-bus.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { testId } from '../support/ids.ts';

const ROOM = { thread: testId(53_000), conversation: testId(53_001), pending: testId(53_002), address: { channel: 'team-chat', id: 'general/asks' } };
const LINKS: Record<string, string> = { 'alice@chat.example': 'alice', 'bob@chat.example': 'bob' };

/** alice's thread living at ROOM.address with an approval waiting; what was answered, and how `answer` answers. */
async function world(answerFails = false) {
  const storage = createMemoryStorage();
  const fixture = fixtureWorld();
  await storage.importWorld({
    ...fixture,
    threads: [...fixture.threads, {
      id: ROOM.thread, key: null, channel: 'team-chat', owner: 'alice', members: [], project: null, title: 'Asks here', fork_of: null, fork_cutoff: null,
      messages: [],
      conversations: [{
        id: ROOM.conversation, agent: 'claude', model: 'opus', permission_mode: 'default', effort: null, address: ROOM.address, turn_running: false, runs: [],
        pending: [{
          id: ROOM.pending, kind: 'approval', run_id: null, title: 'Run tests?', tool_call: null,
          options: [{ id: 'allow', name: 'Allow', kind: 'allow_once' }, { id: 'deny', name: 'Deny', kind: 'reject_once' }],
        }],
      }],
    }],
  });
  const answered: { user: string; thread: string; answers: readonly PendingAnswer[] }[] = [];
  const choose = chatChoice({
    storage,
    userAt: async (_channel, sender) => LINKS[sender] ?? null,
    answer: async (user: User, threadId, answers) => {
      answered.push({ user: user.id, thread: threadId, answers });
      return answerFails ? fail({ code: 'not_found' }) : ok({ answered: answers.length });
    },
  });
  return { choose, answered };
}

const click = (fields: Partial<ChatChoice> = {}): ChatChoice => ({
  channel: 'team-chat', address: ROOM.address, sender: 'alice@chat.example', pending_id: ROOM.pending, option_id: 'deny', id: 'c1', ...fields,
});
const refused = (reply: string) => ({ kind: 'refused', reply });

describe('a click on an ask’s button', () => {
  it("answers the item with the button's option, as the clicker's console user, and names the option", async () => {
    const w = await world();
    assert.deepEqual(await w.choose(click()), { kind: 'answered', thread_id: ROOM.thread, option: 'Deny' });
    assert.deepEqual(w.answered, [{ user: 'alice', thread: ROOM.thread, answers: [{ id: ROOM.pending, option: 'deny' }] }]);
  });

  it('refuses, answering nothing: no conversation there, an unlinked clicker, a non-member, an item that waits no more, an option it does not have', async () => {
    const w = await world();
    assert.deepEqual(await w.choose(click({ address: { channel: 'team-chat', id: 'general/elsewhere' } })), refused('This conversation is not here any more.'));
    assert.deepEqual(await w.choose(click({ sender: 'carol@chat.example' })), refused(HOW_TO_LINK));
    assert.deepEqual(await w.choose(click({ sender: 'bob@chat.example' })),
      refused('You are not a member of this thread in the console, so you cannot answer here.'));
    assert.deepEqual(await w.choose(click({ pending_id: testId(53_099) })), refused(NOT_WAITING));
    const other = await w.choose(click({ option_id: 'maybe' }));
    assert.equal(other.kind, 'refused');
    assert.deepEqual(w.answered, []);
  });

  it("refuses with the failure's code when the answer is not taken", async () => {
    const w = await world(true);
    const handled = await w.choose(click());
    assert.equal(handled.kind, 'refused');
    assert.match(handled.kind === 'refused' ? handled.reply : '', /not_found/);
  });
});
