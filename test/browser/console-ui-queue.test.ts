// Follow-ups while the agent works, in Chromium, through the page only, on the service as `npm start` runs it
// (the bundled demo agent): a message sent while a turn asks something is queued under the run, the thread
// list says "1 queued", and it runs in its own turn after the first; a queued message edited runs its new
// text; one removed never runs; "Interrupt and send" cancels the running turn and runs the new one; a full
// queue's refusal shows as the page's other problems do, and the thread list's read counts what waits. Set
// CONSOLE_SCREENSHOTS to a directory to save the queue's screen there (docs/screenshots).
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { findChromium, launchChromium, NO_CHROMIUM } from '../support/chromium.ts';
import { startNpm, type NpmStarted } from '../support/npm-start.ts';

const WAIT = 20_000;
const chromiumPath = findChromium();
// Started at the file's top level: startNpm ends the service when the scope that started it ends.
const started: NpmStarted | null = chromiumPath === null ? null : await startNpm({ DIRECTIVES_PER_MINUTE: '1000' });

describe('queued follow-ups and interrupts in the console UI', { skip: chromiumPath === null ? NO_CHROMIUM : false }, () => {
  let browser: Browser;
  const service = started!;
  let page: Page;
  const errors: Error[] = [];

  before(async () => {
    browser = (await launchChromium())!;
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    page = await context.newPage();
    page.on('pageerror', (error) => errors.push(error));
    await page.goto(`http://localhost:${service.port}/`);
    await page.waitForSelector('#token', { timeout: WAIT });
    await page.fill('#token', 'dev-alice');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForSelector('nav.threads', { timeout: WAIT });
  });
  after(async () => {
    await browser?.close();
  });

  /** Starts a thread from the composer with `text` and answers its id once its run is on the page. */
  async function newThread(text: string): Promise<string> {
    await page.getByRole('link', { name: 'New thread' }).click();
    await page.waitForSelector('#route option:nth-child(2)', { state: 'attached', timeout: WAIT });
    await page.getByLabel('Directive').fill(text);
    await page.getByRole('button', { name: 'Start' }).click();
    await page.waitForFunction(() => /^#\/threads\/[0-9a-f-]{36}$/.test(location.hash), undefined, { timeout: WAIT });
    await page.waitForSelector('article.run[data-status="running"]', { timeout: WAIT });
    return /#\/threads\/(.+)$/.exec(page.url())![1]!;
  }
  const shot = async (name: string) => {
    if (!process.env.CONSOLE_SCREENSHOTS) return;
    mkdirSync(process.env.CONSOLE_SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(process.env.CONSOLE_SCREENSHOTS, `console-${name}.png`) });
  };
  const composer = () => page.getByRole('textbox', { name: 'Message', exact: true });
  const send = async (text: string, button: 'Send' | 'Interrupt and send' = 'Send') => {
    await composer().fill(text);
    await page.getByRole('button', { name: button, exact: true }).click();
  };
  const queued = () => page.locator('section.queue li');
  /** Waits until an assistant reply in the ledger says it worked on `text`. */
  const replied = (text: string) => page.waitForFunction(
    (t) => [...document.querySelectorAll('.ledger li[data-role="assistant"]')].some((li) => li.textContent?.includes(`Working on: ${t}`)), text, { timeout: WAIT });
  /** What the thread shows, top to bottom: each message by its role and first line, each run by its status. */
  const drawn = () => page.locator('section.thread').locator('.ledger li[data-message-id], article.run').evaluateAll((nodes) => nodes.map((node) =>
    node.matches('article.run') ? `run ${node.getAttribute('data-status')}` : `${node.getAttribute('data-role')}: ${node.querySelector('p')?.textContent?.split('\n')[0] ?? ''}`));

  it('queues a follow-up sent while the agent asks something, shows it under the run and "1 queued" in the list, then runs it after the first', { timeout: 90_000 }, async () => {
    const id = await newThread('Write the notes [approval]');
    const ask = page.locator('section.pending[data-kind="approval"]');
    await ask.waitFor({ timeout: WAIT });
    await send('Then tidy up');
    await queued().first().waitFor({ timeout: WAIT });
    assert.deepEqual(await queued().locator('p').allTextContents(), ['Then tidy up']);
    assert.match((await queued().first().textContent()) ?? '', /Queued 1 · you/);
    assert.equal(await composer().inputValue(), '', 'the composer is cleared once queued');
    // The list under the running run, and the message not yet in the ledger.
    assert.ok(await page.evaluate(() => {
      const run = document.querySelector('article.run[data-status="running"]');
      const queue = document.querySelector('section.queue');
      return run !== null && queue !== null && (run.compareDocumentPosition(queue) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0;
    }), 'the queue is drawn under the running run');
    assert.deepEqual(await page.locator('.ledger li[data-role="user"] p').allTextContents(), ['Write the notes [approval]']);
    const activity = page.locator(`nav.threads a[data-thread-id="${id}"] .activity`);
    await page.waitForFunction((t) => /\b1 queued\b/.test(document.querySelector(`nav.threads a[data-thread-id="${t}"] .activity`)?.textContent ?? ''), id, { timeout: WAIT });
    await shot('queue');

    await ask.getByRole('button', { name: 'Allow' }).click();
    await replied('Then tidy up');
    await page.waitForSelector('button.cancel', { state: 'detached', timeout: WAIT });
    assert.equal(await queued().count(), 0);
    await page.waitForFunction((t) => !/queued/.test(document.querySelector(`nav.threads a[data-thread-id="${t}"]`)?.textContent ?? ''), id, { timeout: WAIT });
    assert.equal(await activity.count(), 0, 'nothing going on any more');
    const expected = [
      'user: Write the notes [approval]', 'run succeeded', 'assistant: Working on: Write the notes [approval]',
      'user: Then tidy up', 'run succeeded', 'assistant: Working on: Then tidy up',
    ];
    assert.deepEqual(await drawn(), expected, 'its own run, after the first turn and its reply');
    await page.reload();
    await page.waitForFunction(() => document.querySelectorAll('article.run[data-status="succeeded"]').length === 2, undefined, { timeout: WAIT });
    assert.deepEqual(await drawn(), expected, 'the same after a reload');
  });

  it('runs the new text of a queued message edited in place', { timeout: 90_000 }, async () => {
    await newThread('Hold on [wait]');
    await send('first draft');
    const item = queued().first();
    await item.waitFor({ timeout: WAIT });
    await item.getByRole('button', { name: 'Edit' }).click();
    await item.getByLabel('Queued message').fill('second draft');
    await item.getByRole('button', { name: 'Save' }).click();
    await page.waitForFunction(() => [...document.querySelectorAll('section.queue li p')].map((p) => p.textContent).join('|') === 'second draft', undefined, { timeout: WAIT });
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await replied('second draft');
    await page.waitForSelector('button.cancel', { state: 'detached', timeout: WAIT });
    const users = await page.locator('.ledger li[data-role="user"] p').allTextContents();
    assert.deepEqual(users, ['Hold on [wait]', 'second draft']);
    assert.ok(!(await page.locator('.ledger').textContent())?.includes('first draft'), 'the old text never ran');
  });

  it('never runs a queued message removed, and the ledger says it was withdrawn', { timeout: 90_000 }, async () => {
    await newThread('Hold on again [wait]');
    await send('never mind this');
    await queued().first().waitFor({ timeout: WAIT });
    await send('but run this');
    await page.waitForFunction(() => document.querySelectorAll('section.queue li').length === 2, undefined, { timeout: WAIT });
    assert.deepEqual(await queued().locator('p').allTextContents(), ['never mind this', 'but run this']);
    await queued().first().getByRole('button', { name: 'Remove' }).click();
    await page.waitForFunction(() => [...document.querySelectorAll('section.queue li p')].map((p) => p.textContent).join('|') === 'but run this', undefined, { timeout: WAIT });
    await page.waitForFunction(() => [...document.querySelectorAll('.ledger li[data-role="system"]')].some((li) => li.textContent?.includes('withdrew a queued message before it ran: "never mind this"')), undefined, { timeout: WAIT });
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await replied('but run this');
    await page.waitForSelector('button.cancel', { state: 'detached', timeout: WAIT });
    const replies = await page.locator('.ledger li[data-role="assistant"] p').allTextContents();
    assert.ok(!replies.some((reply) => reply.includes('never mind this')), `the removed message never ran: ${replies.join(' / ')}`);
    assert.equal(await page.locator('article.run[data-status="succeeded"]').count(), 1, 'one run after the cancelled one');
  });

  it('"Interrupt and send" cancels the running turn and runs the new message next', { timeout: 90_000 }, async () => {
    await newThread('Keep going [wait]');
    assert.equal(await page.getByRole('button', { name: 'Interrupt and send', exact: true }).count(), 1, 'offered while a turn runs');
    await send('Stop, do this instead', 'Interrupt and send');
    await page.waitForSelector('article.run[data-status="cancelled"]', { timeout: WAIT });
    await replied('Stop, do this instead');
    await page.waitForSelector('button.cancel', { state: 'detached', timeout: WAIT });
    assert.equal(await page.getByRole('button', { name: 'Interrupt and send', exact: true }).count(), 0, 'not offered on an idle thread');
    const lines = await drawn();
    assert.deepEqual(lines.filter((line) => line.startsWith('user') || line.startsWith('run')),
      ['user: Keep going [wait]', 'run cancelled', 'user: Stop, do this instead', 'run succeeded']);
  });

  it("shows a full queue's refusal as the page's other problems", { timeout: 90_000 }, async () => {
    const id = await newThread('Busy for a while [wait]');
    // Twenty queued through the API, as another tab would: the page's own Send is the one past the limit.
    const statuses = await page.evaluate(async (thread) => {
      const answers: number[] = [];
      for (let i = 0; i < 20; i++) {
        const res = await fetch(`/api/console/threads/${thread}/directives`, {
          method: 'POST', headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ text: `item ${i}`, message_id: crypto.randomUUID(), when_busy: 'queue' }),
        });
        answers.push(res.status);
      }
      return answers;
    }, id);
    assert.deepEqual(new Set(statuses), new Set([202]));
    await page.waitForFunction(() => document.querySelectorAll('section.queue li').length === 20, undefined, { timeout: WAIT });
    await send('one too many');
    // Said beside the button that was refused, not in a banner at the top of the thread.
    const alert = page.locator('form.composer .actions [role="alert"]');
    await alert.waitFor({ timeout: WAIT });
    assert.match((await alert.textContent()) ?? '', /20 directives queued/);
    assert.equal(await page.locator('section.thread > p[role="alert"]').count(), 0);
    assert.equal(await composer().inputValue(), 'one too many', 'what was typed stays');
    // Left for another thread: the list read again says what waits there.
    const reread = page.waitForResponse((res) => new URL(res.url()).pathname === '/api/console/threads', { timeout: WAIT });
    await page.locator('nav.threads a', { hasText: 'Fix the flaky build' }).click();
    await reread;
    await page.waitForFunction((t) => /running, 20 queued/.test(document.querySelector(`nav.threads a[data-thread-id="${t}"] .activity`)?.textContent ?? ''), id, { timeout: WAIT });
    assert.deepEqual(errors.map(String), []);
  });
});
