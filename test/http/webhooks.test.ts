// CONTRACT section 12, "Webhooks", over HTTP: webhooks created (the URL rule: 422), listed and read without their
// secret, removed by their owner; a run that finishes is POSTed to a receiver on a listed host, signed as
// Standard Webhooks says (checked with the specification's own library); a delivery is sent again on request.
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { F, fixtureWorld } from '../support/fixture-world.ts';
import { idleThread, type Answer } from '../support/http.ts';
import { startService, type TestService } from '../support/service.ts';
import { waitFor } from '../support/wait-for.ts';
import { git, gitRepository, write } from '../support/git-repo.ts';
import { rmSync } from 'node:fs';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const BOB = { authorization: 'Bearer token-bob', 'content-type': 'application/json' };
const W = '/api/console/webhooks';
const TOKEN = 'metrics-token-0123456789';

/** The value of one sample of Prometheus text (`name{labels} value`); null when absent. */
function sample(text: string, line: string): number | null {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? null : Number(found.slice(line.length + 1));
}

const problemOf = (res: Answer, status: number, code: string, path?: string) => {
  assert.equal(res.status, status, res.text);
  assert.equal(res.headers['content-type'], 'application/problem+json', res.text);
  assert.equal(res.json().code, code, res.text);
  if (path !== undefined) assert.deepEqual(res.json().errors.map((e: { path: string }) => e.path), [path], res.text);
};

describe('webhooks', () => {
  let service: TestService;
  let receiver: Server;
  let receiverPort: number;
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  let repo: string;
  before(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString() });
        // A receiver that fails says why in its body: none of it may reach the service's log or its reads.
        if (req.url === '/fail') res.writeHead(500, { 'content-type': 'text/plain' }).end('RECEIVER-BODY-MARKER');
        else res.writeHead(204).end();
      });
    });
    await new Promise<void>((ready) => receiver.listen(0, '127.0.0.1', ready));
    receiverPort = (receiver.address() as AddressInfo).port;
    const storage = createMemoryStorage();
    repo = gitRepository();
    const fixture = fixtureWorld();
    await storage.importWorld({ ...fixture, projects: [...fixture.projects, { name: 'repo-web', directory: null, repo, base: 'main' }] });
    service = await startService({ DIRECTIVES_PER_MINUTE: '100000', WEBHOOK_ALLOWED_HOSTS: 'localhost', METRICS_TOKEN: TOKEN }, { storage });
  });
  after(async () => {
    await service.close();
    receiver.closeAllConnections();
    await new Promise<void>((done) => receiver.close(() => done()));
    rmSync(repo, { recursive: true, force: true });
  });
  const send = (method: string, path: string, body: unknown, headers: Record<string, string> = ALICE) =>
    service.ask({ method, path, headers, body: typeof body === 'string' ? body : JSON.stringify(body) });

  it('refuses a URL that is not https: (http: only to a listed host), names a refused address, or carries credentials: 422 at body.url', async () => {
    problemOf(await send('POST', W, { url: 'http://hooks.example.com/in', events: ['run_finished'] }), 422, 'validation_failed', 'body.url');
    problemOf(await send('POST', W, { url: 'https://10.1.2.3/in', events: ['run_finished'] }), 422, 'validation_failed', 'body.url');
    problemOf(await send('POST', W, { url: 'https://[::1]/in', events: ['run_finished'] }), 422, 'validation_failed', 'body.url');
    problemOf(await send('POST', W, { url: 'https://169.254.169.254/latest/meta-data', events: ['run_finished'] }), 422, 'validation_failed', 'body.url');
    problemOf(await send('POST', W, { url: 'https://user:pw@hooks.example.com/in', events: ['run_finished'] }), 422, 'validation_failed', 'body.url');
    problemOf(await send('POST', W, { url: 'https://hooks.example.com/in', events: ['run_exploded'] }), 422, 'validation_failed');
    problemOf(await send('POST', W, { url: 'https://hooks.example.com/in', events: [] }), 422, 'validation_failed');
    problemOf(await send('POST', W, { url: 'https://hooks.example.com/in', events: ['queued'], thread_ids: [F.bobThread] }), 404, 'thread_unavailable');
    problemOf(await send('POST', W, { url: 'https://hooks.example.com/in', events: ['queued'] }, { 'content-type': 'application/json' }), 401, 'unauthenticated');
  });

  it('a webhook is created with its secret shown once; listed and read by its owner only, never with the secret; removed', async () => {
    const created = await send('POST', W, { url: 'https://hooks.example.com/in', events: ['merged', 'queued'], thread_ids: [F.root, F.shared] });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.headers['cache-control'], 'no-store');
    const { id, secret } = created.json();
    assert.deepEqual(Object.keys(created.json()).sort(), ['id', 'secret']);
    assert.match(secret, /^whsec_/);
    const listed = (await service.ask({ path: W, headers: ALICE }));
    assert.equal(listed.text.includes(secret), false);
    const mine = (listed.json() as { id: string; created_at: string }[]).find((w) => w.id === id);
    assert.deepEqual(mine, { id, url: 'https://hooks.example.com/in', events: ['merged', 'queued'], thread_ids: [F.root, F.shared], enabled: true, created_at: mine?.created_at });
    const read = await service.ask({ path: `${W}/${id}`, headers: ALICE });
    assert.equal(read.status, 200, read.text);
    assert.equal(read.text.includes(secret), false);
    assert.deepEqual(read.json().deliveries, []);
    problemOf(await service.ask({ path: `${W}/${id}`, headers: BOB }), 404, 'webhook_not_found');
    problemOf(await service.ask({ method: 'DELETE', path: `${W}/${id}`, headers: BOB }), 404, 'webhook_not_found');
    assert.equal((await service.ask({ method: 'DELETE', path: `${W}/${id}`, headers: ALICE })).status, 204);
    problemOf(await service.ask({ path: `${W}/${id}`, headers: ALICE }), 404, 'webhook_not_found');
    problemOf(await service.ask({ path: `${W}/not-a-uuid`, headers: ALICE }), 422, 'validation_failed');
  });

  it('a run that finishes is POSTed to a listed host (localhost resolves to loopback), signed; the delivery is shown, and sent again on request with the same webhook-id', async () => {
    const created = await send('POST', W, { url: `http://localhost:${receiverPort}/in`, events: ['run_finished'] });
    assert.equal(created.status, 201, created.text);
    const { id, secret } = created.json();
    const directive = await send('POST', `/api/console/threads/${randomUUID()}/directives`, { text: 'Hello', project: 'acme-web' });
    assert.equal(directive.status, 202, directive.text);
    const { thread_id: threadId, run_id: runId } = directive.json();
    await idleThread(service.port, threadId, ALICE);
    await waitFor(() => received.length >= 1, { what: 'the run_finished delivery', timeoutMs: 15_000 });
    const [first] = received;
    const payload = new StandardWebhook(secret).verify(first!.body, first!.headers as Record<string, string>) as Record<string, unknown>;
    assert.deepEqual([payload['type'], payload['thread_id'], payload['run_id']], ['run_finished', threadId, runId]);
    assert.equal((payload['data'] as { run_id: string }).run_id, runId);
    assert.equal(typeof payload['created_at'], 'string');
    await waitFor(async () => (await service.ask({ path: `${W}/${id}`, headers: ALICE })).json().deliveries[0]?.status === 'delivered', { what: 'the delivery recorded' });
    const [delivery] = (await service.ask({ path: `${W}/${id}`, headers: ALICE })).json().deliveries;
    assert.deepEqual([delivery.id, delivery.type, delivery.attempts, delivery.last_status], [first!.headers['webhook-id'], 'run_finished', 1, 204]);

    const again = await send('POST', `${W}/${id}/deliveries/${delivery.id}/retry`, '');
    assert.equal(again.status, 202, again.text);
    assert.equal(again.json().status, 'pending');
    await waitFor(() => received.length >= 2, { what: 'the delivery sent again', timeoutMs: 15_000 });
    assert.equal(received[1]!.headers['webhook-id'], first!.headers['webhook-id']);
    assert.equal(received[1]!.body, first!.body);
    problemOf(await send('POST', `${W}/${id}/deliveries/${randomUUID()}/retry`, ''), 404, 'webhook_delivery_not_found');
    problemOf(await send('POST', `${W}/${randomUUID()}/deliveries/${delivery.id}/retry`, ''), 404, 'webhook_not_found');
  });

  it('the metrics count tries by outcome, and show the outbox depth and the age of its oldest waiting event', async () => {
    const scrape = async () => (await service.ask({ path: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).text;
    const text = await scrape();
    assert.ok((sample(text, 'console_webhook_deliveries_total{outcome="delivered"}') ?? 0) >= 2, text);
    assert.equal(sample(text, 'console_webhook_outbox_depth'), 0);
    assert.equal(sample(text, 'console_webhook_outbox_oldest_age_seconds'), 0);
    // A webhook whose receiver is not there: its delivery waits, and the gauges say so.
    const created = await send('POST', W, { url: 'http://localhost:1/nowhere', events: ['queued'], thread_ids: [F.root] });
    assert.equal(created.status, 201, created.text);
    const busy = await send('POST', `/api/console/threads/${F.root}/directives`, { text: 'Hold on [wait]' });
    assert.equal(busy.status, 202, busy.text);
    const queued = await send('POST', `/api/console/threads/${F.root}/directives`, { text: 'After that', when_busy: 'queue' });
    assert.equal(queued.status, 202, queued.text);
    await waitFor(async () => (sample(await scrape(), 'console_webhook_deliveries_total{outcome="retrying"}') ?? 0) >= 1, { what: 'a failed try counted', timeoutMs: 15_000 });
    const later = await scrape();
    assert.equal(sample(later, 'console_webhook_outbox_depth'), 1);
    assert.ok((sample(later, 'console_webhook_outbox_oldest_age_seconds') ?? -1) >= 0);
    assert.equal((await send('POST', `/api/console/threads/${F.root}/cancel`, '')).status, 202);
    await idleThread(service.port, F.root, ALICE);
  });

  it("a merge of a thread's changes is told as merged, with its commit, base, strategy and who merged", async () => {
    const created = await send('POST', W, { url: `http://localhost:${receiverPort}/merged`, events: ['merged'] });
    assert.equal(created.status, 201, created.text);
    const { secret } = created.json();
    const directive = await send('POST', `/api/console/threads/${randomUUID()}/directives`, { text: 'Start', project: 'repo-web', model: 'claude:opus' });
    assert.equal(directive.status, 202, directive.text);
    const threadId = directive.json().thread_id as string;
    await idleThread(service.port, threadId, ALICE);
    const row = (await service.ask({ path: `/api/console/threads/${threadId}`, headers: ALICE })).json() as { worktree: { path: string } };
    write(row.worktree.path, 'notes.txt', 'merged notes\n');
    const merged = await send('POST', `/api/console/threads/${threadId}/changes/merge`, { strategy: 'squash', message: 'Add notes' });
    assert.equal(merged.status, 200, merged.text);
    await waitFor(() => received.some((r) => r.headers['webhook-id'] !== undefined && JSON.parse(r.body).type === 'merged'), { what: 'the merged delivery', timeoutMs: 15_000 });
    const delivery = received.find((r) => JSON.parse(r.body).type === 'merged')!;
    const payload = new StandardWebhook(secret).verify(delivery.body, delivery.headers as Record<string, string>) as Record<string, unknown>;
    assert.deepEqual([payload['thread_id'], payload['run_id'], payload['data']], [threadId, null, { commit: git(repo, 'rev-parse', 'main'), base: 'main', strategy: 'squash', by: 'alice' }]);
  });

  it("no secret and no receiver's body reaches the log or a read; a failed try says only its status", async () => {
    const created = await send('POST', W, { url: `http://localhost:${receiverPort}/fail`, events: ['run_finished'], thread_ids: [F.root] });
    assert.equal(created.status, 201, created.text);
    const { id, secret } = created.json();
    const directive = await send('POST', `/api/console/threads/${F.root}/directives`, { text: 'Once more', when_busy: 'queue' });
    assert.equal(directive.status, 202, directive.text);
    await waitFor(async () => (await service.ask({ path: `${W}/${id}`, headers: ALICE })).json().deliveries[0]?.attempts >= 1, { what: 'a failed try', timeoutMs: 30_000 });
    const read = await service.ask({ path: `${W}/${id}`, headers: ALICE });
    assert.deepEqual([read.json().deliveries[0].last_status, read.json().deliveries[0].last_error], [500, 'answered 500']);
    const logged = JSON.stringify(service.logs);
    assert.ok(logged.includes('a webhook delivery failed'), 'the failure is logged');
    assert.equal(logged.includes(secret), false, 'no secret in the log');
    assert.equal(logged.includes('RECEIVER-BODY-MARKER'), false, "no receiver's body in the log");
    assert.equal(read.text.includes('RECEIVER-BODY-MARKER'), false);
    await idleThread(service.port, F.root, ALICE);
  });
});
