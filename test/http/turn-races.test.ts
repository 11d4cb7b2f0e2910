// Two turns on one thread (issue 24): a summon or a teleport and a directive sent at the same moment on an idle
// thread both succeeded, the directive running on the conversation the summon had just replaced, their runs
// overlapping; and on PostgreSQL mixes of summons and directives were answered 500 (`40P01 deadlock detected`).
// Over HTTP on memory, embedded PGlite and (with TEST_DATABASE_URL) PostgreSQL: many rounds, each on a new idle
// thread, asserting one winner, the documented 409 for every loser, no 500, and no two runs of a thread overlapping.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Run } from '../../domain/model.ts';
import type { AgentRunner, TurnRequest } from '../../ports/agent-runner.ts';
import type { Storage } from '../../ports/storage.ts';
import { fakeAgentOffers } from '../support/fake-agent-offers.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import type { Answer } from '../support/http.ts';
import { startService, type TestService } from '../support/service.ts';
import { storageKinds, type OpenedStorage } from '../support/storage-kinds.ts';

const ALICE: Record<string, string> = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const P = '/api/console/threads';
const ROUNDS = 25;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Turns held open until the round that started them has all its answers: two turns started by one round
 * would overlap whatever the machine's load (a turn that ended on a timer could end before a slow
 * round's last request, and that one then rightly won a turn of its own).
 */
const held = new Set<() => void>();
const releaseTurns = () => {
  for (const release of held) release();
  held.clear();
};

/** An agent whose every turn says a word and then holds until released (or cancelled): no process needed. */
const holdingRunner: AgentRunner = {
  async runTurn(request: TurnRequest) {
    await request.onSession(`session-${randomUUID()}`);
    await request.onUpdate({ kind: 'text', text: 'working' });
    await new Promise<void>((resolve) => {
      held.add(resolve);
      request.signal?.addEventListener('abort', () => resolve());
    });
    return { sessionId: 'held', stopReason: 'end_turn' };
  },
  setMode: async () => null,
  steer: async () => 'unsupported' as const,
  close: async () => {},
};
const OFFERS = fakeAgentOffers({
  claude: { modes: ['default', 'acceptEdits', 'plan'], currentMode: 'default', models: ['opus', 'sonnet'], efforts: ['low', 'high'] },
  codex: { modes: ['auto', 'read-only'], currentMode: 'auto', models: [], efforts: [] },
});

/** Every run of a thread, on any of its conversations, oldest first. */
async function runsOf(storage: Storage, threadId: string): Promise<Run[]> {
  const runs: Run[] = [];
  for (const c of await storage.conversations.listByThread(threadId)) {
    runs.push(...(await storage.conversations.runsPage(threadId, c.id, { limit: 200, before: null }))!.items);
  }
  return runs.sort((a, b) => (a.started_at < b.started_at ? -1 : 1));
}

for (const kind of storageKinds('turn_races')) {
  describe(`one turn per thread when moves and directives race: ${kind.name}`, () => {
    let opened: OpenedStorage;
    let service: TestService;
    /** Every thread a round raced on: checked at the end for overlapping runs. */
    const raced: string[] = [];
    before(async () => {
      opened = await kind.open();
      await opened.storage.importWorld(fixtureWorld());
      service = await startService({ DIRECTIVES_PER_MINUTE: '100000' }, { storage: opened.storage, runner: holdingRunner, offers: OFFERS });
      await service.knowOffers();
    });
    after(async () => {
      await service.close();
      await opened.close();
    });

    /** A new idle console thread of alice's, its one conversation claude's. */
    const idleThread = async (): Promise<string> => {
      const { thread } = await opened.storage.writer.createConsoleThread({
        owner: 'alice', key: randomUUID(), project: 'acme-web', title: 'Race',
        conversation: { agent: 'claude', model: 'opus', permission_mode: 'default', effort: null },
      });
      raced.push(thread.id);
      return thread.id;
    };
    const post = (path: string, body: unknown) => service.ask({ method: 'POST', path, headers: ALICE, body: JSON.stringify(body) });
    // No message_id: the directive's shape that deadlocked against a summon on PostgreSQL.
    const send = {
      directive: (thread: string) => () => post(`${P}/${thread}/directives`, { text: 'Go on' }),
      summon: (thread: string) => () => post(`${P}/${thread}/summon`, { route: 'codex', brief: 'Take over' }),
      teleport: (thread: string) => () => post(`${P}/${thread}/teleport`, { destination: { channel: 'team-chat', id: 'general' } }),
    };
    /** Sends the requests at the same moment; answers `status code` of each, checking every refusal is a documented 409. */
    const together = async (round: number, requests: readonly (() => Promise<Answer>)[], refusals: readonly string[]): Promise<string[]> => {
      const answers = await Promise.all(requests.map((request) => request()));
      releaseTurns();
      const seen = answers.map((a) => `${a.status} ${a.status === 202 ? '' : a.json().code}`.trim());
      assert.ok(answers.every((a) => a.status < 500), `round ${round}: no 5xx (${seen.join(', ')})`);
      assert.equal(answers.filter((a) => a.status === 202).length, 1, `round ${round}: one winner (${seen.join(', ')})`);
      for (const a of answers.filter((answer) => answer.status !== 202)) {
        assert.equal(a.status, 409, `round ${round}: ${a.text}`);
        assert.ok(refusals.includes(a.json().code), `round ${round}: ${a.text}`);
        assert.equal(a.headers['content-type'], 'application/problem+json');
      }
      return seen;
    };

    it(`a summon and a directive sent at the same moment on an idle thread (${ROUNDS} rounds): one turn, the other 409`, async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const thread = await idleThread();
        const pair = round % 2 === 0 ? [send.summon(thread), send.directive(thread)] : [send.directive(thread), send.summon(thread)];
        await together(round, pair, ['turn_running', 'conversation_changed']);
      }
    });

    it(`a teleport and a directive sent at the same moment on an idle thread (${ROUNDS} rounds): one is written, the other 409`, async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const thread = await idleThread();
        const pair = round % 2 === 0 ? [send.teleport(thread), send.directive(thread)] : [send.directive(thread), send.teleport(thread)];
        await together(round, pair, ['turn_running', 'conversation_moved', 'conversation_changed']);
      }
    });

    it('ten requests at once on an idle thread, summons and directives mixed (10 rounds): one 202, nine 409, no 500', async () => {
      for (let round = 0; round < 10; round++) {
        const thread = await idleThread();
        await together(round, Array.from({ length: 10 }, (_, i) => (i % 2 === round % 2 ? send.summon(thread) : send.directive(thread))), ['turn_running', 'conversation_changed']);
      }
    });

    it('no two runs of a raced thread overlapped', async () => {
      // Every turn was released with its round: wait until they have all ended (bounded), then compare their spans.
      for (let waited = 0; waited < 10_000; waited += 50) {
        const running = await Promise.all(raced.map((thread) => opened.storage.writer.runningTurn(thread)));
        if (running.every((turn) => turn === null)) break;
        releaseTurns(); // a turn that began after its round's release (the winner's turn starts a moment late)
        await sleep(50);
      }
      for (const thread of raced) {
        const runs = await runsOf(opened.storage, thread);
        assert.ok(runs.length <= 1 || runs.every((run, i) => i === 0 || runs[i - 1]!.ended_at! <= run.started_at),
          `thread ${thread}: ${runs.map((r) => `${r.started_at}..${r.ended_at}`).join(', ')}`);
        assert.ok(runs.every((run) => run.status === 'succeeded'), `thread ${thread}: ${runs.map((r) => r.status).join(', ')}`);
      }
    });
  });
}
