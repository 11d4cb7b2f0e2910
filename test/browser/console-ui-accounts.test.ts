// The console UI's accounts pages in Chromium (contract section 13): a member creates a personal access token,
// shown once, which then works as a bearer token and is listed without it; revoked, it stops at once. The Admin
// page is linked for admins only; an admin pages through the users, is told plainly that the last admin cannot
// step down, deactivates a member (whose token is then refused) and reactivates them, and invites an email. The
// sign-in page offers "Sign in with <OIDC_NAME>" when a provider is configured. Untrusted text stays text.
import assert from 'node:assert/strict';
import { after, before, describe, it, type TestContext } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import type { World } from '../../domain/world.ts';
import { consolePage } from '../../src/console-ui/page.ts';
import { findChromium, launchChromium, NO_CHROMIUM } from '../support/chromium.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { sha256 } from '../support/ids.ts';
import { startService, type TestService } from '../support/service.ts';

const WAIT = 20_000;
/** A token name that would run script if it were ever put in the page as HTML. */
const HOSTILE = '<img src=x onerror="window.__pwned=1">';
/** Users beyond alice and bob: enough that the Admin page's first page (50) leaves some for "More". */
const MORE_USERS = 51;

/** The fixture world with alice an admin (bob stays a member), and more members to page through. */
function world(): World {
  const fixture = fixtureWorld();
  return {
    ...fixture,
    users: [
      ...fixture.users.map((user) => ({ ...user, role: user.id === 'alice' ? 'admin' as const : 'member' as const })),
      ...Array.from({ length: MORE_USERS }, (_, i) => {
        const id = `member-${String(i + 1).padStart(2, '0')}`;
        return { id, name: `Member ${i + 1}`, token_hash: sha256(`token-${id}`), role: 'member' as const };
      }),
    ],
  };
}

describe('accounts in the console UI', { skip: findChromium() === null ? NO_CHROMIUM : false }, () => {
  let service: TestService;
  let browser: Browser;

  before(async () => {
    const storage = createMemoryStorage();
    await storage.importWorld(world());
    service = await startService({}, { storage });
    browser = (await launchChromium())!;
  });
  after(async () => {
    await browser?.close();
    await service?.close();
  });

  /** `GET /api/session` with a bearer token, from outside the browser: the status and the user it names. */
  const whoIs = async (token: string): Promise<{ status: number; body: unknown }> => {
    const res = await fetch(`${service.consoleOrigin}/api/session`, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, body: res.ok ? await res.json() : null };
  };

  /** A page signed in through the sign-in form with `token` (a server-side session), its page errors kept. */
  async function signedIn(t: TestContext, token: string): Promise<{ page: Page; errors: Error[] }> {
    const context = await browser.newContext();
    t.after(() => context.close());
    const page = await context.newPage();
    const errors: Error[] = [];
    page.on('pageerror', (error) => errors.push(error));
    await page.goto(`${service.consoleOrigin}/`);
    await page.fill('#token', token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForSelector('header.top', { timeout: WAIT });
    const cookie = (await context.cookies()).find((c) => c.name === 'console_session');
    assert.ok(cookie !== undefined && cookie.value !== token, 'the cookie holds a session id, not the token');
    return { page, errors };
  }

  it('a member creates a token, shown once, that works as a bearer token; listed without it; revoked, it stops', { timeout: 60_000 }, async (t) => {
    const { page, errors } = await signedIn(t, 'token-bob');
    assert.equal(await page.getByRole('link', { name: 'Admin' }).count(), 0, 'no Admin link for a member');
    await page.getByRole('link', { name: 'Tokens' }).click();
    await page.waitForSelector('.access-tokens .empty', { timeout: WAIT });
    assert.equal(await page.textContent('.access-tokens .empty'), 'You have no tokens.');

    await page.fill('#token-name', HOSTILE);
    await page.fill('#token-days', '30');
    await page.getByRole('button', { name: 'Create token' }).click();
    const secret = page.locator('.new-token code.secret');
    await secret.waitFor({ timeout: WAIT });
    const token = (await secret.textContent()) ?? '';
    assert.ok(token.length >= 20, `a token: ${token}`);
    const shown = (await page.textContent('.new-token')) ?? '';
    assert.match(shown, /it will not be shown again/);
    assert.match(shown, /Authorization: Bearer <token>/);
    assert.equal(await page.textContent('.new-token .token-name'), HOSTILE, 'the name is shown as text');

    const row = page.locator('.access-tokens tbody tr');
    await row.waitFor({ timeout: WAIT });
    assert.equal(await row.locator('td.name').textContent(), HOSTILE);
    assert.equal(await row.locator('td.last-used').textContent(), 'never');
    assert.notEqual(await row.locator('td time').nth(1).getAttribute('datetime'), null, 'an expiry');
    assert.equal(await page.locator('.access-tokens img').count(), 0, 'no element made of the name');

    // It works as a bearer token, as bob.
    const asBob = await whoIs(token);
    assert.equal(asBob.status, 200);
    assert.deepEqual(asBob.body, { id: 'bob', name: 'Bob', role: 'member' });

    // Shown once: gone once dismissed, and not on the page after a reload, where the list shows it used.
    await page.getByRole('button', { name: 'Done' }).click();
    assert.equal(await page.locator('.new-token').count(), 0);
    await page.reload();
    await row.waitFor({ timeout: WAIT });
    assert.equal(await row.locator('td.name').textContent(), HOSTILE);
    assert.ok(!(await page.content()).includes(token), 'the token is not on the page any more');
    assert.notEqual(await row.locator('td.last-used').textContent(), 'never', 'used once');
    const listed = await fetch(`${service.consoleOrigin}/api/account/tokens`, { headers: { authorization: `Bearer ${token}` } }).then((res) => res.json()) as Record<string, unknown>[];
    assert.equal(listed.length, 1);
    assert.equal(listed[0]!.token, undefined, 'listed without the token');

    // Revoking asks first; Cancel keeps it.
    await page.getByRole('button', { name: `Revoke ${HOSTILE}` }).click();
    await page.getByRole('button', { name: 'Cancel' }).click();
    assert.equal(await row.count(), 1);
    assert.equal((await whoIs(token)).status, 200);
    await page.getByRole('button', { name: `Revoke ${HOSTILE}` }).click();
    await page.getByRole('button', { name: 'Yes, revoke' }).click();
    await page.waitForSelector('.access-tokens .empty', { timeout: WAIT });
    assert.equal((await whoIs(token)).status, 401, 'a revoked token stops at once');

    assert.equal(await page.evaluate(() => (window as { __pwned?: number }).__pwned), undefined);
    assert.deepEqual(errors, []);
  });

  it('an admin sees the Admin page: pages of users, the last admin kept, a member deactivated and reactivated, an invite', { timeout: 60_000 }, async (t) => {
    const { page, errors } = await signedIn(t, 'token-alice');
    await page.getByRole('link', { name: 'Admin' }).click();
    const rows = page.locator('.admin-users tbody tr');
    await rows.first().waitFor({ timeout: WAIT });
    assert.equal(await rows.count(), 50, 'the first page');
    const alice = page.locator('.admin-users tr[data-user-id="alice"]');
    assert.equal(await alice.locator('.role-cell').textContent(), 'admin');
    assert.equal(await alice.locator('.issuer').textContent(), 'world file');
    assert.equal(await alice.locator('.status').textContent(), 'active');
    await page.getByRole('button', { name: 'More' }).click();
    await page.waitForFunction((n) => document.querySelectorAll('.admin-users tbody tr').length === n, 2 + MORE_USERS, { timeout: WAIT });
    assert.equal(await page.getByRole('button', { name: 'More' }).count(), 0, 'no page after the last');

    // The only admin cannot step down: the 409 is told as such.
    await page.getByRole('button', { name: 'Make Alice a member' }).click();
    const alert = page.locator('.admin-users [role=alert]');
    await alert.waitFor({ timeout: WAIT });
    assert.match((await alert.textContent()) ?? '', /no active admin/);
    assert.equal(await alice.locator('.role-cell').textContent(), 'admin');

    // Deactivated, bob's token is refused at once; reactivated, it works again.
    assert.equal((await whoIs('token-bob')).status, 200);
    await page.getByRole('button', { name: 'Deactivate Bob' }).click();
    const bob = page.locator('.admin-users tr[data-user-id="bob"]');
    await page.waitForSelector('.admin-users tr[data-user-id="bob"][data-active="false"]', { timeout: WAIT });
    assert.equal(await bob.locator('.status').textContent(), 'deactivated');
    assert.equal(await alert.count(), 0, 'the earlier message is gone');
    assert.equal((await whoIs('token-bob')).status, 401);
    await page.getByRole('button', { name: 'Reactivate Bob' }).click();
    await page.waitForSelector('.admin-users tr[data-user-id="bob"][data-active="true"]', { timeout: WAIT });
    assert.equal((await whoIs('token-bob')).status, 200);

    // Bob made an admin, then a member again.
    await page.getByRole('button', { name: 'Make Bob an admin' }).click();
    await page.getByRole('button', { name: 'Make Bob a member' }).waitFor({ timeout: WAIT });
    assert.equal(((await whoIs('token-bob')).body as { role: string }).role, 'admin');
    await page.getByRole('button', { name: 'Make Bob a member' }).click();
    await page.getByRole('button', { name: 'Make Bob an admin' }).waitFor({ timeout: WAIT });
    assert.equal(((await whoIs('token-bob')).body as { role: string }).role, 'member');

    await page.fill('#invite-email', 'New.Person@Example.com');
    await page.getByRole('button', { name: 'Invite' }).click();
    await page.waitForSelector('.admin-users .invite [role=status]', { timeout: WAIT });
    assert.equal((await page.textContent('.admin-users .invited-email'))?.toLowerCase(), 'new.person@example.com');
    assert.deepEqual(errors, []);
  });

  it('a member who opens #/admin gets no Admin page', { timeout: 60_000 }, async (t) => {
    const { page } = await signedIn(t, 'token-member-01');
    await page.goto(`${service.consoleOrigin}/#/admin`);
    await page.waitForSelector('header.top', { timeout: WAIT });
    assert.equal(await page.getByRole('link', { name: 'Admin' }).count(), 0);
    assert.equal(await page.locator('.admin-users').count(), 0);
    const refused = await fetch(`${service.consoleOrigin}/api/admin/users`, { headers: { authorization: 'Bearer token-member-01' } });
    assert.equal(refused.status, 403);
  });

  it('the sign-in page offers "Sign in with <OIDC_NAME>" only when a provider is configured', { timeout: 60_000 }, async (t) => {
    const name = 'Acme <SSO> & "Co"';
    assert.match(consolePage(null, name), /<html lang="en" data-oidc-name="Acme &lt;SSO&gt; &amp; &quot;Co&quot;">/);
    assert.doesNotMatch(consolePage(null, null), /data-oidc-name/);

    // No provider: the token form alone.
    const context = await browser.newContext();
    t.after(() => context.close());
    const plain = await context.newPage();
    await plain.goto(`${service.consoleOrigin}/`);
    await plain.waitForSelector('#token', { timeout: WAIT });
    assert.equal(await plain.locator('a[href="/api/session/oidc"]').count(), 0);

    // A provider configured (never reached here: the flow itself is tested elsewhere): the link, and the token form still.
    const withOidc = await startService({ OIDC_ISSUER: 'http://127.0.0.1:1', OIDC_CLIENT_ID: 'console', OIDC_CLIENT_SECRET: 'not-a-secret', OIDC_NAME: name });
    t.after(() => withOidc.close());
    const page = await context.newPage();
    await page.goto(`${withOidc.consoleOrigin}/`);
    const link = page.getByRole('link', { name: `Sign in with ${name}` });
    await link.waitFor({ timeout: WAIT });
    assert.equal(await link.getAttribute('href'), '/api/session/oidc');
    assert.equal(await page.locator('#token').count(), 1, 'the token form stays');
  });
});
