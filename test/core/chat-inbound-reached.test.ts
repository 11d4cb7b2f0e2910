// A chat message posted outside any thread that no conversation is named by (core/channels/inbound.ts,
// `reached`): the place's sole conversation takes a linked member's message, and nobody else's (nothing said);
// where several live, a linked sender gets the hint and nothing runs, anyone else nothing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { uuidv7 } from 'uuidv7';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { chatInbound, HOW_TO_LINK, HOW_TO_REACH } from '../../core/channels/inbound.ts';
import type { TurnStart } from '../../core/runs/directives.ts';
import type { ChatMessage } from '../../ports/chat-inbound.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { testId } from '../support/ids.ts';

async function app() {
  const storage = createMemoryStorage();
  const world = fixtureWorld();
  await storage.importWorld({
    ...world,
    threads: [...world.threads, {
      id: testId(53_000), key: null, channel: 'console', owner: 'alice', members: [], project: null, title: 'Living here', fork_of: null, fork_cutoff: null,
      messages: [],
      conversations: [{ id: testId(53_001), agent: 'claude', model: 'opus', permission_mode: 'default', effort: null, address: { channel: 'console', id: 'room#t1' }, turn_running: false, pending: [], runs: [] }],
    }],
  });
  const runs: TurnStart[] = [];
  const receive = chatInbound({
    storage,
    userAt: async (_channel, sender) => ({ 'alice@x': 'alice', 'bob@x': 'bob' } as Record<string, string>)[sender] ?? null,
    vocabularies: { one: async () => null },
    startTurn: async (turn) => {
      runs.push(turn);
      return { ok: true, value: { thread_id: turn.thread.id, key: null, conversation_id: turn.conversation.id, run_id: uuidv7() } };
    },
    cancel: async () => ({ ok: false, error: { code: 'not_found' } }),
    answer: async () => ({ ok: false, error: { code: 'not_found' } }),
  });
  return { receive, runs };
}

const message = (fields: Partial<ChatMessage>): ChatMessage => ({
  channel: 'console', address: { channel: 'console', id: 'room#t1' }, opens: null, sender: 'alice@x', text: 'hello', id: uuidv7(), ...fields,
});

describe('a chat message outside any thread', () => {
  it("reaching the sole conversation: a linked member's runs; a linked non-member's and an unlinked sender's are ignored, nothing said", async () => {
    const { receive, runs } = await app();
    assert.equal((await receive(message({ reached: 'sole', text: 'from alice' }))).kind, 'directive');
    assert.deepEqual(await receive(message({ reached: 'sole', sender: 'bob@x' })), { kind: 'ignored' });
    assert.deepEqual(await receive(message({ reached: 'sole', sender: 'carol@x' })), { kind: 'ignored' });
    assert.deepEqual(runs.map((r) => r.text), ['from alice']);
    // Posted in the thread (or addressed), the same senders are told why not, as before.
    assert.equal((await receive(message({ sender: 'bob@x' }))).kind, 'refused');
    assert.deepEqual(await receive(message({ sender: 'carol@x' })), { kind: 'unlinked', reply: HOW_TO_LINK });
  });

  it('naming none of several: a linked sender gets the hint, anyone else nothing; nothing runs', async () => {
    const { receive, runs } = await app();
    const onRoom = { channel: 'console', id: 'room' };
    assert.deepEqual(await receive(message({ reached: 'ambiguous', address: onRoom })), { kind: 'hint', reply: HOW_TO_REACH });
    assert.deepEqual(await receive(message({ reached: 'ambiguous', address: onRoom, sender: 'carol@x' })), { kind: 'ignored' });
    assert.deepEqual(runs, []);
  });
});
