// The console UI's Automation page in Chromium (contract section 12, issue 42): a schedule created through the
// form is listed with its expression, zone, text, thread and next run, a bad expression is refused beside the
// button that sent it, and it is disabled and deleted from its row; a hook created through the form shows its URL
// and its secret once (gone after a reload), the secret works, the directive it sends is labelled "from hook <id>"
// in its thread, and the hook is deleted from its row. Untrusted text stays text.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { findChromium, launchChromium, NO_CHROMIUM } from '../support/chromium.ts';
import { F, fixtureWorld } from '../support/fixture-world.ts';
import { idleThread } from '../support/http.ts';
import { manualClock } from '../support/manual-clock.ts';
import { startService, type TestService } from '../support/service.ts';
import { waitFor } from '../support/wait-for.ts';

const WAIT = 20_000;
/** A directive's text that would run script if it were ever put in the page as HTML. */
const HOSTILE = '<img src=x onerror="window.__pwned=1"> standup';
const ALICE = { authorization: 'Bearer token-alice' };

describe('schedules and hooks in the console UI', { skip: findChromium() === null ? NO_CHROMIUM : false }, () => {
  let service: TestService;
  let browser: Browser;
  let page: Page;
  const errors: Error[] = [];
  // The service's time, moved by hand to a schedule's due time (it starts at the browser's, so cookies hold).
  const clock = manualClock(Date.now());

  before(async () => {
    const storage = createMemoryStorage();
    await storage.importWorld(fixtureWorld());
    service = await startService({}, { storage, clock });
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
  });

  const api = async (path: string) => (await fetch(`${service.consoleOrigin}${path}`, { headers: ALICE })).json();

  it('creates a schedule to a thread, refuses a bad expression beside its button, labels its directive with its cron, disables and deletes it', { timeout: 90_000 }, async () => {
    await page.getByRole('link', { name: 'Automation' }).click();
    await page.waitForSelector('.schedules .empty', { timeout: WAIT });
    assert.equal(await page.textContent('.schedules .empty'), 'You have no schedules.');
    await page.waitForSelector(`#schedule-thread option[value="${F.root}"]`, { state: 'attached', timeout: WAIT });

    // A bad expression: refused beside the button that sent it, nothing made.
    await page.fill('#schedule-cron', '61 * * * *');
    await page.fill('#schedule-text', 'never');
    await page.getByRole('button', { name: 'Create schedule' }).click();
    const refusal = page.locator('.new-schedule .actions [role=alert]');
    await refusal.waitFor({ timeout: WAIT });
    assert.match((await refusal.textContent()) ?? '', /^cron: /);
    assert.deepEqual(await api('/api/console/schedules'), []);

    await page.fill('#schedule-cron', '*/5 * * * *');
    await page.fill('#schedule-timezone', 'Europe/Berlin');
    await page.selectOption('#schedule-thread', F.root);
    assert.equal(await page.locator('#schedule-project').count(), 0, 'a thread has its project already');
    await page.fill('#schedule-text', HOSTILE);
    await page.getByRole('button', { name: 'Create schedule' }).click();
    const row = page.locator('.schedules tbody tr');
    await row.waitFor({ timeout: WAIT });
    assert.equal(await refusal.count(), 0, 'the refusal goes once the form is sent again');
    const [stored] = await api('/api/console/schedules') as { id: string; enabled: boolean; thread_id: string; next_run_at: string }[];
    assert.equal(stored!.thread_id, F.root);
    assert.equal(await row.getAttribute('data-schedule-id'), stored!.id);
    assert.equal(await row.locator('td.cron').textContent(), '*/5 * * * *');
    assert.equal(await row.locator('td.timezone').textContent(), 'Europe/Berlin');
    assert.equal(await row.locator('td.text').textContent(), HOSTILE, 'the text is shown as text');
    assert.equal(await page.locator('.automation img').count(), 0, 'no element made of the text');
    assert.equal(await row.locator('td.target a').textContent(), 'Fix the build');
    assert.equal(await row.locator('td.target a').getAttribute('href'), `#/threads/${F.root}`);
    assert.equal(await row.locator('td.state').textContent(), 'enabled');
    assert.equal(await row.locator('td.next-run time').getAttribute('datetime'), stored!.next_run_at);

    // Its due time sends its text to the thread, labelled with where it came from.
    await clock.advance(Date.parse(stored!.next_run_at) - clock.now());
    // Claimed once sent: its next due time moves on (a look at the due time itself may still be busy with the one before).
    await waitFor(async () => {
      const [now] = await api('/api/console/schedules') as { next_run_at: string }[];
      if (now!.next_run_at !== stored!.next_run_at) return true;
      await clock.advance(1_000);
      return false;
    }, { timeoutMs: WAIT, everyMs: 100, what: "the schedule's due time" });
    await page.goto(`${service.consoleOrigin}/#/threads/${F.root}`);
    const label = page.locator('.ledger li[data-role=user] .origin[data-origin-kind=schedule]');
    await label.waitFor({ timeout: WAIT });
    assert.equal(await label.textContent(), 'from schedule */5 * * * *');
    assert.equal(await label.getAttribute('data-origin-id'), stored!.id);
    assert.equal(await page.locator('.ledger li[data-role=user]:has(.origin[data-origin-kind=schedule]) > p').textContent(), HOSTILE);
    assert.equal(await page.locator('.ledger img').count(), 0);
    await page.goto(`${service.consoleOrigin}/#/automation`);
    await row.waitFor({ timeout: WAIT });

    await row.getByRole('button', { name: 'Disable schedule */5 * * * *' }).click();
    await page.waitForSelector('.schedules tbody tr[data-enabled=false]', { timeout: WAIT });
    assert.equal(await row.locator('td.state').textContent(), 'disabled');
    assert.equal((await api('/api/console/schedules') as { enabled: boolean }[])[0]!.enabled, false);

    // Delete asks first: Cancel keeps it, "Yes, delete" removes it.
    await row.getByRole('button', { name: 'Delete schedule */5 * * * *' }).click();
    await row.getByRole('group', { name: 'Delete schedule */5 * * * *?' }).getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await api('/api/console/schedules') as unknown[]).length, 1, 'kept on Cancel');
    await row.getByRole('button', { name: 'Delete schedule */5 * * * *' }).click();
    await row.getByRole('button', { name: 'Yes, delete' }).click();
    await page.waitForSelector('.schedules .empty', { timeout: WAIT });
    assert.deepEqual(await api('/api/console/schedules'), []);
    assert.deepEqual(errors, []);
  });

  it('creates a hook whose secret is shown once and works, labels its directive in the thread, and deletes it', { timeout: 90_000 }, async () => {
    await page.goto(`${service.consoleOrigin}/#/automation`);
    await page.waitForSelector('.hooks .empty', { timeout: WAIT });
    await page.waitForSelector('#hook-project option:text-is("acme-web")', { state: 'attached', timeout: WAIT });
    await page.selectOption('#hook-project', 'acme-web');
    await page.getByRole('button', { name: 'Create hook' }).click();
    const secretShown = page.locator('.new-hook code.secret');
    await secretShown.waitFor({ timeout: WAIT });
    const secret = (await secretShown.textContent()) ?? '';
    assert.match(secret, /^chook_[A-Za-z0-9_-]{43}$/);
    assert.match((await page.textContent('.new-hook')) ?? '', /it will not be shown again/);
    const [hook] = await api('/api/console/hooks') as { id: string; url: string; project: string }[];
    assert.equal(hook!.project, 'acme-web');
    assert.equal(await page.textContent('.new-hook code.url'), hook!.url);
    const row = page.locator(`.hooks tbody tr[data-hook-id="${hook!.id}"]`);
    await row.waitFor({ timeout: WAIT });
    assert.equal(await row.locator('td.url').textContent(), hook!.url);
    assert.equal(await row.locator('td.target').textContent(), 'New thread in acme-web');

    // The secret works, from outside the browser, and the directive it sends says where it came from.
    const called = await fetch(hook!.url, { method: 'POST', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, body: JSON.stringify({ text: 'Deploy finished' }) });
    assert.equal(called.status, 202, await called.clone().text());
    const threadId = (await called.json() as { thread_id: string }).thread_id;
    await idleThread(service.port, threadId, ALICE);

    // Shown once: gone after a reload, the hook still listed.
    await page.reload();
    await row.waitFor({ timeout: WAIT });
    assert.equal(await page.locator('.new-hook').count(), 0);
    assert.ok(!(await page.content()).includes(secret), 'the secret is not on the page any more');

    await page.goto(`${service.consoleOrigin}/#/threads/${threadId}`);
    const label = page.locator('.ledger li[data-role=user] .origin');
    await label.waitFor({ timeout: WAIT });
    assert.equal(await label.textContent(), `from hook ${hook!.id}`);
    assert.equal(await label.getAttribute('data-origin-kind'), 'hook');

    await page.goto(`${service.consoleOrigin}/#/automation`);
    await row.waitFor({ timeout: WAIT });
    await row.getByRole('button', { name: `Delete hook ${hook!.id}` }).click();
    await row.getByRole('button', { name: 'Yes, delete' }).click();
    await page.waitForSelector('.hooks .empty', { timeout: WAIT });
    assert.deepEqual(await api('/api/console/hooks'), []);
    assert.deepEqual(errors, []);
  });
});
