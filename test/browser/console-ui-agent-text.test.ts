// An agent's Markdown in Chromium (issue 41): the reply is drawn as Markdown (a highlighted code block, a table,
// a link that opens a new tab with no opener and no referrer), and what a hostile agent writes stays inert: its
// `<script>` never runs, no `<img onerror>` is made, a `javascript:` link is no link. The demo agent answers
// "Working on: <the message>", so the message is what the agent writes back.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { findChromium, launchChromium, NO_CHROMIUM } from '../support/chromium.ts';
import { startFixtureService, type TestService } from '../support/service.ts';

const WAIT = 20_000;
const ALICE: Record<string, string> = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };

const HOSTILE = [
  'Here is the plan.',
  '',
  '<script>window.pwned = "script"</script>',
  '<img src="x" onerror="window.pwned = \'img\'">',
  '[a trap](javascript:window.pwned=\'link\') and [the docs](https://example.com/docs)',
  '',
  '```js',
  'const answer = 42; // <b>bold?</b>',
  '```',
  '',
  '| file | lines |',
  '|------|-------|',
  '| a.ts | 12    |',
].join('\n');

describe("an agent's Markdown in the console UI", { skip: findChromium() === null ? NO_CHROMIUM : false }, () => {
  let service: TestService;
  let browser: Browser;
  let page: Page;
  const errors: Error[] = [];

  before(async () => {
    service = await startFixtureService();
    browser = (await launchChromium())!;
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    await context.addCookies([{ name: 'console_session', value: 'token-alice', domain: 'localhost', path: '/' }]);
    page = await context.newPage();
    page.on('pageerror', (error) => errors.push(error));
  });
  after(async () => {
    await browser?.close();
    await service?.close();
  });

  it('draws code, tables and links, and runs nothing the agent wrote', { timeout: 60_000 }, async () => {
    const res = await service.ask({ method: 'POST', path: `/api/console/threads/${randomUUID()}/directives`, headers: ALICE, body: JSON.stringify({ text: HOSTILE, project: 'acme-web', model: 'claude:opus' }) });
    assert.equal(res.status, 202, res.text);
    const { thread_id: id } = res.json() as { thread_id: string };
    await page.goto(`${service.consoleOrigin}/#/threads/${id}`);
    const reply = page.locator('.ledger li[data-role="assistant"] .markdown').filter({ hasText: 'Working on' }).first();
    await reply.waitFor({ timeout: WAIT });

    assert.equal(await reply.locator('pre code.language-js .hljs-keyword').first().textContent(), 'const', 'the code block is highlighted');
    assert.match((await reply.locator('pre code').textContent()) ?? '', /<b>bold\?<\/b>/, 'markup in code is text');
    assert.deepEqual(await reply.locator('table th').allTextContents(), ['file', 'lines']);
    const docs = reply.getByRole('link', { name: 'the docs' });
    assert.deepEqual([await docs.getAttribute('href'), await docs.getAttribute('target'), await docs.getAttribute('rel')], ['https://example.com/docs', '_blank', 'noopener noreferrer']);

    assert.equal(await page.evaluate(() => (window as { pwned?: unknown }).pwned), undefined, 'no script the agent wrote ran');
    assert.equal(await page.locator('.ledger script, .ledger img, .ledger [onerror]').count(), 0);
    const hrefs = await page.locator('.ledger a').evaluateAll((links) => links.map((a) => a.getAttribute('href') ?? ''));
    assert.ok(hrefs.every((href) => !/^\s*javascript:/i.test(href)), hrefs.join(' '));
    assert.match((await reply.textContent()) ?? '', /<script>window\.pwned = "script"<\/script>/, 'the tag is shown as text');
    assert.deepEqual(errors.map(String), []);
  });
});
