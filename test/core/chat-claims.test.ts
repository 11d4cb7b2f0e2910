// Chat message claims are forgotten after a horizon (core/channels/chat-claims.ts): 14 days, done or lapsed;
// the service prunes them at start (then hourly: test/chat-claims-at-start.test.ts). The per-adapter rule is the
// chat inbox contract's. Runtime-free like the rest of test/core (npm run test:runtimes runs it off Node too).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { memoryChatInbox } from '../../adapters/memory/chat-inbox.ts';
import { emptyState } from '../../adapters/memory/state.ts';
import { CHAT_CLAIM_HORIZON_MS, pruneChatClaims } from '../../core/channels/chat-claims.ts';
import type { Logger } from '../../ports/logger.ts';

const DAY = 86_400_000;
/** A logger that keeps what it was told. */
function keeping() {
  const lines: { level: string; message: string }[] = [];
  const log: Logger = {
    info: (_fields, message) => void lines.push({ level: 'info', message }),
    warn: (_fields, message) => void lines.push({ level: 'warn', message }),
    error: (_fields, message) => void lines.push({ level: 'error', message }),
  };
  return { log, lines };
}
const quiet = keeping().log;

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
    const { log, lines } = keeping();
    const pruned = await pruneChatClaims({ pruneClaims: async () => { throw new Error('storage away'); } }, log);
    assert.equal(pruned, 0);
    assert.deepEqual(lines.map((line) => line.level), ['warn']);
  });
});
