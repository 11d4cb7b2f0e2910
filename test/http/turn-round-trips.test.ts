import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAcpAgentRunner } from '../../adapters/acp/agent-runner.ts';
import type { WireEvent } from '../../domain/events.ts';
import type { AgentRunner } from '../../ports/agent-runner.ts';
import type { Storage } from '../../ports/storage.ts';
import { createLogger } from '../../src/logging.ts';
import { connectLive, type LiveClient } from '../support/live-client.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { startService } from '../support/service.ts';
import { databasesInTier, storageKinds, type OpenedStorage, type StorageKind } from '../support/storage-kinds.ts';
import { EMBEDDED_POOL_SIZE, MEMORY_DATA_DIR, startEmbeddedPostgres } from '../../adapters/embedded/pglite-server.ts';
import { createMikroOrmStorage } from '../../adapters/mikro-orm/storage.ts';
import { builtDemoAgent } from '../support/built.ts';
import { waitFor } from '../support/wait-for.ts';
import { isBackgroundStatement } from '../support/background-statements.ts';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };

/** One storage call: its name, how many calls had answered when it began, and whether it has answered. */
interface Call {
  readonly name: string;
  readonly after: number;
  done: boolean;
}

/**
 * Storage that records every call of its stores, each answered one macrotask late (as a database's
 * round trip is): calls made together overlap, calls made one after another do not.
 */
function countingStorage(inner: Storage): { storage: Storage; calls: Call[] } {
  const calls: Call[] = [];
  let answered = 0;
  const wrap = (target: object, prefix: string): object =>
    new Proxy(target, {
      get(object, property) {
        const value = Reflect.get(object, property) as unknown;
        const name = `${prefix}${String(property)}`;
        if (typeof value === 'function') {
          return (...args: unknown[]) => {
            const result = (value as (...a: unknown[]) => unknown).apply(object, args);
            if (!(result instanceof Promise)) return result;
            // The scheduler looks for due schedules every second, beside any turn: no part of a turn's cost.
            if (name.startsWith('schedules.')) return result;
            // So does the webhook sender for due deliveries.
            if (name.startsWith('webhooks.')) return result;
            const call: Call = { name, after: answered, done: false };
            calls.push(call);
            const late = <T>(settle: () => T) =>
              new Promise<T>((resolve) =>
                setImmediate(() => {
                  answered += 1;
                  call.done = true;
                  resolve(settle());
                }),
              );
            return result.then(
              (v) => late(() => v),
              (error: unknown) => late(() => Promise.reject(error)),
            );
          };
        }
        if (value !== null && typeof value === 'object' && prefix === '') return wrap(value, `${name}.`);
        return value;
      },
    });
  return { storage: wrap(inner, '') as Storage, calls };
}

/** Round trips one after another: calls that began with the same number of calls answered went together. */
const roundTrips = (calls: readonly Call[]) => new Set(calls.map((call) => call.after)).size;

/** The calls made before the runner was asked for a turn, how many of them had answered then, and the SQL statements sent meanwhile. */
interface BeforePrompt {
  readonly calls: Call[];
  /** Those of `calls` that had not answered when the runner was asked. */
  readonly unanswered: string[];
  readonly statements: string[];
}

/**
 * A service over `opened` (its calls counted), three turns of one thread run on it (the first makes the
 * thread and the agent's session, the next two continue both): what was waited for before each prompt.
 */
async function threeTurns(opened: OpenedStorage, statements: string[]): Promise<{ turns: BeforePrompt[]; events: WireEvent[] }> {
  await opened.storage.importWorld(fixtureWorld());
  const counting = countingStorage(opened.storage);
  const beforePrompt: BeforePrompt[] = [];
  let events: WireEvent[] = [];
  let mark = { calls: 0, statements: 0 };
  const acp = createAcpAgentRunner({ demoAgent: builtDemoAgent(), log: createLogger('fatal'), env: process.env });
  const runner: AgentRunner = {
    runTurn: (request) => {
      const calls = counting.calls.slice(mark.calls);
      beforePrompt.push({ calls, unanswered: calls.filter((call) => !call.done).map((call) => call.name), statements: statements.slice(mark.statements) });
      return acp.runTurn(request);
    },
    setMode: acp.setMode.bind(acp),
    steer: acp.steer.bind(acp),
    close: acp.close.bind(acp),
  };
  // A long lease: no renewal or sweep runs beside the turn.
  const service = await startService({ TURN_LEASE_MS: '3600000' }, { storage: counting.storage, runner, offers: acp.offers });
  try {
    const key = crypto.randomUUID();
    const socket = (await connectLive(service.port, { thread: key, after: '0' })) as LiveClient;
    const post = async (path: string, body: unknown) => {
      const res = await service.ask({ method: 'POST', path: `/api/console/threads/${path}/directives`, headers: ALICE, body: JSON.stringify(body) });
      assert.equal(res.status, 202, res.text);
      return res.json() as { thread_id: string };
    };
    const asleep = (count: number) => socket.until((events) => events.filter((e) => e.type === 'reflex_asleep').length === count);
    const { thread_id } = await post(key, { text: 'First', model: 'claude:opus', project: 'acme-web' });
    await asleep(1);
    for (let turn = 2; turn <= 3; turn++) {
      // The turn before hands the thread over just after its last event: its release is no part of this turn.
      await waitFor(async () => (await opened.storage.writer.runningTurn(thread_id)) === null, { what: 'the turn before released' });
      mark = { calls: counting.calls.length, statements: statements.length };
      await post(thread_id, { text: `Turn ${turn}` });
      await asleep(turn);
    }
    socket.close();
    events = await opened.storage.events.since(thread_id, 0, 1000);
  } finally {
    await service.close();
  }
  assert.equal(beforePrompt.length, 3);
  return { turns: beforePrompt.slice(1), events };
}

/**
 * What a directive on a continued thread waits for before its agent is prompted (issue 28: a turn's
 * overhead): each storage round trip is a database round trip on PGlite and PostgreSQL, each SQL
 * statement one more turn of the embedded database's one session. One more here is a slower turn.
 * Counted, not timed: the speed itself is bench/turn-overhead.ts's.
 */
/**
 * Embedded PGlite as `npm start` opens it (src/open-database.ts): its catalog and the credentials found kept in memory,
 * the database being this process's alone.
 */
const embeddedAsStarted: StorageKind = {
  name: 'embedded PGlite as npm start opens it (its catalog and credentials kept)',
  open: async (onQuery) => {
    const server = await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR });
    const storage = await createMikroOrmStorage({ clientUrl: server.url, pool: EMBEDDED_POOL_SIZE, ...(onQuery === undefined ? {} : { onQuery }) }, { catalog: true, credentials: true });
    return { storage, reopen: async () => storage, close: async () => { await storage.close(); await server.close(); } };
  },
};

/**
 * Statements before the prompt: 5 (the thread's row and its latest conversation are one), of which the agents' and
 * the project's reads are 2 that a kept catalog answers from memory, and the token's lookup one that kept
 * credentials answer from memory. The directive is one of them: on an idle thread one function of the database (migration 0027) locks,
 * checks and writes what the transaction did in five (begin, two locks, the claim, commit).
 */
const STATEMENTS = { kept: 2, read: 5 };

for (const kind of [...storageKinds('turn_round_trips'), ...(databasesInTier() ? [embeddedAsStarted] : [])]) {
  describe(`a continued thread's directive on ${kind.name}: what is waited for before the prompt`, () => {
    let opened: OpenedStorage;
    const statements: string[] = [];
    let turns: BeforePrompt[];
    let events: WireEvent[];
    before(async () => {
      opened = await kind.open((sql) => void (isBackgroundStatement(sql) || statements.push(sql)));
      ({ turns, events } = await threeTurns(opened, statements));
    });
    after(() => opened.close());

    it('four storage round trips: auth, the thread with its conversation and the agents, the project, the directive (run_started, the prompt and the session with it); all answered before the prompt', () => {
      for (const { calls, unanswered } of turns) {
        const names = calls.map((call) => call.name);
        assert.ok(names.includes('writer.writeDirective'), names.join(', '));
        // run_started, the prompt's model message and the session's id are the directive's transaction's: no call of their own.
        for (const name of ['events.append', 'writer.appendModelMessage', 'writer.sessionOf']) assert.ok(!names.includes(name), `${name} in ${names.join(', ')}`);
        assert.deepEqual(unanswered, [], 'every call before the prompt had answered when the runner was asked');
        assert.equal(roundTrips(calls), 4, `round trips before the prompt: ${calls.map((c) => `${c.name}@${c.after}`).join(', ')}`);
      }
    });

    it('run_started and the prompt stored with the directive: the message event, then run_started, then the agent, each once per turn', () => {
      const starts = events.flatMap((event, at) => (event.type === 'run_started' ? [at] : []));
      assert.equal(starts.length, 3, events.map((e) => e.type).join(', '));
      for (const at of starts) {
        // Right after the directive's own message event, of the same run, and before anything the agent said.
        const said = events[at - 1]!;
        assert.equal(said.type, 'message');
        assert.equal((said.data as { message?: { role?: string } }).message?.role, 'user');
        assert.equal((said.data as { run_id?: string }).run_id, (events[at]!.data as { run_id?: string }).run_id);
      }
    });

    if (kind.name !== 'memory') {
      const kept = kind === embeddedAsStarted;
      it(`${kept ? 'two' : 'five'} SQL statements, the directive one of them (its locks, checks and writes, run_started and the prompt, in one function)${kept ? ', no catalog read, no credential lookup' : ''}`, () => {
        for (const { statements: sent } of turns) {
          assert.equal(sent.length, kept ? STATEMENTS.kept : STATEMENTS.read, `statements before the prompt:\n${sent.join('\n')}`);
          assert.equal(sent.filter((sql) => /^select console_start_turn\(/.test(sql)).length, 1, sent.join('\n'));
          assert.ok(!sent.some((sql) => /^(begin|commit)\b/i.test(sql)), sent.join('\n'));
          if (kept) assert.ok(!sent.some((sql) => /from (agents|projects)\b/.test(sql)), sent.join('\n'));
          if (kept) assert.ok(!sent.some((sql) => /\btoken_hash\b/.test(sql)), sent.join('\n'));
        }
      });
    }
  });
}
