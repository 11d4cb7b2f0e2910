import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAcpAgentRunner } from '../../adapters/acp/agent-runner.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import type { AgentRunner } from '../../ports/agent-runner.ts';
import type { Storage } from '../../ports/storage.ts';
import { createLogger } from '../../src/logging.ts';
import { connectLive, type LiveClient } from '../support/live-client.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { startService, type TestService } from '../support/service.ts';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };

/** One storage call: its name, and how many calls had answered when it began. */
interface Call {
  readonly name: string;
  readonly after: number;
}

/**
 * Storage that records every call of its stores, each answered one macrotask late (as a database's
 * round trip is): calls made together overlap, calls made one after another do not.
 */
function countingStorage(inner: Storage): { storage: Storage; calls: Call[]; answered: () => number } {
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
            calls.push({ name, after: answered });
            const late = <T>(settle: () => T) => new Promise<T>((resolve) => setImmediate(() => resolve(settle())));
            return result.then(
              (v) => late(() => ((answered += 1), v)),
              (error: unknown) => late(() => ((answered += 1), Promise.reject(error))).then((v) => v),
            );
          };
        }
        if (value !== null && typeof value === 'object' && prefix === '') return wrap(value, `${name}.`);
        return value;
      },
    });
  return { storage: wrap(inner, '') as Storage, calls, answered: () => answered };
}

/** Round trips one after another: calls that began with the same number of calls answered went together. */
const roundTrips = (calls: readonly Call[]) => new Set(calls.map((call) => call.after)).size;

/**
 * How many storage round trips a directive waits for before its agent is prompted (issue 28: a turn's
 * overhead). Each is a database round trip on PGlite and PostgreSQL; one more here is a slower turn.
 * Counted, not timed: the speed itself is bench/turn-overhead.ts's.
 */
describe('a directive on a continued thread: storage round trips before the prompt', () => {
  let service: TestService;
  let counting: ReturnType<typeof countingStorage>;
  /** The calls made before the runner was asked for the turn, and how many of them had answered then, for each turn. */
  const beforePrompt: { calls: Call[]; answered: number }[] = [];
  let mark = 0;
  let answeredAtMark = 0;

  before(async () => {
    const inner = createMemoryStorage();
    await inner.importWorld(fixtureWorld());
    counting = countingStorage(inner);
    const acp = createAcpAgentRunner({ log: createLogger('fatal'), env: process.env });
    const runner: AgentRunner = {
      ...acp,
      runTurn: (request) => {
        beforePrompt.push({ calls: counting.calls.slice(mark), answered: counting.answered() - answeredAtMark });
        return acp.runTurn(request);
      },
      setMode: acp.setMode.bind(acp),
      close: acp.close.bind(acp),
    };
    // A long lease: no renewal or sweep runs beside the turn.
    service = await startService({ TURN_LEASE_MS: '3600000' }, { storage: counting.storage, runner, offers: acp.offers });
  });
  after(() => service.close());

  it('waits for five round trips: auth, the thread with its conversation and the agents, the project, the directive, the run started', async () => {
    const key = crypto.randomUUID();
    const socket = (await connectLive(service.port, { thread: key, after: '0' })) as LiveClient;
    const post = async (path: string, body: unknown) => {
      const res = await service.ask({ method: 'POST', path: `/api/console/threads/${path}/directives`, headers: ALICE, body: JSON.stringify(body) });
      assert.equal(res.status, 202, res.text);
      return res.json() as { thread_id: string };
    };
    const asleep = (count: number) => socket.until((events) => events.filter((e) => e.type === 'reflex_asleep').length === count);
    // The first directive makes the thread and the agent's session; the next ones continue both.
    const { thread_id } = await post(key, { text: 'First', model: 'claude:opus', project: 'acme-web' });
    await asleep(1);
    for (let turn = 2; turn <= 3; turn++) {
      // The turn before hands the thread over just after its last event.
      await new Promise((resolve) => setTimeout(resolve, 50));
      mark = counting.calls.length;
      answeredAtMark = counting.answered();
      await post(thread_id, { text: `Turn ${turn}` });
      await asleep(turn);
    }
    socket.close();
    assert.equal(beforePrompt.length, 3);
    for (const { calls, answered } of beforePrompt.slice(1)) {
      const names = calls.map((call) => call.name);
      for (const name of ['writer.writeDirective', 'events.append', 'writer.appendModelMessage']) assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
      // What goes together is still all stored first: run_started (before anything the agent does) and the prompt's model message.
      assert.equal(answered, calls.length, 'every write before the prompt had answered when the runner was asked');
      assert.equal(roundTrips(calls), 5, `round trips before the prompt: ${calls.map((c) => `${c.name}@${c.after}`).join(', ')}`);
    }
  });
});
