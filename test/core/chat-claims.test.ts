// Chat message claims are forgotten after a horizon (core/channels/chat-claims.ts): 14 days, done or lapsed;
// the service prunes them at start (then hourly). The per-adapter rule is the chat inbox contract's.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { memoryChatInbox } from '../../adapters/memory/chat-inbox.ts';
import { emptyState } from '../../adapters/memory/state.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { CHAT_CLAIM_HORIZON_MS, pruneChatClaims } from '../../core/channels/chat-claims.ts';
import { createLogger } from '../../src/logging.ts';
import { startService } from '../support/service.ts';

const DAY = 86_400_000;
const quiet = createLogger('silent');

describe('chat claims are pruned after the horizon', () => {
  it('a claim made 15 days ago goes, one made 13 days ago stays and still blocks', async () => {
    let clock = Date.now() - 15 * DAY;
    const state = emptyState();
    const inbox = memoryChatInbox(state.chatInbox, () => clock);
    assert.equal(await inbox.claim('c', 'old', 'a', 60_000), true);
    await inbox.done('c', 'old');
    clock += 2 * DAY;
    assert.equal(await inbox.claim('c', 'kept', 'a', 60_000), true);
    await inbox.done('c', 'kept');
    clock = Date.now();
    assert.equal(CHAT_CLAIM_HORIZON_MS, 14 * DAY);
    assert.equal(await pruneChatClaims(inbox, quiet, clock), 1);
    assert.equal(await inbox.claim('c', 'old', 'b', 60_000), true, 'forgotten: claimed again');
    assert.equal(await inbox.claim('c', 'kept', 'b', 60_000), false, 'within the horizon: still done');
  });

  it('a failing prune is logged, not thrown', async () => {
    const pruned = await pruneChatClaims({ pruneClaims: async () => { throw new Error('storage away'); } }, quiet);
    assert.equal(pruned, 0);
  });

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
});
