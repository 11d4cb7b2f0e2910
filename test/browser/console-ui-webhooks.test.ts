// The console UI's Automation page, its Webhooks section, in Chromium (contract section 12, "Webhooks"): a webhook
// made through the form (no event ticked: refused beside the button) to a receiver on this machine shows its secret
// once (gone after a reload); a run that finishes is listed under "Deliveries" as delivered, with its tries and the
// status it was answered; "Send again" sends the same webhook-id once more; the webhook is deleted after a confirm.
// A receiver that answers 410 turns its webhook off: the row says so, and "Send again" is refused beside its button.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { findChromium, launchChromium, NO_CHROMIUM } from '../support/chromium.ts';
import { F, fixtureWorld } from '../support/fixture-world.ts';
import { idleThread } from '../support/http.ts';
import { startService, type TestService } from '../support/service.ts';
import { waitFor } from '../support/wait-for.ts';

const WAIT = 20_000;
const ALICE = { authorization: 'Bearer token-alice' };

describe('webhooks in the console UI', { skip: findChromium() === null ? NO_CHROMIUM : false }, () => {
  let service: TestService;
  let browser: Browser;
  let page: Page;
  let receiver: Server;
  let receiverPort: number;
  const received: { path: string; headers: IncomingHttpHeaders }[] = [];
  const errors: Error[] = [];

  before(async () => {
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received.push({ path: req.url ?? '', headers: req.headers });
        res.writeHead(req.url === '/gone' ? 410 : 204).end();
      });
    });
    await new Promise<void>((ready) => receiver.listen(0, '127.0.0.1', ready));
    receiverPort = (receiver.address() as AddressInfo).port;
    const storage = createMemoryStorage();
    await storage.importWorld(fixtureWorld());
    // http: to this machine is refused unless listed (localhost resolves to the receiver's loopback address).
    service = await startService({ WEBHOOK_ALLOWED_HOSTS: 'localhost' }, { storage });
    browser = (await launchChromium())!;
    const context = await browser.newContext({ viewport: { width: 1300, height: 900 } });
    page = await context.newPage();
    page.on('pageerror', (error) => errors.push(error));
    await page.goto(`${service.consoleOrigin}/`);
    await page.fill('#token', 'token-alice');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForSelector('header.top', { timeout: WAIT });
  });
  after(async () => {
    await browser?.close();
    await service?.close();
    receiver?.closeAllConnections();
    await new Promise<void>((done) => (receiver === undefined ? done() : receiver.close(() => done())));
  });

  const api = async (path: string) => (await fetch(`${service.consoleOrigin}${path}`, { headers: ALICE })).json();
  const directive = async (threadId: string, body: Record<string, unknown>) => {
    const sent = await fetch(`${service.consoleOrigin}/api/console/threads/${threadId}/directives`, {
      method: 'POST', headers: { ...ALICE, 'content-type': 'application/json' }, body: JSON.stringify(body),
    });
    assert.equal(sent.status, 202, await sent.clone().text());
    return (await sent.json() as { thread_id: string }).thread_id;
  };

  it('creates a webhook whose secret is shown once, lists its delivery, sends it again with the same webhook-id, and deletes it after a confirm', { timeout: 90_000 }, async () => {
    await page.getByRole('link', { name: 'Automation' }).click();
    await page.waitForSelector('.webhooks .empty', { timeout: WAIT });
    assert.equal(await page.textContent('.webhooks .empty'), 'You have no webhooks.');
    const url = `http://localhost:${receiverPort}/in`;

    // No event ticked: refused beside the button that sent it, naming the field; nothing made.
    await page.fill('#webhook-url', url);
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const refusal = page.locator('.new-webhook-form .actions [role=alert]');
    await refusal.waitFor({ timeout: WAIT });
    assert.match((await refusal.textContent()) ?? '', /^events: /);
    assert.deepEqual(await api('/api/console/webhooks'), []);

    await page.check('#webhook-event-run_finished');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const secretShown = page.locator('.new-webhook code.secret');
    await secretShown.waitFor({ timeout: WAIT });
    assert.equal(await refusal.count(), 0, 'the refusal goes once the form is sent again');
    const secret = (await secretShown.textContent()) ?? '';
    assert.match(secret, /^whsec_/);
    const shown = (await page.textContent('.new-webhook')) ?? '';
    assert.match(shown, /it will not be shown again/);
    assert.match(shown, /Standard Webhooks/);
    const [webhook] = await api('/api/console/webhooks') as { id: string; url: string; events: string[]; thread_ids: string[] | null; enabled: boolean }[];
    assert.deepEqual([webhook!.url, webhook!.events, webhook!.thread_ids, webhook!.enabled], [url, ['run_finished'], null, true]);
    const row = page.locator(`.webhooks tbody[data-webhook-id="${webhook!.id}"]`);
    await row.waitFor({ timeout: WAIT });
    assert.equal(await row.locator('td.url').textContent(), url);
    assert.equal(await row.locator('td.events').textContent(), 'run_finished');
    assert.equal(await row.locator('td.threads').textContent(), 'Every thread you can read');
    assert.equal(await row.locator('td.state').textContent(), 'enabled');

    // Shown once: gone after a reload, the webhook still listed.
    await page.reload();
    await row.waitFor({ timeout: WAIT });
    assert.equal(await page.locator('.new-webhook').count(), 0);
    assert.ok(!(await page.content()).includes(secret), 'the secret is not on the page any more');

    // A run that finishes is sent, and listed under Deliveries as delivered.
    await idleThread(service.port, await directive(randomUUID(), { text: 'Hello', project: 'acme-web' }), ALICE);
    await waitFor(() => received.length >= 1, { what: 'the run_finished delivery', timeoutMs: WAIT });
    const webhookId = received[0]!.headers['webhook-id'];
    await row.getByRole('button', { name: 'Deliveries' }).click();
    assert.equal(await row.getByRole('button', { name: 'Deliveries' }).getAttribute('aria-expanded'), 'true');
    const delivery = row.locator(`.webhook-deliveries tr[data-delivery-id="${webhookId}"]`);
    await row.locator(`.webhook-deliveries tr[data-delivery-id="${webhookId}"][data-status=delivered]`).waitFor({ timeout: WAIT });
    assert.equal(await delivery.locator('td.type code').textContent(), 'run_finished');
    assert.equal(await delivery.locator('td.status').textContent(), 'delivered');
    assert.equal(await delivery.locator('td.attempts').textContent(), '1');
    assert.equal(await delivery.locator('td.last').textContent(), 'answered 204');
    assert.equal(await delivery.locator('td.next-try').textContent(), 'none');

    // Send again: the receiver gets the same webhook-id twice, and the row shows the second try once it is made.
    await delivery.getByRole('button', { name: 'Send again' }).click();
    await waitFor(() => received.length >= 2, { what: 'the delivery sent again', timeoutMs: WAIT });
    assert.equal(received[1]!.headers['webhook-id'], webhookId);
    await row.locator(`.webhook-deliveries tr[data-delivery-id="${webhookId}"][data-status=delivered] td.attempts:text-is("2")`).waitFor({ timeout: WAIT });
    assert.equal(await delivery.locator('[role=alert]').count(), 0);

    // Delete asks first; Cancel keeps it, Yes removes it.
    await row.getByRole('button', { name: `Delete webhook ${url}` }).click();
    await row.getByRole('group', { name: `Delete webhook ${url}?` }).getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await api('/api/console/webhooks') as unknown[]).length, 1);
    await row.getByRole('button', { name: `Delete webhook ${url}` }).click();
    await row.getByRole('button', { name: 'Yes, delete' }).click();
    await page.waitForSelector('.webhooks .empty', { timeout: WAIT });
    assert.deepEqual(await api('/api/console/webhooks'), []);
    assert.deepEqual(errors, []);
  });

  it('a webhook to one thread whose receiver answers 410 is shown turned off, and Send again is refused beside its button', { timeout: 90_000 }, async () => {
    await page.goto(`${service.consoleOrigin}/#/automation`);
    await page.waitForSelector('.webhooks .empty', { timeout: WAIT });
    await page.waitForSelector(`#webhook-thread option[value="${F.root}"]`, { state: 'attached', timeout: WAIT });
    const url = `http://localhost:${receiverPort}/gone`;
    await page.fill('#webhook-url', url);
    await page.check('#webhook-event-run_finished');
    await page.selectOption('#webhook-thread', F.root);
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await page.locator('.new-webhook code.secret').waitFor({ timeout: WAIT });
    const [webhook] = await api('/api/console/webhooks') as { id: string; thread_ids: string[] | null }[];
    assert.deepEqual(webhook!.thread_ids, [F.root]);
    const row = page.locator(`.webhooks tbody[data-webhook-id="${webhook!.id}"]`);
    await row.waitFor({ timeout: WAIT });
    assert.equal(await row.locator('td.threads a').textContent(), 'Fix the build');
    assert.equal(await row.locator('td.threads a').getAttribute('href'), `#/threads/${F.root}`);

    const before = received.length;
    await idleThread(service.port, await directive(F.root, { text: 'Once more', when_busy: 'queue' }), ALICE);
    await waitFor(() => received.length > before, { what: 'the delivery to the receiver that is gone', timeoutMs: WAIT });
    await waitFor(async () => (await api(`/api/console/webhooks/${webhook!.id}`) as { enabled: boolean }).enabled === false, { what: 'the webhook turned off', timeoutMs: WAIT });

    // Opening its deliveries reads the webhook again: the row says it is off without a reload.
    await row.getByRole('button', { name: 'Deliveries' }).click();
    const delivery = row.locator('.webhook-deliveries tr[data-status=failed]');
    await delivery.waitFor({ timeout: WAIT });
    assert.equal(await delivery.locator('td.last').textContent(), 'answered 410: the webhook is turned off');
    await page.waitForSelector(`.webhooks tbody[data-webhook-id="${webhook!.id}"][data-enabled=false]`, { timeout: WAIT });
    assert.match((await row.locator('td.state').textContent()) ?? '', /turned off/);

    await delivery.getByRole('button', { name: 'Send again' }).click();
    const refused = delivery.locator('.row-actions [role=alert]');
    await refused.waitFor({ timeout: WAIT });
    assert.match((await refused.textContent()) ?? '', /turned off/);
    assert.equal(received.filter((r) => r.path === '/gone').length, 1, 'nothing sent again');

    await row.getByRole('button', { name: `Delete webhook ${url}` }).click();
    await row.getByRole('button', { name: 'Yes, delete' }).click();
    await page.waitForSelector('.webhooks .empty', { timeout: WAIT });
    assert.deepEqual(errors, []);
  });
});
