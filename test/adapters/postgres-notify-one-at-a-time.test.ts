import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { openNotifyConnection } from '../../adapters/postgres/notify-connection.ts';

const url = process.env.TEST_DATABASE_URL;

/** pg's Client, whose `query` the connection sends its NOTIFYs through. */
const pgClient = (createRequire(import.meta.url)('pg') as { Client: { prototype: { query: (...args: unknown[]) => unknown } } }).Client.prototype;

// Many directives at once (a burst of schedules, concurrent requests) each NOTIFY on the bus's one connection: pg
// deprecates a second query on a client already running one (pg 9 drops it), so they go one at a time, in order.
describe('the LISTEN/NOTIFY connection', { skip: url ? false : 'TEST_DATABASE_URL is not set' }, () => {
  it('sends concurrent NOTIFYs one at a time on its client, each heard, in the order they were asked', async () => {
    const original = pgClient.query;
    const running = new Map<unknown, number>();
    let most = 0;
    pgClient.query = function (this: unknown, ...args: unknown[]) {
      const now = (running.get(this) ?? 0) + 1;
      running.set(this, now);
      most = Math.max(most, now);
      const result = original.apply(this, args) as Promise<unknown>;
      const done = () => void running.set(this, (running.get(this) ?? 1) - 1);
      result.then(done, done);
      return result;
    };
    const heard: string[] = [];
    const channel = `one_at_a_time_${process.pid}`;
    const connection = await openNotifyConnection({ url: url!, channels: [channel], onNotification: (_, payload) => heard.push(payload), onError: () => {}, onReconnect: () => {} });
    try {
      const asked = Array.from({ length: 30 }, (_, i) => `payload ${i}`);
      await Promise.all(asked.map((payload) => connection.notify(channel, [payload])));
      for (let i = 0; i < 100 && heard.length < asked.length; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.deepEqual(heard, asked);
      assert.equal(most, 1, 'never two queries at once on the connection');
    } finally {
      pgClient.query = original;
      await connection.close();
    }
  });
});
