// Issue 42: a webhook delivery lives in the outbox, not in the process. kill -9 of a real service process while a
// delivery waits for its retry (its receiver answered 503), then a restart on the same storage: the delivery is
// sent again and delivered, with the same webhook-id, and never a second time once delivered.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { ask } from '../support/http.ts';
import { forEachFaultStorage, idleThread, startServiceProcess, stopServiceProcess, type FaultStorage } from '../support/fault-service.ts';
import { waitFor } from '../support/wait-for.ts';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };

function killWithPendingDelivery(name: string, storageEnv: FaultStorage) {
  it(`${name}: a delivery waiting for its retry is delivered after kill -9 and a restart, with the same webhook-id`, { timeout: 180_000 }, async (t) => {
    const { env, cleanup } = await storageEnv();
    t.after(cleanup);
    // The receiver refuses (503) until the first service is dead, then takes everything (204).
    let accepting = false;
    const tries: { headers: IncomingHttpHeaders; body: string; status: number }[] = [];
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const status = accepting ? 204 : 503;
        tries.push({ headers: req.headers, body: Buffer.concat(chunks).toString(), status });
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((ready) => receiver.listen(0, '127.0.0.1', ready));
    t.after(() => new Promise<void>((done) => { receiver.closeAllConnections(); receiver.close(() => done()); }));
    const receiverPort = (receiver.address() as AddressInfo).port;
    const serviceEnv = { ...env, WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', AGENT_SANDBOX: 'off' };

    const first = await startServiceProcess(serviceEnv);
    t.after(() => stopServiceProcess(first));
    const created = await ask(first.port, { method: 'POST', path: '/api/console/webhooks', headers: ALICE, body: JSON.stringify({ url: `http://127.0.0.1:${receiverPort}/in`, events: ['run_finished'] }) });
    assert.equal(created.status, 201, created.text);
    const { id, secret } = created.json();
    const directive = await ask(first.port, { method: 'POST', path: `/api/console/threads/${randomUUID()}/directives`, headers: ALICE, body: JSON.stringify({ text: 'Hello', project: 'acme-web' }) });
    assert.equal(directive.status, 202, directive.text);
    const { thread_id: threadId, run_id: runId } = directive.json();
    await idleThread(first.port, threadId, ALICE);
    // Killed once its first try is recorded as failed: the delivery waits, pending, for its retry about 2 s later.
    const read = (port: number) => ask(port, { path: `/api/console/webhooks/${id}`, headers: ALICE }).then((r) => r.json().deliveries as { id: string; status: string; attempts: number }[]);
    await waitFor(async () => (await read(first.port))[0]?.attempts === 1, { what: 'the first try recorded', timeoutMs: 30_000 });
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    accepting = true;
    const before = tries.length;
    assert.ok(before >= 1 && tries.every((x) => x.status === 503));

    const second = await startServiceProcess(serviceEnv);
    t.after(() => stopServiceProcess(second));
    await waitFor(() => tries.some((x) => x.status === 204), { what: 'the delivery after the restart', timeoutMs: 60_000 });
    await waitFor(async () => (await read(second.port))[0]?.status === 'delivered', { what: 'the delivery recorded as delivered', timeoutMs: 10_000 });
    const [delivery] = await read(second.port);
    assert.equal(new Set(tries.map((x) => x.headers['webhook-id'])).size, 1, 'one webhook-id on every try, across the kill');
    assert.equal(tries[0]!.headers['webhook-id'], delivery!.id);
    assert.equal(new Set(tries.map((x) => x.body)).size, 1, 'one body on every try');
    const payload = new StandardWebhook(secret).verify(tries.at(-1)!.body, tries.at(-1)!.headers as Record<string, string>) as Record<string, unknown>;
    assert.deepEqual([payload['type'], payload['thread_id'], payload['run_id']], ['run_finished', threadId, runId]);
    assert.equal(delivery!.attempts, tries.length);
    // Delivered once: a later event's delivery comes after it, and the first is not among what came since.
    const next = await ask(second.port, { method: 'POST', path: `/api/console/threads/${threadId}/directives`, headers: ALICE, body: JSON.stringify({ text: 'Again' }) });
    assert.equal(next.status, 202, next.text);
    await waitFor(() => tries.some((x) => x.headers['webhook-id'] !== delivery!.id), { what: "the next run's delivery", timeoutMs: 60_000 });
    assert.equal(tries.filter((x) => x.headers['webhook-id'] === delivery!.id && x.status === 204).length, 1, 'delivered exactly once');
  });
}

describe('kill -9 with a webhook delivery pending, then a restart', () => {
  forEachFaultStorage(killWithPendingDelivery);
});
