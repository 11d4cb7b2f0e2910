// Signing in to the console with a real OpenID Connect provider, in Chromium, clicking as a person would
// (contract section 13): "Sign in with <OIDC_NAME>" on the console page, the provider's login and consent pages
// (oidc-provider's development pages, on 127.0.0.1), and back on the console at localhost signed in, with an
// HttpOnly session cookie; signing out from the header shows the sign-in again. Someone whose email domain is
// not allowed lands on the service's refusal page, which says so and links back to the console. No
// OIDC_REDIRECT_URL: the service builds the callback from the console origin the sign-in started on, and the
// browser really follows the provider's redirect back to it.
import assert from 'node:assert/strict';
import { after, before, describe, it, type TestContext } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { openIdIdentityProvider } from '../../adapters/openid-client/identity-provider.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { findChromium, launchChromium, NO_CHROMIUM } from '../support/chromium.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { freePort } from '../support/free-port.ts';
import { startOidcProvider, type TestAccount, type TestProvider } from '../support/oidc-provider.ts';
import { startService, type TestService } from '../support/service.ts';

const WAIT = 20_000;
const SECRET = 'the-browser-client-secret-7c2a';
const ADA: TestAccount = { sub: 'ada-1', email: 'ada@example.com', email_verified: true, name: 'Ada Lovelace' };
const EVE: TestAccount = { sub: 'eve-2', email: 'eve@elsewhere.org', email_verified: true, name: 'Eve' };

describe('signing in to the console with an OpenID Connect provider, in Chromium', { skip: findChromium() === null ? NO_CHROMIUM : false }, () => {
  let provider: TestProvider;
  let service: TestService;
  let browser: Browser;

  before(async () => {
    // The service needs the provider's issuer, and the provider the service's callback (its port): the
    // provider's port is chosen first, and the provider started once the service listens. The service
    // discovers the provider at the first sign-in, by when it is up.
    const providerPort = await freePort();
    const issuer = `http://127.0.0.1:${providerPort}`;
    const storage = createMemoryStorage();
    await storage.importWorld(fixtureWorld());
    service = await startService(
      { OIDC_ISSUER: issuer, OIDC_CLIENT_ID: 'console', OIDC_CLIENT_SECRET: SECRET, OIDC_ALLOWED_DOMAINS: 'example.com', OIDC_NAME: 'Test IdP' },
      { storage, identityProvider: openIdIdentityProvider({ issuer, clientId: 'console', clientSecret: SECRET }) },
    );
    provider = await startOidcProvider({
      port: providerPort,
      accounts: [ADA, EVE],
      clients: [{ client_id: 'console', client_secret: SECRET, redirect_uris: [`${service.consoleOrigin}/api/session/oidc/callback`] }],
    });
    assert.equal(provider.issuer, issuer);
    browser = (await launchChromium())!;
  });
  after(async () => {
    await browser?.close();
    await service?.close();
    await provider?.close();
  });

  /** A fresh browser (no cookies at the console or the provider) on the console page, its page errors kept. */
  async function openConsole(t: TestContext): Promise<{ page: Page; errors: Error[] }> {
    const context = await browser.newContext();
    t.after(() => context.close());
    // The provider's pages import a web font: nothing leaves this machine, so nothing waits on the network.
    await context.route((url) => url.hostname !== 'localhost' && url.hostname !== '127.0.0.1', (route) => route.abort());
    const page = await context.newPage();
    const errors: Error[] = [];
    page.on('pageerror', (error) => errors.push(error));
    await page.goto(`${service.consoleOrigin}/`);
    return { page, errors };
  }

  /** From the console's sign-in page through the provider's login and consent, as `account`. */
  async function signInAtProvider(page: Page, account: TestAccount): Promise<void> {
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
    await page.waitForURL((url) => url.origin === provider.issuer && url.pathname.startsWith('/interaction/'), { timeout: WAIT });
    const login = page.locator('input[name="login"]');
    await login.waitFor({ timeout: WAIT });
    await login.fill(account.sub);
    await page.locator('input[name="password"]').fill('any password (ignored in development mode)');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    // The consent page: a new interaction, its form's prompt "consent".
    await page.locator('form input[name="prompt"][value="consent"]').waitFor({ state: 'attached', timeout: WAIT });
    await page.getByRole('button', { name: 'Continue' }).click();
  }

  it('a person signs in with the provider, lands on the console signed in (HttpOnly cookie), and signs out', { timeout: 60_000 }, async (t) => {
    const { page, errors } = await openConsole(t);
    await signInAtProvider(page, ADA);

    await page.waitForURL(`${service.consoleOrigin}/`, { timeout: WAIT });
    await page.waitForSelector('header.top', { timeout: WAIT });
    assert.equal(await page.textContent('header.top .who'), ADA.name);
    // The page's own fetch (its cookie, its origin) names the user who joined.
    const me = await page.evaluate(async () => {
      const res = await fetch('/api/session');
      return { status: res.status, body: (await res.json()) as { id: string; name: string; role: string } };
    });
    assert.equal(me.status, 200);
    assert.equal(typeof me.body.id, 'string');
    assert.deepEqual([me.body.name, me.body.role], [ADA.name, 'member']);
    const cookie = (await page.context().cookies(service.consoleOrigin)).find((c) => c.name === 'console_session');
    assert.ok(cookie !== undefined, 'a session cookie');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Lax');
    assert.ok(!(await page.evaluate(() => document.cookie)).includes('console_session'), 'the page\'s script cannot read the session cookie');

    await page.locator('header.top').getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).waitFor({ timeout: WAIT });
    assert.equal(await page.locator('header.top').count(), 0);
    const after = await page.evaluate(() => fetch('/api/session').then((res) => res.status));
    assert.equal(after, 401, 'the session ended at the service, not only on the page');
    await page.reload();
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).waitFor({ timeout: WAIT });
    assert.deepEqual(errors, []);
  });

  it('someone whose email domain is not allowed lands on the refusal page, which links back to the console', { timeout: 60_000 }, async (t) => {
    const { page, errors } = await openConsole(t);
    await signInAtProvider(page, EVE);

    await page.waitForURL((url) => url.origin === service.consoleOrigin && url.pathname === '/api/session/oidc/callback', { timeout: WAIT });
    const reason = page.locator('[data-reason]');
    await reason.waitFor({ timeout: WAIT });
    assert.equal(await reason.getAttribute('data-reason'), 'not_invited');
    assert.match((await page.textContent('h1')) ?? '', /not invited/);
    assert.match((await page.textContent('main')) ?? '', /Ask an admin of this console to invite your email address/);
    const cookies = await page.context().cookies(service.consoleOrigin);
    assert.equal(cookies.find((c) => c.name === 'console_session'), undefined, 'no session');

    await page.getByRole('link', { name: 'Back to the console' }).click();
    await page.waitForURL(`${service.consoleOrigin}/`, { timeout: WAIT });
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).waitFor({ timeout: WAIT });
    assert.equal(await page.locator('header.top').count(), 0, 'still signed out');
    assert.deepEqual(errors, []);
  });
});
