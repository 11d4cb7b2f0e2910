// The service prunes chat message claims past their horizon at start (then hourly); the rule itself is
// test/core/chat-claims.test.ts's, and each adapter's the chat inbox contract's.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createMemoryStorage } from '../adapters/memory/storage.ts';
import { emptyState } from '../adapters/memory/state.ts';
import { startService } from './support/service.ts';

const DAY = 86_400_000;

it('the service prunes at start', async () => {
  const state = emptyState();
  state.chatInbox.claims.set('c\u0000old', { holder: '', until: 0, done: true, created: Date.now() - 15 * DAY });
  state.chatInbox.claims.set('c\u0000recent', { holder: '', until: 0, done: true, created: Date.now() - 13 * DAY });
  const service = await startService({}, { storage: createMemoryStorage(state) });
  try {
    for (const started = Date.now(); state.chatInbox.claims.has('c\u0000old') && Date.now() - started < 5_000;) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual([...state.chatInbox.claims.keys()], ['c\u0000recent']);
  } finally {
    await service.close();
  }
});
