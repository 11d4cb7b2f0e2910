// Threads people can manage (issue 41, item 10) in Chromium: the owner renames a thread in place, a search box
// narrows the thread list, a thread is archived (it leaves the list), found under "Show archived", and brought
// back; the open thread's heading follows a rename; a thread the caller is only a member of offers neither.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { findChromium, launchChromium, NO_CHROMIUM } from '../support/chromium.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { startService, type TestService } from '../support/service.ts';

const WAIT = 20_000;

describe('managing threads in the console UI', { skip: findChromium() === null ? NO_CHROMIUM : false }, () => {
  let service: TestService;
  let browser: Browser;

  before(async () => {
    const storage = createMemoryStorage();
    await storage.importWorld(fixtureWorld());
    service = await startService({}, { storage });
    browser = (await launchChromium())!;
  });
  after(async () => {
    await browser?.close();
    await service?.close();
  });

  it('renames a thread in place, searches the list, archives a thread and brings it back', { timeout: 60_000 }, async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    await context.addCookies([{ name: 'console_session', value: 'token-alice', domain: 'localhost', path: '/' }]);
    const page = await context.newPage();
    const errors: Error[] = [];
    page.on('pageerror', (error) => errors.push(error));
    await page.goto(`${service.consoleOrigin}/`);
    const titles = async () => page.locator('nav.threads li .title').allTextContents();
    const listed = (expected: readonly string[]) =>
      page.waitForFunction((want) => JSON.stringify([...document.querySelectorAll('nav.threads li .title')].map((e) => e.textContent)) === want,
        JSON.stringify(expected), { timeout: WAIT }).catch(async (error: unknown) => {
        throw new Error(`the list shows ${JSON.stringify(await titles())}, not ${JSON.stringify(expected)}`, { cause: error });
      });
    await listed(['Shared with alice', 'Fork of fork', 'Fork', 'Fix the build']);
    assert.equal(await page.getByRole('button', { name: 'Rename Shared with alice' }).count(), 0, "a member's thread: no rename");
    assert.equal(await page.getByRole('button', { name: 'Archive Shared with alice' }).count(), 0, 'nor archive');

    await page.locator('nav.threads a', { hasText: 'Fix the build' }).click();
    await page.waitForFunction(() => document.getElementById('thread-title')?.textContent === 'Fix the build', undefined, { timeout: WAIT });
    await page.getByRole('button', { name: 'Rename Fix the build' }).click();
    const field = page.getByLabel('New title for Fix the build');
    await field.fill('  Fix the CI build ');
    await field.press('Enter');
    await listed(['Shared with alice', 'Fork of fork', 'Fork', 'Fix the CI build']);
    await page.waitForFunction(() => document.getElementById('thread-title')?.textContent === 'Fix the CI build', undefined, { timeout: WAIT });

    await page.getByLabel('Search threads').fill('fork');
    await listed(['Fork of fork', 'Fork']);
    await page.getByLabel('Search threads').fill('ci bui');
    await listed(['Fix the CI build']);
    await page.getByLabel('Search threads').fill('');
    await listed(['Shared with alice', 'Fork of fork', 'Fork', 'Fix the CI build']);

    await page.getByRole('button', { name: 'Archive Fork of fork' }).click();
    await listed(['Shared with alice', 'Fork', 'Fix the CI build']);
    await page.getByLabel('Show archived').check();
    await listed(['Fork of fork']);
    await page.getByRole('button', { name: 'Unarchive Fork of fork' }).click();
    await listed([]);
    await page.getByLabel('Show archived').uncheck();
    await listed(['Shared with alice', 'Fork of fork', 'Fork', 'Fix the CI build']);
    assert.deepEqual(errors.map(String), []);
    await context.close();
  });
});
