// Issue 42: a webhook delivery survives PostgreSQL going away (a private cluster of this test's own, never the
// machine's). Its receiver refuses the first try (503); the database is stopped while the delivery waits for its
// retry and started again: the retry goes out once it is back, with the same webhook-id, and is recorded delivered.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { faultDatabaseUnavailable, openFaultDatabase, startInstance, type FaultDatabase } from '../support/fault-cluster.ts';
import { waitFor } from '../support/wait-for.ts';

const SKIP = faultDatabaseUnavailable(true);
if (SKIP !== null) console.log(`# PostgreSQL restart fault test (webhooks) skipped: ${SKIP}`);
const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };

/** The rows of one statement, or null while the database is away. */
const rows = <T>(database: FaultDatabase, sql: string) => database.execute(sql).then((r) => r as T[], () => null);

describe('fault: PostgreSQL stopped and started while a webhook delivery waits for its retry', { skip: SKIP ?? false }, () => {
  it('the delivery goes out once the database is back, with the same webhook-id, and is recorded delivered', { timeout: 180_000 }, async (t) => {
    const undo: (() => unknown)[] = [];
    t.after(async () => {
      for (const step of undo.reverse()) await step();
    });
    let accepting = false;
    const tries: { headers: IncomingHttpHeaders; status: number }[] = [];
    const receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const status = accepting ? 204 : 503;
        tries.push({ headers: req.headers, status });
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((ready) => receiver.listen(0, '127.0.0.1', ready));
    undo.push(() => new Promise<void>((done) => { receiver.closeAllConnections(); receiver.close(() => done()); }));
    const database = await openFaultDatabase();
    undo.push(() => database.destroy());
    const cluster = database.cluster!;
    const service = await startInstance(database, { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', DIRECTIVES_PER_MINUTE: '100000' });
    undo.push(() => service.close());
    undo.push(() => cluster.start().catch(() => {}));

    const port = (receiver.address() as AddressInfo).port;
    const created = await service.ask({ method: 'POST', path: '/api/console/webhooks', headers: ALICE, body: JSON.stringify({ url: `http://127.0.0.1:${port}/in`, events: ['run_finished'] }) });
    assert.equal(created.status, 201, created.text);
    const directive = await service.ask({ method: 'POST', path: `/api/console/threads/${randomUUID()}/directives`, headers: ALICE, body: JSON.stringify({ text: 'Hello', project: 'acme-web' }) });
    assert.equal(directive.status, 202, directive.text);
    await waitFor(async () => (await rows<{ attempts: number }>(database, 'select attempts from webhook_deliveries'))?.[0]?.attempts === 1, { what: 'the first try recorded', timeoutMs: 60_000 });

    await cluster.stop();
    // Every look meanwhile fails (logged); the receiver would take it now, but nothing can be claimed.
    accepting = true;
    await sleep(3_000);
    await cluster.start();

    await waitFor(async () => (await rows<{ status: string }>(database, 'select status from webhook_deliveries'))?.[0]?.status === 'delivered', { what: 'the delivery recorded as delivered after the restart', timeoutMs: 60_000 });
    const [row] = (await rows<{ id: string; attempts: number }>(database, 'select id, attempts from webhook_deliveries'))!;
    assert.equal(new Set(tries.map((x) => x.headers['webhook-id'])).size, 1, 'one webhook-id on every try');
    assert.equal(tries[0]!.headers['webhook-id'], row!.id);
    assert.equal(tries.filter((x) => x.status === 204).length, 1, 'delivered once');
    assert.equal(row!.attempts, tries.length);
  });
});
