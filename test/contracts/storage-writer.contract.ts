import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Conversation, Run, Thread } from '../../domain/model.ts';
import { uuid7Time } from '../../domain/vocabulary.ts';
import type { DirectiveWrite, SteeredWrite } from '../../ports/directive-writes.ts';
import type { Storage } from '../../ports/storage.ts';
import { F, fixtureWorld } from '../support/fixture-world.ts';
import { testId } from '../support/ids.ts';
import { forkTests } from './storage-writer-forks.contract.ts';
import { rewindTests } from './storage-writer-rewinds.contract.ts';
import { pendingAndRunsTests } from './storage-writer-pending.contract.ts';
import { oneTurnPerThreadTests } from './storage-writer-races.contract.ts';
import { turnLeaseTests } from './storage-writer-turns.contract.ts';
import { threadOpeningTests } from './storage-writer-openings.contract.ts';

/** A console thread the suite created, with its conversation. */
export type Created = { readonly thread: Thread; readonly conversation: Conversation };

/** What the suite's parts share: the storage under test and ways to write through it. */
export interface WriterSuite {
  readonly storage: () => Storage;
  readonly newThread: () => Promise<Created>;
  readonly directive: (t: Created, fields?: Partial<DirectiveWrite>) => DirectiveWrite;
  readonly runs: (t: Created) => Promise<readonly Run[]>;
  readonly conversationOf: (t: Created) => Promise<Conversation>;
}

/** Builds an empty storage backend; the suite imports the fixture world into it. */
export type StorageWriterFactory = () => Promise<Storage>;

/**
 * The StorageWriter contract: every promise of its JSDoc, checked through the read ports the
 * console answers from (a write is only as good as what the reads then show).
 */
export function storageWriterContract(name: string, factory: StorageWriterFactory): void {
  describe(`storage writer contract: ${name}`, () => {
    let storage: Storage;
    before(async () => {
      storage = await factory();
      await storage.importWorld(fixtureWorld());
    });
    after(() => storage.close());

    const newThread = (key: string = randomUUID(), title = 'New thread'): Promise<Created> =>
      storage.writer.createConsoleThread({
        owner: 'alice', key, project: 'acme-web', title,
        conversation: { agent: 'claude', model: 'opus', permission_mode: 'default', effort: 'high' },
      });
    const directive = (t: Created, fields: Partial<DirectiveWrite> = {}): DirectiveWrite => ({
      thread_id: t.thread.id, conversation_id: t.conversation.id, message_id: randomUUID(), author: 'alice', text: 'Fix the build',
      directory: '/srv/acme', permission_mode: null, lease: { holder: 'contract', ms: 60_000 }, ...fields,
    });
    const ledger = async (threadId: string) => (await storage.ledger.page([{ thread_id: threadId, upTo: null }], { limit: 200, before: null })).items;
    const runs = async (t: Created) => (await storage.conversations.runsPage(t.thread.id, t.conversation.id, { limit: 200, before: null }))!.items;
    const conversationOf = async (t: Created) => (await storage.conversations.listByThread(t.thread.id)).find((c) => c.id === t.conversation.id)!;

    describe('ConsoleThreads: console threads by key', () => {
      it('finds a console thread by its owner and key only', async () => {
        const key = testId(5_500);
        assert.equal((await storage.writer.findByKey('bob', key))?.id, F.shared);
        assert.equal(await storage.writer.findByKey('alice', key), null, 'keys are scoped to their owner');
        assert.equal(await storage.writer.findByKey('bob', randomUUID()), null);
      });

      it('creates a console thread with its conversation, times taken from the ids', async () => {
        const key = randomUUID();
        const { thread, conversation } = await newThread(key);
        assert.deepEqual(thread, {
          id: thread.id, key, channel: 'console', owner: 'alice', project: 'acme-web', title: 'New thread',
          fork_of: null, fork_cutoff: null, created_at: uuid7Time(thread.id), worktree: null, archived: false,
        });
        assert.deepEqual(conversation, {
          id: conversation.id, thread_id: thread.id, agent: 'claude', model: 'opus', permission_mode: 'default', effort: 'high',
          address: { channel: 'console', id: thread.id }, turn_running: false, created_at: uuid7Time(conversation.id), moved_to: null,
        });
        assert.deepEqual(await storage.writer.findByKey('alice', key), thread);
        assert.deepEqual((await storage.threads.findAccessible('alice', thread.id))?.row, thread);
        assert.deepEqual(await storage.conversations.listByThread(thread.id), [conversation]);
      });

      it('creating a key that exists answers the existing thread and its first conversation', async () => {
        const key = randomUUID();
        const first = await newThread(key);
        const again = await newThread(key, 'Another title');
        assert.deepEqual(again, first);
      });

      it('records a worktree once: the first recorded stays, and every read answers it', async () => {
        const t = await newThread();
        const worktree = { branch: `console/${t.thread.id}`, base: 'main', path: `/data/worktrees/${t.thread.id}` };
        assert.deepEqual(await storage.writer.setWorktree(t.thread.id, worktree), worktree);
        assert.deepEqual(await storage.writer.setWorktree(t.thread.id, { ...worktree, base: 'other' }), worktree, 'the first recorded stays');
        assert.deepEqual((await storage.threads.findRow('alice', t.thread.id))?.worktree, worktree);
        assert.deepEqual((await storage.threads.findAccessible('alice', t.thread.id))?.row.worktree, worktree);
        assert.deepEqual((await storage.writer.findByKey('alice', t.thread.key!))?.worktree, worktree);
        assert.deepEqual((await storage.threads.listAccessible('alice', { limit: 200, before: null })).items.find((i) => i.id === t.thread.id)?.worktree, worktree);
        assert.equal(await storage.writer.setWorktree(randomUUID(), worktree), null, 'no such thread');
        // Raced a few times: the loser waits on the winner's row lock, and must then answer what the winner wrote.
        for (let round = 0; round < 8; round++) {
          const raced = await newThread();
          const [a, b] = await Promise.all([
            storage.writer.setWorktree(raced.thread.id, { ...worktree, base: 'a' }),
            storage.writer.setWorktree(raced.thread.id, { ...worktree, base: 'b' }),
          ]);
          assert.notEqual(a, null, 'the first record is answered');
          assert.deepEqual(a, b, 'two concurrent records agree on one');
        }
      });

      it('two concurrent creates for one key give one thread and one conversation', async () => {
        const key = randomUUID();
        const [a, b] = await Promise.all([newThread(key), newThread(key)]);
        assert.deepEqual(a, b);
        assert.equal((await storage.conversations.listByThread(a.thread.id)).length, 1);
      });
    });

    describe('DirectiveWrites: directives, idempotent and never over a running turn', () => {
      it('a directive stores the posture, the user message and a running run, and marks the turn', async () => {
        const t = await newThread();
        const outcome = await storage.writer.writeDirective(directive(t, { permission_mode: 'plan', text: 'Run the tests' }));
        assert.equal(outcome.kind, 'started');
        if (outcome.kind !== 'started') return;
        assert.deepEqual(outcome.answer, { thread_id: t.thread.id, key: t.thread.key, conversation_id: t.conversation.id, run_id: outcome.run.id });
        assert.deepEqual(outcome.run, {
          id: outcome.run.id, conversation_id: t.conversation.id, directory: '/srv/acme', status: 'running', error: null,
          started_at: uuid7Time(outcome.run.id), ended_at: null, rewound: false,
        });
        assert.deepEqual(outcome.message, {
          id: outcome.message.id, role: 'user', text: 'Run the tests', artifact_id: null, created_at: uuid7Time(outcome.message.id), origin: null,
        });
        assert.deepEqual(await ledger(t.thread.id), [outcome.message]);
        assert.deepEqual(await runs(t), [outcome.run]);
        assert.deepEqual(await conversationOf(t), { ...t.conversation, permission_mode: 'plan', turn_running: true });
      });

      it('a posture of null leaves the conversation posture as it was', async () => {
        const t = await newThread();
        await storage.writer.writeDirective(directive(t));
        assert.equal((await conversationOf(t)).permission_mode, 'default');
      });

      it('a repeated message_id answers the first answer again and writes nothing', async () => {
        const t = await newThread();
        const write = directive(t);
        const first = await storage.writer.writeDirective(write);
        assert.equal(first.kind, 'started');
        await storage.writer.finishRun(first.kind === 'started' ? first.run.id : '', 'succeeded', null);
        await storage.writer.releaseTurn(first.kind === 'started' ? first.run.id : '');
        const again = await storage.writer.writeDirective({ ...write, text: 'something else', permission_mode: 'plan' });
        assert.deepEqual(again, { kind: 'repeated', answer: first.kind === 'started' ? first.answer : null });
        assert.equal((await ledger(t.thread.id)).length, 1);
        assert.equal((await runs(t)).length, 1);
        assert.equal((await conversationOf(t)).permission_mode, 'default');
      });

      it("a message_id is its author's: another user's reuse is message_id_taken and writes nothing; the author's retry still repeats", async () => {
        const t = await newThread();
        const write = directive(t);
        const first = await storage.writer.writeDirective(write);
        assert.ok(first.kind === 'started');
        // While the turn runs (bob queues, as a member does) and after it: never alice's answer, never a write.
        const bobs = { ...write, author: 'bob', text: "bob's own words", when_busy: { mode: 'queue' as const, author: 'bob' } };
        assert.deepEqual(await storage.writer.writeDirective(bobs), { kind: 'message_id_taken' });
        await storage.writer.finishRun(first.run.id, 'succeeded', null);
        await storage.writer.releaseTurn(first.run.id);
        assert.deepEqual(await storage.writer.writeDirective({ ...bobs, when_busy: null }), { kind: 'message_id_taken' });
        assert.deepEqual((await ledger(t.thread.id)).map((m) => m.text), ['Fix the build']);
        assert.equal((await runs(t)).length, 1);
        assert.deepEqual(await storage.writer.queued(t.thread.id), []);
        assert.deepEqual(await storage.writer.writeDirective(write), { kind: 'repeated', answer: first.answer });
        // Two authors racing for one new id: one writes, the other is refused; no answer crosses over.
        const raced = directive(t, { message_id: randomUUID() });
        const outcomes = await Promise.all([storage.writer.writeDirective(raced), storage.writer.writeDirective({ ...raced, author: 'bob' })]);
        assert.deepEqual(outcomes.map((o) => o.kind).sort(), ['message_id_taken', 'started']);
        assert.equal((await runs(t)).length, 2);
      });

      it('a repeat wins over busy: while the first turn runs, the same message_id is repeated', async () => {
        const t = await newThread();
        const write = directive(t);
        const first = await storage.writer.writeDirective(write);
        assert.equal((await storage.writer.writeDirective(write)).kind, 'repeated');
        assert.equal(first.kind, 'started');
      });

      it('two concurrent identical directives: one started, one repeated, one message and one run stored', async () => {
        const t = await newThread();
        const write = directive(t);
        const outcomes = await Promise.all([storage.writer.writeDirective(write), storage.writer.writeDirective(write)]);
        assert.deepEqual(outcomes.map((o) => o.kind).sort(), ['repeated', 'started']);
        const started = outcomes.find((o) => o.kind === 'started')!;
        const repeated = outcomes.find((o) => o.kind === 'repeated')!;
        assert.ok(started.kind === 'started' && repeated.kind === 'repeated');
        assert.deepEqual(repeated.answer, started.answer);
        assert.equal((await ledger(t.thread.id)).length, 1);
        assert.equal((await runs(t)).length, 1);
      });

      it('a directive while a turn runs is busy and writes nothing, not even its message_id', async () => {
        const t = await newThread();
        const first = await storage.writer.writeDirective(directive(t));
        const busyWrite = directive(t, { permission_mode: 'plan' });
        assert.deepEqual(await storage.writer.writeDirective(busyWrite), { kind: 'busy' });
        assert.equal((await ledger(t.thread.id)).length, 1);
        assert.equal((await runs(t)).length, 1);
        assert.equal((await conversationOf(t)).permission_mode, 'default');
        await storage.writer.finishRun(first.kind === 'started' ? first.run.id : '', 'succeeded', null);
        await storage.writer.releaseTurn(first.kind === 'started' ? first.run.id : '');
        assert.equal((await storage.writer.writeDirective(busyWrite)).kind, 'started', 'the busy one was not recorded');
      });

      it('two concurrent directives with different ids on one conversation: one started, one busy', async () => {
        const t = await newThread();
        const outcomes = await Promise.all([storage.writer.writeDirective(directive(t)), storage.writer.writeDirective(directive(t))]);
        assert.deepEqual(outcomes.map((o) => o.kind).sort(), ['busy', 'started']);
        assert.equal((await runs(t)).length, 1);
      });

      it('a directive without message_id is not deduplicated', async () => {
        const t = await newThread();
        const write = directive(t, { message_id: null });
        const first = await storage.writer.writeDirective(write);
        await storage.writer.finishRun(first.kind === 'started' ? first.run.id : '', 'succeeded', null);
        await storage.writer.releaseTurn(first.kind === 'started' ? first.run.id : '');
        assert.equal((await storage.writer.writeDirective(write)).kind, 'started');
        assert.equal((await runs(t)).length, 2);
      });
    });

    describe('DirectiveWrites: a directive steered into the running turn', () => {
      const steered = (t: Created, runId: string, fields: Partial<SteeredWrite> = {}): SteeredWrite => ({
        thread_id: t.thread.id, conversation_id: t.conversation.id, run_id: runId, message_id: randomUUID(), author: 'alice', text: 'mind the tests', ...fields,
      });

      it('writes the ledger message, the run\'s user model message and the `steered` event naming the run; answers steered', async () => {
        const t = await newThread();
        const started = await storage.writer.writeDirective(directive(t));
        assert.ok(started.kind === 'started');
        const write = steered(t, started.run.id);
        const outcome = await storage.writer.writeSteered(write);
        assert.ok(outcome.kind === 'steered');
        assert.deepEqual(outcome.answer, { thread_id: t.thread.id, key: t.thread.key, conversation_id: t.conversation.id, run_id: started.run.id, steered: true });
        assert.deepEqual(outcome.message, { id: outcome.message.id, role: 'user', text: 'mind the tests', artifact_id: null, created_at: uuid7Time(outcome.message.id), origin: null });
        assert.deepEqual((await ledger(t.thread.id)).map((m) => m.id), [outcome.message.id, started.message.id]);
        assert.deepEqual([outcome.event.type, outcome.event.data], ['steered', { run_id: started.run.id, message: outcome.message }]);
        assert.deepEqual((await storage.events.since(t.thread.id, 0, 100)).at(-1), outcome.event);
        const page = await storage.conversations.modelMessagesPage(t.thread.id, started.run.id, { limit: 10, before: null });
        assert.deepEqual(page!.items.map((m) => [m.role, m.content]).reverse(), [['user', 'Fix the build'], ['user', 'mind the tests']]);
        // The turn is untouched: the run still runs, and no other run was started.
        assert.equal((await conversationOf(t)).turn_running, true);
        assert.equal((await runs(t)).length, 1);
        // Kept for a retry: its author's answer again, another's message_id_taken; nothing more written either way.
        assert.deepEqual(await storage.writer.keptAnswer(t.thread.id, write.message_id!, 'alice'), { kind: 'repeated', answer: outcome.answer });
        assert.deepEqual(await storage.writer.keptAnswer(t.thread.id, write.message_id!, 'bob'), { kind: 'message_id_taken' });
        assert.deepEqual(await storage.writer.writeSteered(write), { kind: 'repeated', answer: outcome.answer });
        assert.deepEqual(await storage.writer.writeSteered({ ...write, author: 'bob' }), { kind: 'message_id_taken' });
        assert.equal((await ledger(t.thread.id)).length, 2);
      });

      it('keptAnswer is null for a message_id never sent; a queued directive\'s answer is kept too', async () => {
        const t = await newThread();
        assert.equal(await storage.writer.keptAnswer(t.thread.id, randomUUID(), 'alice'), null);
        const started = await storage.writer.writeDirective(directive(t));
        assert.ok(started.kind === 'started');
        const queued = directive(t, { when_busy: { mode: 'queue', author: 'alice' } });
        const outcome = await storage.writer.writeDirective(queued);
        assert.ok(outcome.kind === 'queued');
        assert.deepEqual(await storage.writer.keptAnswer(t.thread.id, queued.message_id!, 'alice'), { kind: 'repeated', answer: outcome.answer });
      });

      it('two steers with one message_id at once: one is written, the other repeats it', async () => {
        const t = await newThread();
        const started = await storage.writer.writeDirective(directive(t));
        assert.ok(started.kind === 'started');
        const write = steered(t, started.run.id);
        const outcomes = await Promise.all([storage.writer.writeSteered(write), storage.writer.writeSteered(write)]);
        assert.deepEqual(outcomes.map((o) => o.kind).sort(), ['repeated', 'steered']);
        assert.equal((await ledger(t.thread.id)).length, 2);
      });
    });

    describe('SetPermissionMode', () => {
      it('sets a conversation posture and answers the row; an unknown conversation answers null', async () => {
        const t = await newThread();
        assert.deepEqual(await storage.writer.setPermissionMode(t.conversation.id, 'acceptEdits'), { ...t.conversation, permission_mode: 'acceptEdits' });
        assert.deepEqual(await conversationOf(t), { ...t.conversation, permission_mode: 'acceptEdits' });
        assert.equal(await storage.writer.setPermissionMode(testId(99_999), 'plan'), null);
      });
    });

    describe('RunRecords: the session, ledger and model messages', () => {
      it('remembers the agent session outside the conversation row', async () => {
        const t = await newThread();
        assert.equal(await storage.writer.sessionOf(t.conversation.id), null);
        await storage.writer.setSession(t.conversation.id, 'session-1');
        assert.equal(await storage.writer.sessionOf(t.conversation.id), 'session-1');
        assert.deepEqual(await conversationOf(t), t.conversation, 'the row answered is unchanged');
        await storage.writer.setSession(t.conversation.id, null);
        assert.equal(await storage.writer.sessionOf(t.conversation.id), null);
        assert.equal(await storage.writer.sessionOf(testId(99_999)), null);
      });

      it('appends ledger and model messages that the reads then show', async () => {
        const t = await newThread();
        const message = await storage.writer.appendMessage(t.thread.id, { role: 'assistant', text: 'Done', artifact_id: F.artifact });
        assert.deepEqual(message, { id: message.id, role: 'assistant', text: 'Done', artifact_id: F.artifact, created_at: uuid7Time(message.id), origin: null });
        assert.deepEqual(await ledger(t.thread.id), [{ ...message, app: { title: 'Forecast', provider_name: 'Weather' } }]);
        const started = await storage.writer.writeDirective(directive(t));
        assert.ok(started.kind === 'started');
        const model = await storage.writer.appendModelMessage(started.run.id, { role: 'assistant', content: 'thinking' });
        assert.deepEqual(model, { id: model.id, run_id: started.run.id, role: 'assistant', content: 'thinking', created_at: uuid7Time(model.id) });
        const page = await storage.conversations.modelMessagesPage(t.thread.id, started.run.id, { limit: 10, before: null });
        // After the prompt, which the directive's write stored as the run's first model message.
        const items = [...(page?.items ?? [])].sort((a, b) => (a.id < b.id ? -1 : 1));
        assert.deepEqual(items.map(({ role, content }) => ({ role, content })), [{ role: 'user', content: 'Fix the build' }, { role: 'assistant', content: 'thinking' }]);
        assert.deepEqual(items.at(-1), model);
      });
    });

    describe('PendingItems: asked with their tool call', () => {
      it('adds pending items that the pending read then shows', async () => {
        const t = await newThread();
        const approval = await storage.writer.addPending({
          kind: 'approval', conversation_id: t.conversation.id, run_id: null, title: 'Edit "a.ts"?', options: [{ id: 'yes', name: 'Yes', kind: 'allow_once' }], tool_call: null,
        });
        assert.deepEqual(await storage.conversations.pendingByThread(t.thread.id), [approval]);
        assert.equal(approval.title, 'Edit "a.ts"?');
      });

      it('keeps an approval\'s ACP tool call whole (diff, locations, raw input and output) and its options\' ids, names and kinds', async () => {
        const t = await newThread();
        const tool_call = {
          id: 'toolu_01', title: 'Write /srv/acme/notes.md', kind: 'edit', status: 'pending', name: 'Write',
          content: [
            { type: 'diff' as const, path: '/srv/acme/notes.md', oldText: null, newText: 'line "one"\nü🚀\n' },
            { type: 'content' as const, content: { type: 'text', text: 'why' } },
            { type: 'terminal' as const, terminalId: 'term-1' },
          ],
          locations: [{ path: '/srv/acme/notes.md', line: 1 }, { path: '/srv/acme/other.md' }],
          rawInput: { file_path: '/srv/acme/notes.md', content: 'line "one"', nested: { list: [1, null, true] } },
          rawOutput: null,
        };
        const options = [
          { id: 'allow_always', name: 'Always Allow', kind: 'allow_always' as const },
          { id: 'allow', name: 'Allow', kind: 'allow_once' as const },
          { id: 'reject', name: 'Reject', kind: 'reject_once' as const },
          { id: 'never', name: 'Never', kind: 'reject_always' as const },
        ];
        const approval = await storage.writer.addPending({ kind: 'approval', conversation_id: t.conversation.id, run_id: null, title: tool_call.title, options, tool_call });
        assert.deepEqual(approval.tool_call, tool_call);
        assert.deepEqual(await storage.conversations.pendingByThread(t.thread.id), [approval]);
      });
    });

    pendingAndRunsTests({ storage: () => storage, newThread, directive, runs, conversationOf });
    turnLeaseTests({ storage: () => storage, newThread, directive, runs, conversationOf });
    threadOpeningTests({ storage: () => storage, newThread, directive, runs, conversationOf });
    oneTurnPerThreadTests({ storage: () => storage, newThread, directive, runs, conversationOf });
    forkTests({ storage: () => storage, newThread, directive, runs, conversationOf });
    rewindTests({ storage: () => storage, newThread, directive, runs, conversationOf });
  });
}
