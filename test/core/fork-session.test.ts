// Which agent session a fork's first turn may fork (core/forks/fork-session.ts), over fakes: only where the copy is
// the fork's starting point; null (a briefed new session) anywhere else.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { forkableSession, type ForkSessionStores } from '../../core/forks/fork-session.ts';

interface World {
  readonly ownMessages: number;
  readonly sourceReadable: boolean;
  readonly sourceLatest: string;
  readonly agent: string;
  readonly running: boolean;
  readonly session: string | null;
}
const GOOD: World = { ownMessages: 1, sourceReadable: true, sourceLatest: 'cut', agent: 'claude', running: false, session: 'sess-1' };

function stores(world: World): ForkSessionStores {
  const row = (id: string, fork_of: string | null, fork_cutoff: string | null) => ({ id, fork_of, fork_cutoff });
  return {
    threads: {
      findAccessible: async (_user: string, id: string) =>
        id === 'fork' ? { row: row('fork', 'src', 'cut'), chain: [row('fork', 'src', 'cut'), row('src', null, null)] }
          : id === 'src' && world.sourceReadable ? { row: row('src', null, null), chain: [row('src', null, null)] } : null,
    },
    ledger: {
      page: async (segments: readonly { thread_id: string }[]) => ({
        items: segments[0]!.thread_id === 'fork' ? Array.from({ length: world.ownMessages }, (_, i) => ({ id: `own-${i}` })) : [{ id: world.sourceLatest }],
      }),
    },
    conversations: { latestByThread: async () => ({ id: 'conv', agent: world.agent }) },
    writer: { sessionOf: async () => world.session, runningTurn: async () => (world.running ? { run_id: 'r' } : null) },
  } as unknown as ForkSessionStores;
}

describe("a fork's session to fork", () => {
  it("is the source conversation's session where the fork starts where that session stands", async () => {
    assert.equal(await forkableSession(stores(GOOD), 'bob', 'fork', 'claude'), 'sess-1');
  });

  it('is none past its first turn, past the cutoff, for another agent, while a source turn runs, or where the source is not readable', async () => {
    for (const [why, world] of [
      ['a later turn', { ...GOOD, ownMessages: 2 }],
      ['the source went on', { ...GOOD, sourceLatest: 'later' }],
      ['another agent', { ...GOOD, agent: 'codex' }],
      ['a source turn runs', { ...GOOD, running: true }],
      ['the source is not readable', { ...GOOD, sourceReadable: false }],
      ['no session', { ...GOOD, session: null }],
    ] as const) {
      assert.equal(await forkableSession(stores(world), 'bob', 'fork', 'claude'), null, why);
    }
  });
});
