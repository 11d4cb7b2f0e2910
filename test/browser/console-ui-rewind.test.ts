// Rewind in Chromium, through the page only, on the service as `npm start` runs it (the bundled demo agent): on
// a thread with two finished turns the owner presses "Rewind to before this" on the second run, confirms, and
// sees it drawn rewound (live, and read again after a reload), with the ledger's line saying so; a rewound run
// offers no rewind, and none is offered while a turn runs. A refusal shows beside the button, as text. Set
// CONSOLE_SCREENSHOTS to a directory to save the rewound thread's screen there (docs/screenshots).
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

describe('rewind to before a run in the console UI', { skip: chromiumPath === null ? NO_CHROMIUM : false }, () => {
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

  const shot = async (name: string) => {
    if (!process.env.CONSOLE_SCREENSHOTS) return;
    mkdirSync(process.env.CONSOLE_SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(process.env.CONSOLE_SCREENSHOTS, `console-${name}.png`) });
  };
  /** Waits until an assistant reply in the ledger says it worked on `text`, and the turn is over. */
  const replied = async (text: string) => {
    await page.waitForFunction(
      (t) => [...document.querySelectorAll('.ledger li[data-role="assistant"]')].some((li) => li.textContent?.includes(`Working on: ${t}`)), text, { timeout: WAIT });
    await page.waitForSelector('button.cancel', { state: 'detached', timeout: WAIT });
  };
  /** A thread of two finished turns, opened; answers its id. */
  async function twoTurns(first: string, second: string): Promise<string> {
    await page.getByRole('link', { name: 'New thread' }).click();
    await page.waitForSelector('#route option:nth-child(2)', { state: 'attached', timeout: WAIT });
    await page.getByLabel('Directive').fill(first);
    await page.getByRole('button', { name: 'Start' }).click();
    await page.waitForFunction(() => /^#\/threads\/[0-9a-f-]{36}$/.test(location.hash), undefined, { timeout: WAIT });
    await replied(first);
    await page.getByRole('textbox', { name: 'Message', exact: true }).fill(second);
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await replied(second);
    await page.waitForFunction(() => document.querySelectorAll('article.run[data-status="succeeded"]').length === 2, undefined, { timeout: WAIT });
    return /#\/threads\/(.+)$/.exec(page.url())![1]!;
  }
  const runs = () => page.locator('article.run');
  const rewindButton = (index: number) => runs().nth(index).getByRole('button', { name: 'Rewind to before this' });
  /** Each run drawn: whether it reads rewound, and whether it offers a rewind. */
  const drawn = () => runs().evaluateAll((nodes) => nodes.map((node) => ({
    rewound: node.getAttribute('data-rewound') === 'true' && node.querySelector('.rewound-label')?.textContent === 'Rewound',
    offers: [...node.querySelectorAll('button')].some((button) => button.textContent?.trim() === 'Rewind to before this'),
  })));

  it('rewinds to before the second run once confirmed: it is drawn rewound, live and after a reload, and offers no rewind', { timeout: 120_000 }, async () => {
    await twoTurns('Sketch the plan', 'Now write it');
    assert.deepEqual(await drawn(), [{ rewound: false, offers: true }, { rewound: false, offers: true }]);

    await rewindButton(1).click();
    const ask = runs().nth(1).getByRole('group', { name: 'Rewind to before this run?' });
    await ask.getByRole('button', { name: 'Cancel' }).click();
    assert.equal(await runs().nth(1).getAttribute('data-rewound'), null, 'cancelled: nothing is taken back');
    await rewindButton(1).click();
    const answered = page.waitForResponse((res) => res.url().endsWith('/rewind'), { timeout: WAIT });
    await ask.getByRole('button', { name: 'Yes, rewind' }).click();
    assert.equal((await answered).status(), 200);
    await page.waitForSelector('article.run[data-rewound="true"]', { timeout: WAIT });
    await page.waitForFunction(() => [...document.querySelectorAll('.ledger li[data-role="system"]')].some((li) => li.textContent?.includes('The thread was rewound')), undefined, { timeout: WAIT });
    const expected = [{ rewound: false, offers: true }, { rewound: true, offers: false }];
    assert.deepEqual(await drawn(), expected);
    await shot('rewound');
    assert.equal(await page.getByRole('article', { name: 'Run succeeded, rewound' }).count(), 1);
    // The ledger still shows the rewound turn's messages.
    assert.deepEqual(await page.locator('.ledger li[data-role="user"] p').allTextContents(), ['Sketch the plan', 'Now write it']);

    await page.reload();
    await page.waitForFunction(() => document.querySelectorAll('article.run[data-status="succeeded"]').length === 2, undefined, { timeout: WAIT });
    await page.waitForSelector('article.run[data-rewound="true"]', { timeout: WAIT });
    assert.deepEqual(await drawn(), expected, 'the same when read again');
    assert.deepEqual(errors.map(String), []);
  });

  it('offers no rewind while a turn runs, and shows a refusal beside the button as text', { timeout: 120_000 }, async () => {
    await twoTurns('Look around', 'Then summarise');
    await page.getByRole('textbox', { name: 'Message', exact: true }).fill('Hold on [wait]');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.waitForSelector('article.run[data-status="running"]', { timeout: WAIT });
    assert.ok(await rewindButton(0).isDisabled(), 'disabled while a turn runs');
    assert.equal(await runs().nth(2).getByRole('button', { name: 'Rewind to before this' }).count(), 0, 'none on the running run');
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await page.waitForSelector('button.cancel', { state: 'detached', timeout: WAIT });
    await page.waitForFunction(() => [...document.querySelectorAll<HTMLButtonElement>('article.run .rewind button')].every((button) => !button.disabled), undefined, { timeout: WAIT });

    // A refusal, as the route answers one that came between the page's read and the press (a turn started elsewhere).
    await page.route('**/rewind', (route) => route.fulfill({
      status: 409, contentType: 'application/problem+json',
      body: JSON.stringify({ type: 'about:blank', title: 'Conflict', status: 409, code: 'turn_running', detail: '<b>A turn is running</b> on this thread' }),
    }));
    await rewindButton(1).click();
    await runs().nth(1).getByRole('button', { name: 'Yes, rewind' }).click();
    const alert = runs().nth(1).locator('.rewind [role="alert"]');
    await alert.waitFor({ timeout: WAIT });
    assert.equal(await alert.textContent(), '<b>A turn is running</b> on this thread', 'the detail, as text');
    assert.equal(await runs().nth(1).locator('.rewind b').count(), 0);
    assert.equal(await runs().nth(1).getAttribute('data-rewound'), null, 'nothing is drawn rewound');
    await page.unroute('**/rewind');
    assert.deepEqual(errors.map(String), []);
  });
});
