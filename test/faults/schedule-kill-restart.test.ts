// Issue 42: each due time fires exactly once across restarts. A look opens its fires' threads together (one write),
// then marks the fires done. Here the instance is held between the two (a trigger makes the done mark wait), killed
// with -9 there, and its database session ended; a second instance on the same PostgreSQL, once the fires' lease is
// over, claims them again, sends them again (the write finds their threads, the one-by-one path answers each by its
// `message_id`) and marks them done: each due time has one thread, one directive and one run.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import pg from 'pg';
import { ask } from '../support/http.ts';
import { forEachFaultStorage, startServiceProcess, stopServiceProcess, type FaultStorage } from '../support/fault-service.ts';
import { waitFor } from '../support/wait-for.ts';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const TOKEN = 'fault-metrics-token-0123456789';
const SCHEDULES = 3;

function killBetweenOpenAndDone(name: string, storageEnv: FaultStorage) {
  // The hold is a trigger in the database: PostgreSQL only.
  if (name !== 'postgres') return;
  it(`${name}: fires whose threads were opened by an instance killed before it marked them done are sent again and run once`, { timeout: 180_000 }, async (t) => {
    const { env, cleanup } = await storageEnv();
    t.after(cleanup);
    const serviceEnv = { ...env, AGENT_SANDBOX: 'off', METRICS_TOKEN: TOKEN };
    const first = await startServiceProcess(serviceEnv);
    t.after(() => stopServiceProcess(first));
    const db = new pg.Pool({ connectionString: env.DATABASE_URL!, max: 1 });
    t.after(() => db.end());
    // The terminate below can end this pool's idle connection too: the pool opens another on its next query.
    (db as unknown as { on(event: 'error', listener: () => void): void }).on('error', () => {});
    // A fire's done mark waits (a delete of schedule_fires sleeps) until the test ends the session that sent it.
    await db.query(`create function hold_done() returns trigger language plpgsql as $$ begin perform pg_sleep(600); return old; end $$`);
    await db.query('create trigger hold_done before delete on schedule_fires for each row execute function hold_done()');

    const at = new Date(Math.ceil((Date.now() + 4_000) / 1000) * 1000);
    const cron = `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} * * *`;
    for (let i = 0; i < SCHEDULES; i++) {
      const made = await ask(first.port, { method: 'POST', path: '/api/console/schedules', headers: ALICE, body: JSON.stringify({ cron, text: `Held fire ${i}`, project: 'acme-web' }) });
      assert.equal(made.status, 201, made.text);
    }
    const count = async (sql: string) => Number(((await db.query(sql)).rows[0] as { n: string }).n);
    const threads = async (port: number) =>
      ((await ask(port, { path: '/api/console/threads?limit=200', headers: ALICE })).json().items as { id: string; title: string }[])
        .filter((thread) => thread.title.startsWith('Held fire'));
    await waitFor(async () => (await threads(first.port)).length === SCHEDULES, { what: 'the look\'s threads opened', timeoutMs: 30_000 });
    await waitFor(async () => (await count("select count(*) as n from pg_stat_activity where query like 'delete from schedule_fires%' and state = 'active'")) > 0,
      { what: 'the done mark held', timeoutMs: 10_000 });

    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    // The held delete's session ends with it (as a dropped connection's does): the delete is rolled back.
    await db.query("select pg_terminate_backend(pid) from pg_stat_activity where query like 'delete from schedule_fires%' and pid <> pg_backend_pid()");
    await db.query('drop trigger hold_done on schedule_fires');
    await waitFor(async () => (await count("select count(*) as n from pg_stat_activity where query like 'delete from schedule_fires%'")) === 0, { what: 'the held delete gone' });
    assert.equal(await count('select count(*) as n from schedule_fires'), SCHEDULES, 'opened, never marked done');
    // Their lease over (as a minute later): the next instance claims them again at its first look.
    await db.query("update schedule_fires set claimed_at = claimed_at - interval '2 minutes'");

    const second = await startServiceProcess(serviceEnv);
    t.after(() => stopServiceProcess(second));
    await waitFor(async () => (await count('select count(*) as n from schedule_fires')) === 0, { what: 'the fires sent again and marked done', timeoutMs: 30_000 });
    const metrics = (await ask(second.port, { path: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).text;
    assert.equal(Number(/^console_schedule_lag_seconds_count (\d+)$/m.exec(metrics)?.[1]), SCHEDULES, 'each sent again by the second instance');
    const found = await threads(second.port);
    assert.equal(found.length, SCHEDULES, 'one thread per due time');
    for (const thread of found) {
      const ledger = (await ask(second.port, { path: `/api/console/threads/${thread.id}/messages?limit=50`, headers: ALICE })).json().items as { role: string; text: string }[];
      assert.deepEqual(ledger.filter((m) => m.role === 'user').map((m) => m.text), [thread.title], `${thread.title}: one directive`);
      const [conversation] = (await ask(second.port, { path: `/api/console/threads/${thread.id}/conversations`, headers: ALICE })).json();
      const runs = (await ask(second.port, { path: `/api/console/threads/${thread.id}/conversations/${conversation.id}/runs?limit=50`, headers: ALICE })).json().items;
      assert.equal(runs.length, 1, `${thread.title}: one run`);
    }
  });
}

describe('kill -9 between a look\'s opened threads and its done mark, then a restart', () => {
  forEachFaultStorage(killBetweenOpenAndDone);
});
