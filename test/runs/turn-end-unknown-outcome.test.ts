// Issue 41, "a retried kick-finish whose commit outcome was unknown stores the event, and its chat post, twice":
// the end of a turn is written, and the answer lost (the connection dropped after the commit), so the step is
// tried again. Before, the retry appended the end event a second time, and the chat relay stored its post a
// second time with it; the end events are now keyed by the run (`runEndKeys`), and a retry finds the first.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import pino from 'pino';
import { createMemoryEventBus } from '../../adapters/memory/event-bus.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { emptyState } from '../../adapters/memory/state.ts';
import { chatRelay } from '../../core/channels/relay.ts';
import { emitter } from '../../core/runs/emit.ts';
import { finish } from '../../core/runs/turn-end.ts';
import type { InFlight, TurnDeps } from '../../core/runs/turn-types.ts';
import type { EventLog } from '../../ports/event-log.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { manualClock } from '../support/manual-clock.ts';

describe('the end of a turn written, its answer lost, and written again', () => {
  for (const status of ['failed', 'succeeded'] as const) {
    it(`${status}: one end event, one reflex_asleep, and one chat post`, { timeout: 10_000 }, async () => {
      const storage = createMemoryStorage(emptyState());
      await storage.importWorld(fixtureWorld());
      const address = { channel: 'team-chat', id: 'general/t1' };
      const t = await storage.writer.createConsoleThread({
        owner: 'alice', key: randomUUID(), channel: 'team-chat', project: null, title: 't',
        conversation: { agent: 'claude', model: null, permission_mode: null, effort: null, address },
      });
      const started = await storage.writer.writeDirective({
        thread_id: t.thread.id, conversation_id: t.conversation.id, message_id: null, author: 'alice', text: 'x', directory: null, permission_mode: null,
        lease: { holder: 'A', ms: 30_000 },
      });
      assert.ok(started.kind === 'started');
      // Every write of the run's end commits, and the first answer of each is lost: the caller cannot tell it was stored.
      const lost = new Set<string>();
      const events: EventLog = {
        ...storage.events,
        async append(threadId, type, data, posts, key) {
          const event = await storage.events.append(threadId, type, data, posts, key);
          if (type !== 'message' && !lost.has(type)) {
            lost.add(type);
            throw new Error('Connection terminated unexpectedly');
          }
          return event;
        },
      };
      const emit = emitter(chatRelay({ storage, newId: randomUUID, poke: () => {} })(events), createMemoryEventBus());
      const clock = manualClock();
      const deps = { writer: storage.writer, emit, clock, leaseMs: 30_000, holder: 'A', log: pino({ level: 'silent' }) } as unknown as TurnDeps;
      const entry = { lost: false, releasing: false } as InFlight;
      const ending = finish(deps, entry, t.thread.id, started.run.id, { status, error: status === 'failed' ? 'agent_failed: it broke' : null, stopReason: 'end_turn' });
      // Each lost answer is retried after a back-off on the clock.
      for (let i = 0; i < 10 && lost.size < 2; i++) await clock.advance(100);
      await clock.advance(2_000);
      await ending;
      assert.equal(entry.lost, false, 'the end was recorded');
      const stored = await storage.events.since(t.thread.id, 0, 100);
      const end = status === 'failed' ? 'run_error' : 'run_finished';
      assert.equal(stored.filter((e) => e.type === end).length, 1, `one ${end}: ${stored.map((e) => e.type).join(', ')}`);
      assert.equal(stored.filter((e) => e.type === 'reflex_asleep').length, 1, 'one reflex_asleep');
      const posts = await storage.outbox.claimDue('look', 60_000, 100);
      assert.equal(posts.length, status === 'failed' ? 1 : 0, `the error line posted once: ${JSON.stringify(posts.map((p) => p.text))}`);
    });
  }
});
