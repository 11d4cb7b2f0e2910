// The teleport dialog in Chromium lists a chat platform's places without anyone having asked for them first
// (issue 41, item 3): a chat adapter (xmpp, slack) knows its rooms only once they are listed, so the channel
// list answers none before that and the operations suggest none. The dialog asks every browsable channel
// linked to the user for its first level (`GET /channels`, then `/addresses`), opens a room one level down
// (`inside`), shows a barred room disabled with its reason, and the teleport lands.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { memoryChannelPort } from '../../adapters/memory/channel-port.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import type { ChannelPort } from '../../ports/channel-port.ts';
import type { Catalog } from '../../ports/catalog.ts';
import { findChromium, launchChromium, NO_CHROMIUM } from '../support/chromium.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { startService, type TestService } from '../support/service.ts';

const WAIT = 20_000;

/**
 * The world file's channels as a chat adapter answers them: a channel's places are in `channels()` only
 * once they were listed (`places`), as the xmpp and slack adapters keep what they last listed.
 */
function listedOnlyChannelPort(catalog: Catalog): ChannelPort {
  const port = memoryChannelPort(catalog);
  const listed = new Set<string>();
  return {
    ...port,
    channels: async () => (await port.channels()).map((channel) => (listed.has(channel.id) ? channel : { ...channel, addresses: [] })),
    places: async (channelId, inside) => {
      listed.add(channelId);
      return port.places(channelId, inside);
    },
  };
}

describe('the teleport dialog browses chat channels in the console UI', { skip: findChromium() === null ? NO_CHROMIUM : false }, () => {
  let service: TestService;
  let browser: Browser;

  before(async () => {
    const storage = createMemoryStorage();
    await storage.importWorld(fixtureWorld());
    service = await startService({}, { storage, channels: listedOnlyChannelPort(storage.catalog) });
    // Routes are what the agents offer: known before the composer is opened.
    await service.knowOffers();
    browser = (await launchChromium())!;
  });
  after(async () => {
    await browser?.close();
    await service?.close();
  });

  it("lists a chat channel's rooms no one listed before, opens one, shows a barred room with its reason, and teleports", { timeout: 60_000 }, async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    await context.addCookies([{ name: 'console_session', value: 'token-alice', domain: 'localhost', path: '/' }]);
    const page = await context.newPage();
    const errors: Error[] = [];
    page.on('pageerror', (error) => errors.push(error));
    await page.goto(`${service.consoleOrigin}/`);
    await page.getByRole('link', { name: 'New thread' }).click();
    await page.waitForSelector('#route option:nth-child(2)', { state: 'attached', timeout: WAIT });
    await page.getByLabel('Directive').fill('Plan the release');
    await page.getByRole('button', { name: 'Start' }).click();
    await page.waitForFunction(() => /^#\/threads\/[0-9a-f-]{36}$/.test(location.hash), undefined, { timeout: WAIT });
    const source = /#\/threads\/(.+)$/.exec(page.url())![1]!;
    await page.waitForSelector('.ledger li[data-role="assistant"]', { timeout: WAIT });
    await page.waitForSelector('button.cancel', { state: 'detached', timeout: WAIT });

    await page.locator('details.moves > summary').click();
    const general = page.locator('ul.places li[data-place="general"]');
    await general.waitFor({ timeout: WAIT }).catch(async (error: unknown) => {
      throw new Error(`the room is not listed: ${await page.locator('ul.places').textContent()}`, { cause: error });
    });
    const ops = page.locator('ul.places li[data-place="ops"]');
    assert.equal(await ops.getAttribute('aria-disabled'), 'true');
    assert.equal(await ops.getByRole('radio').isDisabled(), true);
    assert.match((await ops.textContent()) ?? '', /The agent is not in this room/);
    await general.getByRole('button', { name: 'Open #general' }).click();
    const release = page.locator('ul.places li[data-place="general/t1"]');
    await release.waitFor({ timeout: WAIT });
    assert.equal(await page.locator('nav.crumbs button').count(), 2, 'Destinations, then #general');
    await release.getByRole('radio').check();
    await page.getByRole('button', { name: 'Teleport' }).click();
    await page.waitForFunction((from) => /^#\/threads\/[0-9a-f-]{36}$/.test(location.hash) && !location.hash.endsWith(from), source, { timeout: WAIT });
    await page.waitForFunction(() => /team-chat/.test(document.querySelector('.thread .meta')?.textContent ?? ''), undefined, { timeout: WAIT });
    assert.deepEqual(errors.map(String), []);
  });
});
