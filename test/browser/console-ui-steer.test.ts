// Steering in Chromium, through the page only, on the service as `npm start` runs it (the bundled demo agent,
// whose claude profile steers and whose codex profile does not): while a turn runs, Steer sits beside Send and
// sends the message into that turn (the agent says it took it, no run of its own, nothing queued); a turn that
// asks something, or an agent that does not steer, offers no Steer (Send queues, as before).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { findChromium, launchChromium, NO_CHROMIUM } from '../support/chromium.ts';
import { startNpm, type NpmStarted } from '../support/npm-start.ts';

const WAIT = 20_000;
const chromiumPath = findChromium();
// Started at the file's top level: startNpm ends the service when the scope that started it ends.
const started: NpmStarted | null = chromiumPath === null ? null : await startNpm({ DIRECTIVES_PER_MINUTE: '1000' });

describe('Steer in the console UI', { skip: chromiumPath === null ? NO_CHROMIUM : false }, () => {
  let browser: Browser;
  const service = started!;
  let page: Page;
  const errors: Error[] = [];

  before(async () => {
    browser = (await launchChromium())!;
    page = await (await browser.newContext({ viewport: { width: 1200, height: 900 } })).newPage();
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

  /** Starts a thread on `route` (the first one offered when null) with `text`, once its run is on the page. */
  async function newThread(text: string, route: string | null = null): Promise<void> {
    await page.getByRole('link', { name: 'New thread' }).click();
    await page.waitForSelector('#route option:nth-child(2)', { state: 'attached', timeout: WAIT });
    if (route !== null) await page.selectOption('#route', route);
    await page.getByLabel('Directive').fill(text);
    await page.getByRole('button', { name: 'Start' }).click();
    await page.waitForFunction(() => /^#\/threads\/[0-9a-f-]{36}$/.test(location.hash), undefined, { timeout: WAIT });
    await page.waitForSelector('article.run[data-status="running"]', { timeout: WAIT });
  }
  const composer = () => page.getByRole('textbox', { name: 'Message', exact: true });
  const steerButton = () => page.getByRole('button', { name: 'Steer', exact: true });

  it('Steer sends the message into the running turn: the agent takes it in that turn, no run of its own, nothing queued', { timeout: 90_000 }, async () => {
    await newThread('Hold for a steer [await-steer]');
    await steerButton().waitFor({ timeout: WAIT });
    // The agent has the prompt (its first words are on the page): a steer sent before would be no steer but the next
    // directive, queued behind a turn that waits for one (the adapter steers only a turn in flight).
    await page.waitForFunction(() => document.querySelector('article.run')?.textContent?.includes('Working on: Hold for a steer') === true, undefined, { timeout: WAIT });
    await composer().fill('Mind the tests');
    await steerButton().click();
    await page.waitForFunction(() => [...document.querySelectorAll('.ledger li[data-role="assistant"]')].some((li) => li.textContent?.includes('Steered: Mind the tests')), undefined, { timeout: WAIT });
    await page.waitForSelector('button.cancel', { state: 'detached', timeout: WAIT });
    assert.equal(await page.locator('article.run').count(), 1, 'one run: the steer started none');
    assert.equal(await page.locator('section.queue li').count(), 0);
    assert.deepEqual(await page.locator('.ledger li[data-role="user"] p').allTextContents(), ['Hold for a steer [await-steer]', 'Mind the tests']);
    assert.equal(await steerButton().count(), 0, 'no Steer once nothing runs');
    assert.deepEqual(errors, []);
  });

  it('no Steer while the turn asks something, nor for an agent that does not steer: Send queues', { timeout: 90_000 }, async () => {
    await newThread('Write the notes [approval]');
    const ask = page.locator('section.pending[data-kind="approval"]');
    await ask.waitFor({ timeout: WAIT });
    // The posture picker comes with what the agent offers, steering included: read by then.
    await page.locator('#posture').waitFor({ timeout: WAIT });
    await page.getByRole('button', { name: 'Interrupt and send' }).waitFor({ timeout: WAIT });
    assert.equal(await steerButton().count(), 0, 'a turn waiting on an approval is not steered');
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await page.waitForSelector('button.cancel', { state: 'detached', timeout: WAIT });

    await newThread('Hold on [wait]', 'codex:gpt-5-codex');
    await page.locator('#posture').waitFor({ timeout: WAIT });
    await page.getByRole('button', { name: 'Interrupt and send' }).waitFor({ timeout: WAIT });
    assert.equal(await steerButton().count(), 0, 'the codex profile does not steer');
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await page.waitForSelector('button.cancel', { state: 'detached', timeout: WAIT });
    assert.deepEqual(errors, []);
  });
});
