// Issue 25, exactly once: the hand-over that ends a turn and starts the next queued directive commits,
// and then the instance never starts that run (it was killed, or the answer of the commit was lost with its
// connection). Before the fix the next run sat `running` under a lease nobody renewed; when it lapsed the
// sweep failed it with `turn_lease_expired`, and the queued directive never reached the agent: lost.
// Here the commit's answer is lost (the storage throws after the hand-over committed, so the retry finds
// the turn handed over already and starts nothing): the state the database is left in is the one a kill -9
// between "turn ended" and "next one started" leaves. Now the sweep finds the run's prompt still unsent and
// starts it again: every item runs once, in order. On memory, embedded PGlite and (TEST_DATABASE_URL) PostgreSQL.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { WireEvent } from '../../domain/events.ts';
import type { Storage } from '../../ports/storage.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { connectLive, type LiveClient } from '../support/live-client.ts';
import { startService, type TestService } from '../support/service.ts';
import { storageKinds, type OpenedStorage } from '../support/storage-kinds.ts';

const ALICE: Record<string, string> = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const P = '/api/console/threads';
/** Short, so the orphaned run's lease lapses (and is swept) within the test. */
const LEASE_MS = 1_500;

const ofType = (events: readonly WireEvent[], type: string) => events.filter((e) => e.type === type);

/** The storage, whose next hand-over that starts a queued directive commits and then answers an error. */
function losingOneHandOver(storage: Storage): { storage: Storage; lost: () => number } {
  let lost = 0;
  let armed = true;
  const handOverTurn: Storage['writer']['handOverTurn'] = async (runId, lease) => {
    const next = await storage.writer.handOverTurn(runId, lease);
    if (next !== null && armed) {
      armed = false;
      lost += 1;
      throw new Error('the connection was lost before the commit was answered');
    }
    return next;
  };
  const writer = { ...storage.writer, handOverTurn };
  return { storage: Object.assign(Object.create(Object.getPrototypeOf(storage) as object) as Storage, storage, { writer }), lost: () => lost };
}

for (const kind of storageKinds('queue_lost')) {
  describe(`fault: the hand-over to a queued directive commits, and its turn never starts: ${kind.name}`, () => {
    let opened: OpenedStorage;
    let service: TestService;
    let faulty: ReturnType<typeof losingOneHandOver>;
    const sockets: LiveClient[] = [];
    before(async () => {
      opened = await kind.open();
      await opened.storage.importWorld(fixtureWorld());
      faulty = losingOneHandOver(opened.storage);
      service = await startService({ DIRECTIVES_PER_MINUTE: '100000', TURN_LEASE_MS: String(LEASE_MS) }, { storage: faulty.storage });
    });
    after(async () => {
      for (const socket of sockets) socket.close();
      await service?.close();
      await opened?.close();
    });

    it('the orphaned run is swept and started again, not failed: every queued item runs once, in order', { timeout: 60_000 }, async () => {
      const key = randomUUID();
      const socket = (await connectLive(service.port, { thread: key, after: '0' })) as LiveClient;
      sockets.push(socket);
      const send = (ref: string, body: Record<string, unknown>) => service.ask({ method: 'POST', path: `${P}/${ref}/directives`, headers: ALICE, body: JSON.stringify(body) });
      const held = await send(key, { text: 'hold [wait]', model: 'claude:opus' });
      assert.equal(held.status, 202, held.text);
      const threadId = held.json().thread_id as string;
      await socket.until((e) => ofType(e, 'run_started').length === 1);
      const queued: string[] = [];
      for (const text of ['one', 'two']) {
        const res = await send(threadId, { text, when_busy: 'queue' });
        assert.equal(res.status, 202, res.text);
        queued.push(res.json().queued.id);
      }
      assert.equal((await service.ask({ method: 'POST', path: `${P}/${threadId}/cancel`, headers: ALICE })).status, 202);
      // The held turn, then the two items: each to its end (the lost one after its lease lapsed and a sweep).
      const events = await socket.until((e) => ofType(e, 'reflex_asleep').length === 3, LEASE_MS * 20);
      assert.equal(faulty.lost(), 1, 'the hand-over to "one" committed and its answer was lost');
      assert.deepEqual(ofType(events, 'run_error').map((e) => e.data.code), [], 'no run failed (a lapsed, never-sent run is not turn_lease_expired)');
      const runs = ofType(events, 'run_started').map((e) => e.data.run_id as string);
      assert.equal(runs.length, 3);
      const prompts = [];
      for (const run of runs) {
        const page = (await service.ask({ path: `${P}/${threadId}/runs/${run}/messages`, headers: ALICE })).json();
        prompts.push((page.items as { role: string; content: string }[]).filter((m) => m.role === 'user').map((m) => m.content));
      }
      assert.deepEqual(prompts, [['hold [wait]'], ['one'], ['two']], 'each item given to the agent once, in order');
      assert.deepEqual(ofType(events, 'dequeued').map((e) => e.data.id), queued);
      assert.deepEqual(ofType(events, 'run_finished').map((e) => e.data.run_id), runs.slice(1));
      assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1), 'no event lost or doubled');
      const conversation = held.json().conversation_id as string;
      const listed = (await service.ask({ path: `${P}/${threadId}/conversations/${conversation}/runs`, headers: ALICE })).json();
      assert.deepEqual((listed.items as { status: string }[]).map((r) => r.status).sort(), ['cancelled', 'succeeded', 'succeeded']);
      assert.deepEqual((await service.ask({ path: `${P}/${threadId}/queue`, headers: ALICE })).json(), []);
      assert.ok(service.logs.some((line) => line.msg === 'started again a queued directive whose prompt never reached its agent'));
    });
  });
}
