// The console UI's chat links in Chromium (contract section 9, "Linking"): the user asks for a link code
// for a chat channel and sees it with what to send the bot; once the code is redeemed (here through the
// use case the chat adapter calls, over the same storage), a reload shows the linked address, which the
// user removes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { channelLinking } from '../../core/channels/links.ts';
import type { Storage } from '../../ports/storage.ts';
import { findChromium, launchChromium, NO_CHROMIUM } from '../support/chromium.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { startService, type TestService } from '../support/service.ts';

const WAIT = 20_000;

describe('chat links in the console UI', { skip: findChromium() === null ? NO_CHROMIUM : false }, () => {
  let service: TestService;
  let storage: Storage;
  let browser: Browser;

  before(async () => {
    storage = createMemoryStorage();
    await storage.importWorld(fixtureWorld());
    service = await startService({}, { storage });
    browser = (await launchChromium())!;
  });
  after(async () => {
    await browser?.close();
    await service?.close();
  });

  it('asks for a code, shows it with what to send, and after it is redeemed shows the address, which can be removed', { timeout: 60_000 }, async () => {
    const context = await browser.newContext();
    await context.addCookies([{ name: 'console_session', value: 'token-alice', domain: 'localhost', path: '/' }]);
    const page = await context.newPage();
    const errors: Error[] = [];
    page.on('pageerror', (error) => errors.push(error));
    await page.goto(`${service.consoleOrigin}/`);
    await page.getByRole('link', { name: 'Chat links' }).click();
    await page.waitForSelector('#link-channel', { timeout: WAIT });
    assert.equal(await page.textContent('.chat-links .empty'), 'No chat address is linked to you.');
    assert.deepEqual(await page.locator('#link-channel option').allTextContents(), ['Quiet room', 'Team chat'], 'chat channels only, not the console');
    await page.selectOption('#link-channel', 'team-chat');
    await page.getByRole('button', { name: 'Get a link code' }).click();
    const shown = page.locator('.link-code code');
    await shown.waitFor({ timeout: WAIT });
    const send = (await shown.textContent()) ?? '';
    assert.match(send, /^link [2-9A-HJKMNP-Z]{8}$/);
    assert.match((await page.textContent('.link-code')) ?? '', /Team chat bot in a direct message/);

    // The bot receives `link <code>` in a direct message from alice's chat address.
    const linking = channelLinking({ links: storage.links, catalog: storage.catalog });
    const redeemed = await linking.redeemLinkCode('team-chat', 'Alice@Chat.Example', send.slice('link '.length));
    assert.equal(redeemed.kind, 'linked', JSON.stringify(redeemed));

    await page.reload();
    const row = page.locator('.chat-links li[data-channel="team-chat"]');
    await row.waitFor({ timeout: WAIT });
    assert.equal(await row.locator('.address').textContent(), 'alice@chat.example');
    assert.equal(await row.locator('.channel').textContent(), 'Team chat');
    await row.getByRole('button', { name: 'Remove the link on Team chat' }).click();
    await page.waitForSelector('.chat-links .empty', { timeout: WAIT });
    assert.equal(await linking.userAt('team-chat', 'alice@chat.example'), null, 'removed in storage too');
    assert.deepEqual(errors, []);
    await context.close();
  });
});
