// The console UI end to end in Chromium, through the page only, on the service as `npm start` runs it
// (compiled, demo world, the bundled demo agent): sign in with the form, start a thread and watch the run
// stream, approve an `[approval]` ask, switch the posture, cancel a run, and reload mid-run without losing
// anything. Set CONSOLE_SCREENSHOTS to a directory to save the main screens there (docs/screenshots).
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Frame, Page } from 'playwright-core';
import { freePort } from '../support/free-port.ts';
import { findChromium, launchChromium, NO_CHROMIUM } from '../support/chromium.ts';
import { startNpm, type NpmStarted } from '../support/npm-start.ts';

const WAIT = 20_000;
const chromiumPath = findChromium();
// Started at the file's top level: startNpm ends the service when the scope that started it ends.
// On a port known before the start, so the default sandbox origin (sandbox.localhost on that port) is served.
const port = await freePort();
const started: NpmStarted | null = chromiumPath === null ? null
  : await startNpm({ PORT: String(port), ARTIFACT_SANDBOX_ORIGIN: `http://sandbox.localhost:${port}`, ARTIFACT_VIEWER_ORIGIN: `http://localhost:${port}` });

describe('the console UI in Chromium', { skip: chromiumPath === null ? NO_CHROMIUM : false }, () => {
  let browser: Browser;
  const service = started!;
  let page: Page;
  const errors: Error[] = [];

  before(async () => {
    browser = (await launchChromium())!;
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    page = await context.newPage();
    page.on('pageerror', (error) => errors.push(error));
  });
  after(async () => {
    await browser?.close();
  });

  const origin = () => `http://localhost:${service.port}`;
  const shot = async (name: string) => {
    if (!process.env.CONSOLE_SCREENSHOTS) return;
    mkdirSync(process.env.CONSOLE_SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(process.env.CONSOLE_SCREENSHOTS, `console-${name}.png`) });
  };
  const lastRun = () => page.locator('article.run').last();

  it('signs in with the form (the demo token offered in demo mode) and lists the threads', { timeout: 60_000 }, async () => {
    const res = await page.goto(`${origin()}/`);
    assert.match(res!.headers()['content-security-policy'] ?? '', /script-src 'self'/);
    await page.waitForSelector('#token', { timeout: WAIT });
    assert.equal(await page.inputValue('#token'), 'dev-alice');
    await shot('sign-in');
    await page.fill('#token', 'wrong-token');
    await page.press('#token', 'Enter');
    await page.waitForSelector('#sign-in-error:has-text("not accepted")', { timeout: WAIT });
    await page.fill('#token', 'dev-alice');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForSelector('nav.threads li', { timeout: WAIT });
    assert.ok((await page.locator('nav.threads li').count()) >= 1);
    assert.equal(await page.textContent('.who'), 'Alice');
  });

  /** The frame an iframe element matching `selector` in `owner` holds, waited for. */
  async function childFrame(owner: Page | Frame, selector: string): Promise<Frame> {
    const element = await owner.waitForSelector(selector, { state: 'attached', timeout: WAIT });
    const frame = await element.contentFrame();
    assert.ok(frame, `${selector} has a frame`);
    return frame;
  }

  it("opens a ledger message's MCP app inline, in the sandbox, and closes it", { timeout: 60_000 }, async () => {
    const res = await page.goto(`${origin()}/`);
    assert.match(res!.headers()['content-security-policy'] ?? '', /frame-src http:\/\/sandbox\.localhost:\d+;/);
    await page.locator('nav.threads a', { hasText: 'Fix the flaky build' }).click();
    const show = page.getByRole('button', { name: /^Show app: / });
    await show.waitFor({ timeout: WAIT });
    await show.click();
    const proxy = await childFrame(page, '.inline-app .app-frame > iframe');
    assert.match(proxy.url(), /^http:\/\/sandbox\.localhost:\d+\/artifacts\/sandbox\?policy=/);
    const app = await childFrame(proxy, 'iframe');
    // The thread-scoped read's saved input and output reached the app as tool input and result.
    await app.waitForSelector('body[data-initialized="true"][data-city="Paris"][data-summary="Sunny"]', { state: 'attached', timeout: WAIT });
    await page.waitForSelector('.inline-app[data-state="ready"]', { timeout: WAIT });
    assert.ok(!(await page.content()).includes('id="temperature"'), "the app's HTML is never in the console's DOM");
    await shot('artifact');
    await page.getByRole('button', { name: 'Close app' }).click();
    await page.waitForSelector('.inline-app', { state: 'detached', timeout: WAIT });
    assert.equal(await page.getByRole('button', { name: /^Show app: / }).getAttribute('aria-expanded'), 'false');
    assert.deepEqual(errors.map(String), []);
  });

  it('starts a thread from the composer and streams the demo agent run', { timeout: 60_000 }, async () => {
    await page.getByRole('link', { name: 'New thread' }).click();
    await page.waitForSelector('#route option:nth-child(2)', { state: 'attached', timeout: WAIT });
    await page.getByLabel('Directive').fill('Hello from the console [slow]');
    await shot('new-thread');
    await page.getByRole('button', { name: 'Start' }).click();
    await page.waitForFunction(() => /^#\/threads\/[0-9a-f-]{36}$/.test(location.hash), undefined, { timeout: WAIT }).catch(async (error: unknown) => {
      throw new Error(`no thread opened: ${await page.textContent('.new-thread .error')}`, { cause: error });
    });
    await page.waitForSelector('article.run[data-status="running"] .stream:not(:empty)', { timeout: WAIT });
    await page.waitForSelector('.ledger li[data-role="assistant"]', { timeout: WAIT });
    const reply = await page.locator('.ledger li[data-role="assistant"]').last().textContent();
    assert.match(reply ?? '', /Working on: Hello from the console/);
    assert.match(reply ?? '', /turn=1/);
    assert.equal(await page.locator('.ledger li[data-role="user"]').count(), 1);
    await page.waitForSelector('button.cancel', { state: 'detached', timeout: WAIT });
  });

  it('answers an [approval] ask with its options', { timeout: 60_000 }, async () => {
    await page.getByRole('textbox', { name: 'Message', exact: true }).fill('Write the notes [approval]');
    await page.getByRole('button', { name: 'Send' }).click();
    const ask = page.locator('section.pending[data-kind="approval"]');
    await ask.waitFor({ timeout: WAIT });
    assert.match((await ask.locator('.diff .new').textContent()) ?? '', /# Notes/);
    await shot('approval');
    await ask.getByRole('button', { name: 'Allow' }).click();
    await ask.waitFor({ state: 'detached', timeout: WAIT });
    await page.waitForFunction(() => document.querySelectorAll('.ledger li[data-role="assistant"]').length >= 2, undefined, { timeout: WAIT });
    await page.waitForSelector('button.cancel', { state: 'detached', timeout: WAIT });
  });

  it('switches the posture, and the next turn runs in it', { timeout: 60_000 }, async () => {
    await page.waitForSelector('#posture option', { state: 'attached', timeout: WAIT });
    const options = await page.locator('#posture option').allTextContents();
    const current = await page.inputValue('#posture');
    const target = options.find((mode) => mode !== current);
    assert.ok(target !== undefined, `a mode to switch to among ${options.join(', ')}`);
    await page.selectOption('#posture', target);
    await page.waitForFunction((mode) => (document.getElementById('posture') as HTMLSelectElement | null)?.value === mode, target, { timeout: WAIT });
    await page.getByRole('textbox', { name: 'Message', exact: true }).fill('Which mode now?');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.waitForFunction((mode) => [...document.querySelectorAll('.ledger li[data-role="assistant"]')].some((li) => li.textContent?.includes(`mode=${mode}`)), target, { timeout: WAIT });
    await page.waitForSelector('button.cancel', { state: 'detached', timeout: WAIT });
  });

  it('cancels a running turn', { timeout: 60_000 }, async () => {
    await page.getByRole('textbox', { name: 'Message', exact: true }).fill('Wait for me [wait]');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await page.waitForSelector('article.run[data-status="cancelled"]', { timeout: WAIT });
    assert.match((await lastRun().textContent()) ?? '', /cancelled/);
    await page.waitForSelector('button.cancel', { state: 'detached', timeout: WAIT });
  });

  it('loses nothing when the page reloads mid-run', { timeout: 60_000 }, async () => {
    await page.getByRole('textbox', { name: 'Message', exact: true }).fill('Long answer [slow]');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.waitForSelector('article.run[data-status="running"] .stream:not(:empty)', { timeout: WAIT });
    await page.reload();
    await page.waitForFunction(() => [...document.querySelectorAll('.ledger li[data-role="assistant"]')].some((li) => li.textContent?.includes('Working on: Long answer')), undefined, { timeout: WAIT });
    const ids = await page.locator('.ledger li[data-message-id]').evaluateAll((items) => items.map((li) => li.getAttribute('data-message-id')));
    assert.equal(new Set(ids).size, ids.length, 'each message once');
    const users = await page.locator('.ledger li[data-role="user"] p').allTextContents();
    assert.deepEqual(users, ['Hello from the console [slow]', 'Write the notes [approval]', 'Which mode now?', 'Wait for me [wait]', 'Long answer [slow]']);
    await shot('thread');
    assert.deepEqual(errors.map(String), []);
  });

  it('teleports to a chat destination after browsing into a room, warned that private history lands in a shared place', { timeout: 60_000 }, async () => {
    await page.waitForSelector('button.cancel', { state: 'detached', timeout: WAIT });
    const source = /#\/threads\/(.+)$/.exec(page.url())![1]!;
    await page.locator('details.moves > summary').click();
    const general = page.locator('ul.places li[data-place="general"]');
    await general.waitFor({ timeout: WAIT });
    const ops = page.locator('ul.places li[data-place="ops"]');
    assert.equal(await ops.getAttribute('aria-disabled'), 'true');
    assert.match((await ops.textContent()) ?? '', /The agent is not in this room/);
    await general.getByRole('button', { name: 'Open #general' }).click();
    const release = page.locator('ul.places li[data-place="general/release"]');
    await release.waitFor({ timeout: WAIT });
    await release.getByRole('radio').check();
    await page.waitForSelector('.moves .warning', { timeout: WAIT });
    await shot('teleport');
    await page.getByRole('button', { name: 'Teleport' }).click();
    await page.waitForFunction((from) => /^#\/threads\/[0-9a-f-]{36}$/.test(location.hash) && !location.hash.endsWith(from), source, { timeout: WAIT });
    await page.waitForFunction(() => /team-chat/.test(document.querySelector('.thread .meta')?.textContent ?? ''), undefined, { timeout: WAIT });
    const landing = /#\/threads\/(.+)$/.exec(page.url())![1]!;
    // The conversation moved: its history shows at the destination, and the source points there.
    await page.waitForFunction(() => [...document.querySelectorAll('.ledger li[data-role="user"] p')].some((p) => p.textContent === 'Hello from the console [slow]'), undefined, { timeout: WAIT });
    await page.goto(`${origin()}/#/threads/${source}`);
    const moved = page.locator('p.moved');
    await moved.waitFor({ timeout: WAIT });
    assert.match((await moved.textContent()) ?? '', /moved to team-chat/);
    assert.equal(await page.getByRole('button', { name: 'Send' }).isDisabled(), true);
    await moved.getByRole('link').click();
    await page.waitForFunction((to) => location.hash === `#/threads/${to}`, landing, { timeout: WAIT });
  });

  it('summons another agent with a brief and a hint', { timeout: 60_000 }, async () => {
    await page.locator('nav.threads a', { hasText: 'Fix the flaky build' }).click();
    await page.waitForFunction(() => document.getElementById('thread-title')?.textContent === 'Fix the flaky build', undefined, { timeout: WAIT });
    await page.waitForSelector('details.moves', { timeout: WAIT });
    await page.locator('details.moves > summary').click();
    await page.waitForSelector('#summon-route option:nth-child(2)', { state: 'attached', timeout: WAIT }).catch(async (error: unknown) => {
      throw new Error(`no summon route offered: ${await page.locator('details.moves').textContent()}`, { cause: error });
    });
    // Preact sets an option's value as a property, not an attribute.
    const route = await page.locator('#summon-route option').nth(1).evaluate((option) => (option as HTMLOptionElement).value);
    await page.selectOption('#summon-route', route);
    await page.fill('#summon-brief', 'Take over the flaky build');
    await page.fill('#summon-hint', 'second opinion');
    await page.getByRole('button', { name: 'Summon' }).click();
    await page.waitForFunction((r) => [...document.querySelectorAll('.ledger li')].some((li) => li.textContent?.includes(`Handed over to ${r}`)), route, { timeout: WAIT });
    assert.deepEqual(errors.map(String), []);
  });

  /** Starts a thread from the composer with `text` and answers its id once it is open. */
  async function newThread(text: string): Promise<string> {
    await page.getByRole('link', { name: 'New thread' }).click();
    await page.waitForSelector('#route option:nth-child(2)', { state: 'attached', timeout: WAIT });
    await page.getByLabel('Directive').fill(text);
    await page.getByRole('button', { name: 'Start' }).click();
    await page.waitForFunction(() => /^#\/threads\/[0-9a-f-]{36}$/.test(location.hash), undefined, { timeout: WAIT });
    return /#\/threads\/(.+)$/.exec(page.url())![1]!;
  }

  it('the thread list stops saying "running" when the run ends, without a reload, and after the thread is left', { timeout: 60_000 }, async () => {
    const id = await newThread('Hold on [wait]');
    const running = page.locator(`nav.threads a[data-thread-id="${id}"] .activity[data-running="true"]`);
    await running.waitFor({ timeout: WAIT });
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await page.waitForSelector('article.run[data-status="cancelled"]', { timeout: WAIT });
    await running.waitFor({ state: 'detached', timeout: WAIT });
    // Another thread opened: the list is read again, and the row left behind still says what is true.
    const reread = page.waitForResponse((res) => new URL(res.url()).pathname === '/api/console/threads', { timeout: WAIT });
    await page.locator('nav.threads a', { hasText: 'Fix the flaky build' }).click();
    await reread;
    await page.waitForFunction(() => document.getElementById('thread-title')?.textContent === 'Fix the flaky build', undefined, { timeout: WAIT });
    assert.equal(await running.count(), 0);
    assert.equal(await page.locator(`nav.threads a[data-thread-id="${id}"]`).count(), 1);
  });

  it('draws each run beside the message that started it: message 1, run 1, message 2, run 2, live and after a reload', { timeout: 60_000 }, async () => {
    await newThread('First question');
    await page.waitForSelector('.ledger li[data-role="assistant"]', { timeout: WAIT });
    await page.waitForSelector('button.cancel', { state: 'detached', timeout: WAIT });
    await page.getByRole('textbox', { name: 'Message', exact: true }).fill('Second question');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.waitForFunction(() => document.querySelectorAll('.ledger li[data-role="assistant"]').length === 2, undefined, { timeout: WAIT });
    await page.waitForSelector('button.cancel', { state: 'detached', timeout: WAIT });
    // What the thread shows, top to bottom: each message by its role and first line, each run by its status.
    const drawn = () => page.locator('section.thread').locator('.ledger li[data-message-id], article.run').evaluateAll((nodes) => nodes.map((node) =>
      node.matches('article.run') ? `run ${node.getAttribute('data-status')}` : `${node.getAttribute('data-role')}: ${node.querySelector('p')?.textContent?.split('\n')[0] ?? ''}`));
    const expected = [
      'user: First question', 'run succeeded', 'assistant: Working on: First question',
      'user: Second question', 'run succeeded', 'assistant: Working on: Second question',
    ];
    assert.deepEqual(await drawn(), expected);
    await page.reload();
    await page.waitForFunction(() => document.querySelectorAll('article.run[data-status="succeeded"]').length === 2, undefined, { timeout: WAIT });
    assert.deepEqual(await drawn(), expected);
    assert.deepEqual(errors.map(String), []);
  });

  it('forks from a message: the fork opens, says where it came from, and shows the messages up to there', { timeout: 60_000 }, async () => {
    // On the thread the previous case left: two questions, each answered.
    const source = /^#\/threads\/([0-9a-f-]{36})$/.exec(await page.evaluate(() => location.hash))![1]!;
    const firstReply = page.locator('.ledger li[data-role="assistant"]').first();
    assert.match((await firstReply.locator('p').first().textContent()) ?? '', /^Working on: First question/);
    await firstReply.getByRole('button', { name: 'Fork from here' }).click();
    await page.waitForFunction((from) => /^#\/threads\/[0-9a-f-]{36}$/.test(location.hash) && !location.hash.endsWith(from), source, { timeout: WAIT });
    const lineage = page.locator('p.lineage');
    await lineage.waitFor({ timeout: WAIT });
    await page.waitForFunction(() => /Forked from First question at a message/.test(document.querySelector('p.lineage')?.textContent ?? ''), undefined, { timeout: WAIT });
    assert.equal(await lineage.locator('a').getAttribute('href'), `#/threads/${source}`);
    await page.waitForFunction(() => document.querySelectorAll('.ledger li[data-message-id]').length === 2, undefined, { timeout: WAIT });
    const shown = await page.locator('.ledger li[data-message-id]').evaluateAll((nodes) => nodes.map((node) => `${node.getAttribute('data-role')}: ${node.querySelector('p')?.textContent?.split('\n')[0] ?? ''}`));
    assert.deepEqual(shown, ['user: First question', 'assistant: Working on: First question']);
    assert.equal(await page.locator('nav.threads a', { hasText: 'Fork of First question' }).count(), 1, 'in the thread list');
    assert.deepEqual(errors.map(String), []);
  });
});
