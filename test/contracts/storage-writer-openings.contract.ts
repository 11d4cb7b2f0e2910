import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { DirectiveOrigin } from '../../domain/model.ts';
import type { ThreadOpening } from '../../ports/directive-writes.ts';
import type { Created, WriterSuite } from './storage-writer.contract.ts';

/** A first directive to a new key of alice's, opening its thread (a scheduled fire's, by default). */
const opening = (key: string = randomUUID(), fields: Partial<ThreadOpening> = {}): ThreadOpening => ({
  thread: { owner: 'alice', key, project: 'acme-web', title: 'Nightly triage', conversation: { agent: 'claude', model: 'opus', permission_mode: 'default', effort: null } },
  message_id: `schedule:${key}`, text: 'Triage the <night>', directory: '/srv/acme', lease: { holder: 'contract', ms: 60_000 },
  origin: { kind: 'schedule', id: 'nightly' } satisfies DirectiveOrigin, ...fields,
});

/** What a thread holds as the reads answer it, its own ids (and their times) replaced by their order of appearance. */
async function holdings(suite: WriterSuite, t: Created) {
  const storage = suite.storage();
  const names = new Map<string, string>();
  const alike = (value: unknown): unknown => {
    if (typeof value === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-/.test(value)) {
      if (!names.has(value)) names.set(value, `#${names.size}`);
      return names.get(value);
    }
    if (typeof value === 'string' && /^\d{4}-\d\d-\d\dT/.test(value)) return 'time';
    if (Array.isArray(value)) return value.map(alike);
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === 'key' ? 'key' : alike(v)]));
    return value;
  };
  const runs = await suite.runs(t);
  return alike({
    thread: await storage.threads.findRow('alice', t.thread.id),
    conversations: await storage.conversations.listByThread(t.thread.id),
    ledger: (await storage.ledger.page([{ thread_id: t.thread.id, upTo: null }], { limit: 10, before: null })).items,
    runs,
    prompts: (await storage.conversations.modelMessagesPage(t.thread.id, runs[0]!.id, { limit: 10, before: null }))?.items,
    events: await storage.events.since(t.thread.id, 0, 10),
    running: await storage.writer.runningTurn(t.thread.id),
    session: await storage.writer.sessionOf(t.conversation.id),
  });
}

/** The storage writer contract, continued: threads opened with their first turns, together (DirectiveWrites.openThreads). */
export function threadOpeningTests(suite: WriterSuite): void {
  const { storage } = suite;
  describe('DirectiveWrites.openThreads: first directives to new keys, written together', () => {
    it('opens each thread with its turn started, as createConsoleThread then writeDirective would', async () => {
      const [a, b] = [opening(), opening(randomUUID(), { message_id: null, origin: null, text: 'Second' })];
      const opened = await storage().writer.openThreads([a, b]);
      assert.equal(opened.length, 2);
      // The same directive the one-by-one way, on a thread of its own.
      const single = await storage().writer.createConsoleThread({ ...a.thread, key: randomUUID() });
      const started = await storage().writer.writeDirective({
        thread_id: single.thread.id, conversation_id: single.conversation.id, message_id: a.message_id, author: 'alice', text: a.text,
        directory: a.directory, permission_mode: null, lease: a.lease, when_busy: null, origin: a.origin,
      });
      assert.equal(started.kind, 'started');
      const [first, second] = opened;
      assert.ok(first && second);
      assert.deepEqual(await holdings(suite, first), await holdings(suite, single));
      // What it answered is what the reads show, and what writeDirective answers.
      assert.equal(first.thread.key, a.thread.key);
      // What the reads answer, its fields in the order createConsoleThread answers them.
      assert.deepEqual(first.thread, await storage().threads.findRow('alice', first.thread.id));
      assert.deepEqual(first.conversation, (await storage().conversations.listByThread(first.thread.id))[0]);
      assert.deepEqual(Object.keys(first.thread), Object.keys(single.thread));
      assert.deepEqual(Object.keys(first.conversation), Object.keys(single.conversation));
      assert.deepEqual(await storage().events.since(first.thread.id, 0, 10), [first.started.event, first.started.runStarted]);
      for (const event of [first.started.event, first.started.runStarted]) assert.deepEqual(Object.keys(event), ['seq', 'type', 'thread_id', 'at', 'data']);
      assert.deepEqual(first.started.answer, { thread_id: first.thread.id, key: a.thread.key, conversation_id: first.conversation.id, run_id: first.started.run.id });
      assert.deepEqual((await suite.runs(first))[0], first.started.run);
      assert.equal(first.started.sessionId, null);
      assert.equal((await storage().writer.findByKey('alice', b.thread.key))?.id, second.thread.id);
      assert.equal(second.started.message.origin, null);
      // The directive is kept under its message_id: a retry repeats its answer; another author's is refused.
      const retry = { thread_id: first.thread.id, conversation_id: first.conversation.id, message_id: a.message_id, author: 'alice', text: a.text, directory: a.directory, permission_mode: null, lease: a.lease };
      assert.deepEqual(await storage().writer.writeDirective(retry), { kind: 'repeated', answer: first.started.answer });
      assert.deepEqual(await storage().writer.writeDirective({ ...retry, author: 'bob' }), { kind: 'message_id_taken' });
      // The turn is claimed: another directive to the thread is refused while it runs.
      assert.equal((await storage().writer.writeDirective({ ...retry, message_id: null })).kind, 'busy');
    });

    it('writes nothing for a key its owner has, a key twice in one batch, or a key that is a thread id; opens the rest', async () => {
      const existing = await suite.newThread();
      const twice = opening();
      const fresh = opening();
      const opened = await storage().writer.openThreads([
        opening(existing.thread.key!), twice, { ...twice, text: 'the same key again' }, opening(existing.thread.id), fresh,
      ]);
      assert.deepEqual(opened.map((o) => o !== null), [false, true, false, false, true]);
      assert.deepEqual(await storage().events.since(existing.thread.id, 0, 10), [], 'nothing written on the existing thread');
      assert.equal((await suite.runs(existing)).length, 0);
      assert.equal(await storage().writer.findByKey('alice', existing.thread.id), null, 'no thread keyed by a thread id');
      assert.equal((await storage().ledger.page([{ thread_id: opened[1]!.thread.id, upTo: null }], { limit: 10, before: null })).items.length, 1);
      assert.deepEqual(await storage().writer.openThreads([]), []);
    });

    it("opens a thread on the channel it names, its conversation living there at the thread", async () => {
      const onChat = opening();
      const [opened] = await storage().writer.openThreads([{ ...onChat, thread: { ...onChat.thread, channel: 'team-chat' } }]);
      assert.equal((await storage().threads.findRow('alice', opened!.thread.id))?.channel, 'team-chat');
      assert.deepEqual((await storage().conversations.listByThread(opened!.thread.id))[0]?.address, { channel: 'team-chat', id: opened!.thread.id });
    });

    it('a key opened by a concurrent batch is opened once: the other answers null for it', async () => {
      const shared = opening();
      const [one, two] = await Promise.all([storage().writer.openThreads([shared, opening()]), storage().writer.openThreads([opening(), shared])]);
      assert.equal([one[0], two[1]].filter((o) => o !== null).length, 1);
      assert.ok(one[1] !== null && two[0] !== null);
      const thread = await storage().writer.findByKey('alice', shared.thread.key);
      assert.equal((await storage().conversations.listByThread(thread!.id)).length, 1);
    });
  });
}
