// The artifact viewer as an MCP Apps host, proven in a real Chromium with the MCP project's published
// example servers (pinned dev dependencies, each started as published and reached through a recording
// proxy on 127.0.0.1): `server-basic-vanillajs` built with ext-apps 2.x and with 1.x, and
// `server-budget-allocator` (a chart app). Each artifact's saved result is what the real tool answered
// when the test called it, before the viewer opened; from then on the provider's methods are counted,
// so the test sees that the viewer never forwards a `tools/call`. The browser may reach loopback only.
//
// Set VIEWER_SCREENSHOTS to a directory to save a screenshot of each app there (docs/screenshots).
//
// Callbacks passed to `evaluate` and `waitForFunction` stay anonymous and inline (see viewer.test.ts).
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { createFetchUiResource } from '../../adapters/mcp/fetch-ui-resource.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import type { World } from '../../domain/world.ts';
import { findChromium, launchChromium, NO_CHROMIUM } from '../support/chromium.ts';
import { sha256, testId } from '../support/ids.ts';
import { startPublishedApp, type PublishedApp } from '../support/published-app.ts';
import { startService, type TestService } from '../support/service.ts';

const WAIT = 15_000;

interface Example {
  readonly key: string;
  readonly packageName: string;
  readonly provider: string;
  readonly tool: string;
  readonly resourceUri: string;
  readonly artifact: string;
  readonly installation: string;
}

const BASIC_V2: Example = { key: 'basic-v2', packageName: '@modelcontextprotocol/server-basic-vanillajs', provider: 'Basic (ext-apps 2.x)',
  tool: 'get-time', resourceUri: 'ui://get-time/mcp-app.html', artifact: testId(51_001), installation: testId(51_101) };
const BASIC_V1: Example = { key: 'basic-v1', packageName: 'server-basic-vanillajs-v1', provider: 'Basic (ext-apps 1.x)',
  tool: 'get-time', resourceUri: 'ui://get-time/mcp-app.html', artifact: testId(51_002), installation: testId(51_102) };
const BUDGET: Example = { key: 'budget', packageName: '@modelcontextprotocol/server-budget-allocator', provider: 'Budget allocator',
  tool: 'get-budget-data', resourceUri: 'ui://budget-allocator/mcp-app.html', artifact: testId(51_003), installation: testId(51_103) };
const EXAMPLES = [BASIC_V2, BASIC_V1, BUDGET];

/** What the viewer may make the provider do: read the UI resource, nothing else. */
const READ_ONLY = new Set(['initialize', 'notifications/initialized', 'resources/read', 'resources/list']);

const chromiumPath = findChromium();

describe('published MCP Apps in the viewer, in Chromium', { skip: chromiumPath === null ? NO_CHROMIUM : false }, () => {
  let browser: Browser;
  let service: TestService;
  const apps = new Map<string, PublishedApp>();
  const saved = new Map<string, Record<string, unknown>>();

  before(async () => {
    for (const example of EXAMPLES) {
      const app = await startPublishedApp(example.packageName);
      apps.set(example.key, app);
      saved.set(example.key, await app.callTool(example.tool));
      app.reset();
    }
    const world: World = {
      users: [{ id: 'alice', name: 'Alice', token_hash: sha256('token-alice'), role: 'member' }],
      projects: [],
      agents: [],
      channels: [],
      installations: EXAMPLES.map((e) => ({ id: e.installation, owner: 'alice', provider_name: e.provider, server_url: apps.get(e.key)!.url,
        headers: {}, enabled: true, authorized: true })),
      artifacts: EXAMPLES.map((e) => ({ id: e.artifact, owner: 'alice', installation: e.installation, resource_uri: e.resourceUri,
        title: `${e.provider} result`, tool: e.tool, input: {}, output: saved.get(e.key)! })),
      threads: [],
    };
    const storage = createMemoryStorage();
    await storage.importWorld(world);
    service = await startService({}, { storage, fetchUiResource: createFetchUiResource() });
    const launched = await launchChromium();
    assert.ok(launched, 'Chromium launches');
    browser = launched;
  });
  after(async () => {
    await browser?.close();
    await service?.close();
    for (const app of apps.values()) await app.close();
  });

  /** A signed-in context that may reach loopback only, and the viewer opened on `example`'s artifact. */
  async function openViewer(t: TestContext, example: Example): Promise<{ context: BrowserContext; page: Page; app: Frame; errors: Error[] }> {
    const context = await browser.newContext({ colorScheme: 'light', viewport: { width: 1000, height: 800 } });
    t.after(() => context.close());
    await context.route('**/*', (route) => {
      const { hostname } = new URL(route.request().url());
      return hostname === '127.0.0.1' || hostname === 'localhost' || hostname.endsWith('.localhost') ? route.continue() : route.abort();
    });
    await context.grantPermissions(['local-network-access'], { origin: service.consoleOrigin });
    await context.addCookies([{ name: 'console_session', value: 'token-alice', domain: 'localhost', path: '/' }]);
    const page = await context.newPage();
    const errors: Error[] = [];
    page.on('pageerror', (error) => errors.push(error));
    apps.get(example.key)!.reset();
    await page.goto(`${service.consoleOrigin}${service.config.viewerPath}/${example.artifact}`);
    await page.waitForSelector('html[data-state="ready"]', { state: 'attached', timeout: WAIT }).catch(async (error: unknown) => {
      throw new Error(`the viewer never got ready: ${await page.textContent('#status')}`, { cause: error });
    });
    const proxy = await (await page.waitForSelector('#app > iframe', { state: 'attached', timeout: WAIT })).contentFrame();
    const app = await (await proxy!.waitForSelector('iframe', { state: 'attached', timeout: WAIT })).contentFrame();
    assert.ok(app, 'the app has a frame');
    return { context, page, app, errors };
  }

  /** What the provider received since the viewer opened, with anything beyond reading the resource. */
  function providerSaw(example: Example): { methods: readonly string[]; beyondRead: string[] } {
    const methods = apps.get(example.key)!.methods();
    return { methods, beyondRead: methods.filter((m) => !READ_ONLY.has(m)) };
  }

  /** Sends a JSON-RPC request from inside the app's frame to the host and answers the reply. */
  const askHost = (app: Frame, method: string, params: unknown) =>
    app.evaluate(
      ([m, p, wait]) =>
        new Promise<unknown>((resolve) => {
          const id = `test-${Math.random()}`;
          window.addEventListener('message', (event) => {
            if (event.data && event.data.id === id) resolve(event.data);
          });
          parent.postMessage({ jsonrpc: '2.0', id, method: m, params: p }, '*');
          setTimeout(() => resolve('no answer'), wait as number);
        }),
      [method, params, WAIT] as const,
    );

  /** Starts recording, inside the app's frame, the host's notifications of `method`. */
  const recordNotifications = (app: Frame, method: string) =>
    app.evaluate((m) => {
      const seen: unknown[] = [];
      (window as unknown as { __seen: unknown[] }).__seen = seen;
      window.addEventListener('message', (event) => {
        if (event.data && event.data.method === m) seen.push(event.data.params);
      });
    }, method);

  for (const example of EXAMPLES) {
    it(`renders ${example.packageName} (${example.provider}) from its saved result, reading the resource only`, { timeout: 90_000 }, async (t) => {
      const { page, app, errors } = await openViewer(t, example);
      assert.equal(await page.textContent('#title'), `${example.provider} result`);
      assert.equal(await page.textContent('#meta'), `${example.provider} · tool ${example.tool}`);
      if (example === BUDGET) {
        await app.waitForFunction(() => /Marketing/.test(document.body.innerText) && /Engineering/.test(document.body.innerText), undefined, { timeout: WAIT });
        assert.ok(await app.$('canvas'), 'the chart is drawn');
      } else {
        const time = (saved.get(example.key)!.structuredContent as { time: string }).time;
        await app.waitForFunction((expected) => document.getElementById('server-time')?.textContent?.includes(expected), time, { timeout: WAIT });
      }
      const seen = providerSaw(example);
      assert.ok(seen.methods.includes('resources/read'), JSON.stringify(seen.methods));
      assert.deepEqual(seen.beyondRead, []);
      if (process.env.VIEWER_SCREENSHOTS) {
        mkdirSync(process.env.VIEWER_SCREENSHOTS, { recursive: true });
        await page.screenshot({ path: join(process.env.VIEWER_SCREENSHOTS, `viewer-${example.key}.png`), fullPage: true });
      }
      assert.deepEqual(errors.map(String), []);
    });
  }

  for (const example of [BASIC_V2, BASIC_V1]) {
    it(`${example.provider}: Get Server Time gets a prompt error and the provider never receives tools/call`, { timeout: 90_000 }, async (t) => {
      const { app } = await openViewer(t, example);
      await app.click('#get-time-btn');
      await app.waitForFunction(() => document.getElementById('server-time')?.textContent === '[ERROR]', undefined, { timeout: WAIT });
      assert.deepEqual(providerSaw(example).beyondRead, []);
    });

    it(`${example.provider}: Send Log reaches the log panel as text`, { timeout: 90_000 }, async (t) => {
      const { page, app } = await openViewer(t, example);
      assert.equal(await page.isVisible('#log'), false, 'no panel before a log message');
      await app.fill('#log-text', '<b>hello</b> from the app');
      await app.click('#send-log-btn');
      const entry = await page.waitForSelector('#log-list li', { state: 'attached', timeout: WAIT });
      assert.equal(await entry.textContent(), 'info <b>hello</b> from the app');
      assert.equal(await page.$('#log-list b'), null, 'the text is never HTML');
      assert.equal(await page.isVisible('#log'), true);
    });
  }

  it("basic app: Open Link opens the URL in a new window, never the viewer; other schemes open nothing", { timeout: 90_000 }, async (t) => {
    const { context, page, app } = await openViewer(t, BASIC_V2);
    const viewerUrl = page.url();
    const link = `${service.consoleOrigin}/healthz?opened-by=app`;
    await app.fill('#link-url', 'javascript:alert(document.domain)');
    await app.click('#open-link-btn');
    await app.fill('#link-url', link);
    const popup = context.waitForEvent('page', { timeout: WAIT });
    await app.click('#open-link-btn');
    const opened = await popup;
    await opened.waitForLoadState('domcontentloaded').catch(() => undefined);
    assert.equal(opened.url(), link, 'the first window opened is the http link, not the javascript: one');
    assert.equal(context.pages().length, 2, 'the viewer and the one link');
    assert.equal(page.url(), viewerUrl, 'the viewer did not navigate');
    assert.equal(await opened.evaluate(() => window.opener), null, 'noopener');
  });

  it('basic app: a theme change reaches the app, with its style variables', { timeout: 90_000 }, async (t) => {
    const { page, app } = await openViewer(t, BASIC_V2);
    const themeOf = () => app.evaluate(() => ({
      theme: document.documentElement.dataset.theme,
      background: getComputedStyle(document.documentElement).getPropertyValue('--color-background-primary').trim(),
      font: getComputedStyle(document.documentElement).getPropertyValue('--font-sans').trim(),
    }));
    await app.waitForFunction(() => document.documentElement.dataset.theme === 'light', undefined, { timeout: WAIT });
    assert.equal((await themeOf()).background, '#ffffff');
    assert.match((await themeOf()).font, /system-ui/);
    await page.emulateMedia({ colorScheme: 'dark' });
    await app.waitForFunction(() => document.documentElement.dataset.theme === 'dark', undefined, { timeout: WAIT });
    assert.equal((await themeOf()).background, '#161b22');
  });

  it('sends the host context at initialize and its changes when the window is resized', { timeout: 90_000 }, async (t) => {
    const { page, app } = await openViewer(t, BASIC_V2);
    await recordNotifications(app, 'ui/notifications/host-context-changed');
    await page.setViewportSize({ width: 640, height: 700 });
    const changed = await app.waitForFunction(
      () => (window as unknown as { __seen: { containerDimensions?: { width: number } }[] }).__seen.find((p) => p.containerDimensions)?.containerDimensions,
      undefined,
      { timeout: WAIT },
    );
    const dimensions = (await changed.jsonValue()) as { width: number; maxHeight: number };
    assert.ok(dimensions.width > 0 && dimensions.width <= 640, JSON.stringify(dimensions));
    assert.equal(dimensions.maxHeight, 10_000);
  });

  it('offers inline and full-window display, laid out by the viewer, and Escape returns inline', { timeout: 90_000 }, async (t) => {
    const { page, app } = await openViewer(t, BASIC_V2);
    await recordNotifications(app, 'ui/notifications/host-context-changed');
    const answer = (await askHost(app, 'ui/request-display-mode', { mode: 'fullscreen' })) as { result?: { mode?: string } };
    assert.equal(answer.result?.mode, 'fullscreen', JSON.stringify(answer));
    await page.waitForSelector('html[data-display="fullscreen"]', { state: 'attached', timeout: WAIT });
    const box = await (await page.$('#app > iframe'))!.boundingBox();
    assert.deepEqual(box, { x: 0, y: 0, width: 1000, height: 800 });
    assert.equal(await page.isVisible('#exit-full'), true);
    await app.waitForFunction(
      () => (window as unknown as { __seen: { displayMode?: string }[] }).__seen.some((p) => p.displayMode === 'fullscreen'),
      undefined,
      { timeout: WAIT },
    );
    await page.keyboard.press('Escape');
    await page.waitForSelector('html[data-display="inline"]', { state: 'attached', timeout: WAIT });
    await app.waitForFunction(
      () => (window as unknown as { __seen: { displayMode?: string }[] }).__seen.some((p) => p.displayMode === 'inline'),
      undefined,
      { timeout: WAIT },
    );
    const refused = (await askHost(app, 'ui/request-display-mode', { mode: 'pip' })) as { result?: { mode?: string } };
    assert.equal(refused.result?.mode, 'inline', 'a mode not offered leaves the one in force');
  });

  it('refuses tools, resource reads, ui/message and ui/update-model-context promptly, forwarding nothing', { timeout: 90_000 }, async (t) => {
    const { app } = await openViewer(t, BASIC_V2);
    const asks: [string, unknown][] = [
      ['tools/call', { name: 'get-time', arguments: {} }],
      ['resources/read', { uri: 'ui://get-time/mcp-app.html' }],
      ['resources/list', {}],
      ['ui/message', { role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      ['ui/update-model-context', { content: [{ type: 'text', text: 'context' }] }],
    ];
    for (const [method, params] of asks) {
      const answer = (await askHost(app, method, params)) as { error?: { code?: number; message?: string } };
      assert.equal(answer.error?.code, -32601, `${method}: ${JSON.stringify(answer)}`);
      assert.match(answer.error?.message ?? '', /not supported here/, method);
    }
    assert.deepEqual(providerSaw(BASIC_V2).beyondRead, []);
    assert.equal(providerSaw(BASIC_V2).methods.filter((m) => m === 'resources/read').length, 1, 'only the viewer load read the resource');
  });

  it('follows size-changed for height and width, within the page', { timeout: 90_000 }, async (t) => {
    const { page, app } = await openViewer(t, BASIC_V2);
    await app.evaluate(() => parent.postMessage({ jsonrpc: '2.0', method: 'ui/notifications/size-changed', params: { width: 5_000, height: 456 } }, '*'));
    await page.waitForFunction(() => (document.querySelector('#app > iframe') as HTMLIFrameElement).style.height === '456px', undefined, { timeout: WAIT });
    const wide = await page.$eval('#app > iframe', (f) => ({ minWidth: (f as HTMLIFrameElement).style.minWidth, width: f.getBoundingClientRect().width, page: document.getElementById('app')!.getBoundingClientRect().width }));
    assert.equal(wide.minWidth, 'min(5000px, 100%)');
    assert.equal(wide.width, wide.page, 'never wider than the page');
    await app.evaluate(() => parent.postMessage({ jsonrpc: '2.0', method: 'ui/notifications/size-changed', params: { height: 99_999 } }, '*'));
    await page.waitForFunction(() => (document.querySelector('#app > iframe') as HTMLIFrameElement).style.height === '10000px', undefined, { timeout: WAIT });
  });

  it('Reload tears the app down first, then fetches the resource anew', { timeout: 90_000 }, async (t) => {
    const { page, app } = await openViewer(t, BASIC_V2);
    const consoleLines: string[] = [];
    page.on('console', (message) => consoleLines.push(message.text()));
    const teardown = askHost(app, 'ping', {}); // the channel works before the reload
    assert.deepEqual(((await teardown) as { result?: unknown }).result, {});
    await page.click('#reload');
    await page.waitForFunction(() => document.documentElement.dataset.state === 'loading', undefined, { timeout: WAIT }).catch(() => undefined);
    await page.waitForSelector('html[data-state="ready"]', { state: 'attached', timeout: WAIT });
    assert.ok(consoleLines.some((line) => line.includes('App is being torn down')), `the app saw ui/resource-teardown: ${JSON.stringify(consoleLines)}`);
    assert.equal((await page.$$('#app > iframe')).length, 1, 'one frame: the old one is gone');
    assert.equal(providerSaw(BASIC_V2).methods.filter((m) => m === 'resources/read').length, 2, 'the resource was read again');
  });
});
