// The console UI with a session cookie gone stale (its session names no one any more), in Chromium: the
// page signs itself out at the first refusal and sends the stale credential no further. Before, the
// thread list reread every 30 s and the live socket reconnected every 8 s for ever, each one a failed
// credential against the address's budget (SIGNIN_ATTEMPTS_PER_MINUTE): one forgotten tab locked its
// address, and everyone behind the same NAT, out of signing in. The page's clock is Playwright's, so
// minutes of timers run in moments.
import assert from 'node:assert/strict';
import { after, before, describe, it, type TestContext } from 'node:test';
import type { Browser, Page, WebSocketRoute } from 'playwright-core';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import type { UserByCredential } from '../../ports/accounts.ts';
import { findChromium, launchChromium, NO_CHROMIUM } from '../support/chromium.ts';
import { F, fixtureWorld } from '../support/fixture-world.ts';
import { startService, type TestService } from '../support/service.ts';

const WAIT = 20_000;

describe('the console UI when its session goes stale', { skip: findChromium() === null ? NO_CHROMIUM : false }, () => {
  let service: TestService;
  let browser: Browser;
  /** Whether credentials (the page's session among them) still name their users: set, the page's cookie is stale. */
  let stale = false;
  /** Credentials looked up that named no one: what the page cost its address's budget. */
  let failures = 0;

  before(async () => {
    const storage = createMemoryStorage();
    await storage.importWorld(fixtureWorld());
    const userByCredential: UserByCredential = async (hash, now) => {
      const user = stale ? null : await storage.accounts.userByCredential(hash, now);
      if (user === null) failures += 1;
      return user;
    };
    // A budget the page cannot reach: what is counted is what the page sends, not what the limit lets through.
    service = await startService({ SIGNIN_ATTEMPTS_PER_MINUTE: '10000' }, { storage: { ...storage, accounts: { ...storage.accounts, userByCredential } } });
    browser = (await launchChromium())!;
  });
  after(async () => {
    await browser?.close();
    await service?.close();
  });

  /** A signed-in page at `hash`, its clock paused once shown; every request it sends to the API, in order. */
  async function openConsole(t: TestContext, hash: string, onSocket?: (route: WebSocketRoute) => void): Promise<{ page: Page; sent: string[] }> {
    stale = false;
    failures = 0;
    const context = await browser.newContext();
    t.after(() => context.close());
    // Signed in as the console does it: the cookie then holds a server-side session's id, not the token.
    const signIn = await context.request.post(`${service.consoleOrigin}/api/session`, { data: { token: 'token-alice' }, headers: { origin: service.consoleOrigin } });
    assert.equal(signIn.status(), 204);
    const cookie = (await context.cookies()).find((c) => c.name === 'console_session');
    assert.ok(cookie !== undefined && cookie.value !== 'token-alice', 'the cookie holds a session id');
    const page = await context.newPage();
    const sent: string[] = [];
    page.on('request', (request) => sent.push(new URL(request.url()).pathname));
    if (onSocket !== undefined) await page.routeWebSocket(/\/api\/console\/live/, onSocket);
    await page.clock.install();
    await page.goto(`${service.consoleOrigin}/${hash}`);
    await page.waitForSelector('nav.threads li', { timeout: WAIT });
    return { page, sent };
  }

  /** Runs the page's timers for `minutes`, a step at a time, then waits for a request sent after them to come back. */
  async function idle(page: Page, minutes: number): Promise<void> {
    for (let step = 0; step < minutes * 6; step++) await page.clock.runFor(10_000);
    // Requests are told in the order sent: this one's answer means every earlier one is counted in `sent`.
    await page.evaluate(() => fetch('/healthz').then((res) => res.status));
  }

  /** Runs the page's timers a second at a time until the sign-in form shows; fails if it never does within `seconds`. */
  async function signInShown(page: Page, seconds: number): Promise<void> {
    for (let second = 0; second < seconds; second++) {
      if ((await page.locator('#token').count()) > 0) return;
      await page.clock.runFor(1_000);
      await page.waitForSelector('#token', { timeout: 200 }).catch(() => {});
    }
    assert.equal(await page.locator('#token').count(), 1, `the sign-in form after ${seconds} s of the page's time`);
  }

  it("the thread list's reread signs the page out at the first 401, and nothing is sent after", { timeout: 60_000 }, async (t) => {
    const { page, sent } = await openConsole(t, '#/new');
    await page.clock.pauseAt((await page.evaluate(() => Date.now())) + 1_000);
    stale = true;
    await signInShown(page, 40);
    assert.equal(failures, 1, 'one failed credential: the reread that found the cookie stale');
    const before = sent.length;
    await idle(page, 5);
    assert.deepEqual(sent.slice(before), ['/healthz'], 'no reread, no socket, in five minutes');
    assert.equal(failures, 1);
  });

  it('a live socket that drops asks GET /api/session before it reconnects: refused, the page signs out and stops', { timeout: 60_000 }, async (t) => {
    const sockets: WebSocketRoute[] = [];
    const { page, sent } = await openConsole(t, `#/threads/${F.root}`, (socket) => {
      sockets.push(socket);
      socket.connectToServer();
    });
    await page.waitForSelector('section.thread[data-live="open"]', { timeout: WAIT });
    await page.clock.pauseAt((await page.evaluate(() => Date.now())) + 1_000);
    stale = true;
    const opened = sockets.length;
    await sockets.at(-1)!.close({ code: 1001, reason: 'going away' });
    // Well before the list's 30 s reread: only the socket's way back can sign the page out here.
    await signInShown(page, 20);
    assert.equal(failures, 1, 'one failed credential: the session check');
    const before = sent.length;
    await idle(page, 5);
    assert.equal(sockets.length, opened, 'no socket opened again');
    assert.deepEqual(sent.slice(before), ['/healthz'], 'nothing sent in five minutes');
    assert.equal(failures, 1);
  });

  it('a socket that drops while the session is good comes back after the check', { timeout: 60_000 }, async (t) => {
    const sockets: WebSocketRoute[] = [];
    const { page } = await openConsole(t, `#/threads/${F.root}`, (socket) => {
      sockets.push(socket);
      socket.connectToServer();
    });
    await page.waitForSelector('section.thread[data-live="open"]', { timeout: WAIT });
    await page.clock.pauseAt((await page.evaluate(() => Date.now())) + 1_000);
    await sockets.at(-1)!.close({ code: 1001, reason: 'going away' });
    await page.waitForSelector('section.thread[data-live="closed"]', { timeout: WAIT });
    for (let second = 0; second < 5 && (await page.locator('section.thread[data-live="open"]').count()) === 0; second++) {
      await page.clock.runFor(1_000);
      await page.waitForSelector('section.thread[data-live="open"]', { timeout: 500 }).catch(() => {});
    }
    await page.waitForSelector('section.thread[data-live="open"]', { timeout: WAIT });
    assert.equal(failures, 0);
    assert.equal(await page.locator('#token').count(), 0, 'still signed in');
  });
});
