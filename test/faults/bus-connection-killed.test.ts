import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import type { WireEvent } from '../../domain/events.ts';
import { faultDatabaseUnavailable, killBusConnections, openFaultDatabase, startInstance } from '../support/fault-cluster.ts';
import { connectLive, typesOf, type LiveClient } from '../support/live-client.ts';

const SKIP = faultDatabaseUnavailable(false);
if (SKIP !== null) console.log(`# bus fault tests skipped: ${SKIP}`);

const asleep = (events: readonly WireEvent[]) => events.some((event) => event.type === 'reflex_asleep');

// The LISTEN connection of every instance is terminated by the server (a restart, a proxy, an
// administrator) just before a run's last events: they are published while instance B listens to
// nothing. Delivery across instances is at most once, so B's sockets must read what they missed.
describe('fault: the PostgreSQL bus connection killed during a run', { skip: SKIP ?? false }, () => {
  it('every socket, on both instances, still gets every event of the run in order, each once', async (t) => {
    // Undone last first (t.after hooks run in the order they were added): sockets, services, database.
    const undo: (() => unknown)[] = [];
    t.after(async () => {
      for (const step of undo.reverse()) await step();
    });
    const database = await openFaultDatabase();
    undo.push(() => database.destroy());
    const a = await startInstance(database);
    undo.push(() => a.close());
    // B comes back a second after the drop: longer than the run has left once the kill is done.
    const b = await startInstance(database, {}, { backoff: { minMs: 1_000, maxMs: 1_000 } });
    undo.push(() => b.close());

    const open = async (port: number, query: Record<string, string>) => {
      const client = await connectLive(port, query);
      assert.ok(!('refused' in client), `socket refused: ${JSON.stringify(client)}`);
      undo.push(async () => {
        (client as LiveClient).close();
        await Promise.race([(client as LiveClient).closed, sleep(2_000)]); // the close handshake, while the service still answers
      });
      return client as LiveClient;
    };
    const direct = async (key: string, text: string) => {
      const res = await a.ask({ method: 'POST', path: `/api/console/threads/${key}/directives`, headers: { authorization: 'Bearer token-alice' }, body: JSON.stringify({ text }) });
      assert.equal(res.status, 202, res.text);
      return res.json().thread_id as string;
    };

    const key = randomUUID();
    const sockets = { onA: await open(a.port, { thread: key, after: '0' }), onB: await open(b.port, { thread: key, after: '0' }) };
    const thread = await direct(key, '[slow] one word at a time');
    // A socket that gives no cursor, opened once the run is under way (it gets what follows).
    await sockets.onB.until((events) => events.some((event) => event.type === 'run_started'));
    const noCursor = await open(b.port, { thread });
    await sleep(100);
    // The agent's last line: 300 ms before run_finished and reflex_asleep. Cut both instances off now.
    await sockets.onB.until((events) => events.some((event) => JSON.stringify(event.data).includes('[demo] mode=')));
    assert.ok((await killBusConnections(database)) >= 2, 'both LISTEN connections were found and ended');
    // A new key's first directive while B is cut off: its thread_created signal and every event are lost to B.
    const lateKey = randomUUID();
    const late = await open(b.port, { thread: lateKey, after: '0' });
    const lateThread = await direct(lateKey, 'Say hello');

    for (const [name, socket] of Object.entries({ ...sockets, noCursor, late })) {
      const events = await socket.until(asleep, 15_000).catch((error: Error) => assert.fail(`${name}: ${error.message}`));
      await sleep(name === 'late' ? 0 : 200); // nothing may follow: a doubled event would show here
      const stored = await database.execute(
        `select seq, type from events where thread_id = '${name === 'late' ? lateThread : thread}' order by seq`) as { seq: number; type: string }[];
      const from = events[0]!.seq;
      assert.deepEqual(socket.events.map((event) => [event.seq, event.type]), stored.filter((row) => row.seq >= from).map((row) => [row.seq, row.type]), `${name}: every stored event from its first, in order, each once`);
      assert.equal(typesOf(socket.events).at(-1), 'reflex_asleep', name);
      if (name !== 'noCursor') assert.equal(from, 1, `${name}: from the first event`);
    }
  });
});
