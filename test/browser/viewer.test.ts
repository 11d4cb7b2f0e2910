// The artifact viewer end to end in a real Chromium: the service serves the viewer page, the
// artifact API, the sandbox proxy and (mounted) the demo MCP server the artifact's installation
// points at; the viewer hosts the demo weather card with the MCP Apps host protocol. Skipped, with a
// reason, where no Chromium is found.
//
// Callbacks passed to `page.evaluate` and `waitForFunction` stay anonymous and inline: tsx compiles
// with esbuild's keepNames, which wraps named inner functions in a `__name` helper the page lacks.
import assert from 'node:assert/strict';
import { after, before, describe, it, type TestContext } from 'node:test';
import type { Browser, Frame, Page } from 'playwright-core';
import { createFetchUiResource } from '../../adapters/mcp/fetch-ui-resource.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { buildCsp } from '../../domain/csp.ts';
import { EMPTY_CSP } from '../../domain/sandbox-policy.ts';
import type { World } from '../../domain/world.ts';
import { createDemoMcpHandler } from '../../src/demo/mcp-server.ts';
import { WEATHER_APP_UI } from '../../src/demo/weather-app.ts';
import { findChromium, launchChromium, NO_CHROMIUM } from '../support/chromium.ts';
import { sha256, testId } from '../support/ids.ts';
import { startService, type TestService } from '../support/service.ts';

/** The longest any single wait may take, so a broken handshake fails the test instead of hanging it. */
const WAIT = 15_000;
const INSTALLATION = testId(50_000);
const ARTIFACT = testId(50_001);
/** An artifact whose UI resource the provider does not have: the API answers 502. */
const MISSING_RESOURCE = testId(50_002);
/** An artifact whose installation was disabled: the API answers 404 with its own detail. */
const DISABLED = testId(50_004);
const DISABLED_INSTALLATION = testId(50_005);
/**
 * The same result saved with another city as input. The demo card takes the city from the result
 * when no input came, so only an input that differs tells that the tool input was sent at all.
 */
const OTHER_INPUT = testId(50_003);
const SAVED_OUTPUT = {
  content: [{ type: 'text', text: 'Sunny' }],
  structuredContent: { city: 'Paris', summary: 'Sunny', temperature_c: 21 },
};

/** Alice's weather installation on the service's own mounted demo MCP server, and two artifacts of it. */
function world(port: number): World {
  const artifact = { owner: 'alice', installation: INSTALLATION, title: 'Forecast', tool: 'get_forecast' };
  return {
    users: [{ id: 'alice', name: 'Alice', token_hash: sha256('token-alice'), role: 'member' }],
    projects: [],
    agents: [],
    channels: [],
    installations: [{ id: INSTALLATION, owner: 'alice', provider_name: 'Weather', server_url: `http://127.0.0.1:${port}/demo/mcp`,
      headers: {}, enabled: true, authorized: true },
      { id: DISABLED_INSTALLATION, owner: 'alice', provider_name: 'Weather', server_url: `http://127.0.0.1:${port}/demo/mcp`,
        headers: {}, enabled: false, authorized: true }],
    artifacts: [
      { ...artifact, id: ARTIFACT, resource_uri: 'ui://weather/forecast', input: { city: 'Paris' }, output: SAVED_OUTPUT },
      { ...artifact, id: OTHER_INPUT, resource_uri: 'ui://weather/forecast', input: { city: 'Lyon' }, output: SAVED_OUTPUT },
      { ...artifact, id: DISABLED, installation: DISABLED_INSTALLATION, resource_uri: 'ui://weather/forecast', input: {}, output: SAVED_OUTPUT },
      { ...artifact, id: MISSING_RESOURCE, resource_uri: 'ui://weather/missing', input: {}, output: { content: [] } },
    ],
    threads: [],
  };
}

const chromiumPath = findChromium();

describe('the artifact viewer in Chromium', { skip: chromiumPath === null ? NO_CHROMIUM : false }, () => {
  let browser: Browser;
  let service: TestService;

  before(async () => {
    const storage = createMemoryStorage();
    service = await startService({}, {
      storage,
      fetchUiResource: createFetchUiResource(),
      mounts: [{ path: '/demo/mcp', handle: createDemoMcpHandler() }],
    });
    // The installation names the service's own port, known only once it listens.
    await storage.importWorld(world(service.port));
    const launched = await launchChromium();
    assert.ok(launched, 'Chromium launches');
    browser = launched;
  });
  after(async () => {
    await browser?.close();
    await service?.close();
  });

  /** Opens the viewer page for `artifactId` in a fresh context, signed in as alice or not; collects page errors. */
  async function openViewer(t: TestContext, artifactId: string, signedIn: boolean): Promise<{ page: Page; errors: Error[] }> {
    const context = await browser.newContext();
    t.after(() => context.close());
    // The viewer is served from loopback, so Chromium's Local Network Access check should not apply
    // to it framing the loopback sandbox origin; the grant keeps the test independent of how a
    // Chromium version classifies `localhost` (see test/browser/sandbox.test.ts).
    await context.grantPermissions(['local-network-access'], { origin: service.consoleOrigin });
    if (signedIn) {
      await context.addCookies([{ name: 'console_session', value: 'token-alice', domain: 'localhost', path: '/' }]);
    }
    const page = await context.newPage();
    const errors: Error[] = [];
    page.on('pageerror', (error) => errors.push(error));
    await page.goto(`${service.consoleOrigin}${service.config.viewerPath}/${artifactId}`);
    return { page, errors };
  }

  /** What the viewer shows, for failure messages. */
  const viewerState = (page: Page) =>
    page.evaluate(() => ({
      state: document.documentElement.dataset.state,
      status: document.getElementById('status')?.textContent,
      frames: document.querySelectorAll('iframe').length,
    }));

  /** Waits for the viewer to reach `state`, then answers its status text. */
  async function settled(page: Page, state: string): Promise<string> {
    try {
      await page.waitForSelector(`html[data-state="${state}"]`, { state: 'attached', timeout: WAIT });
    } catch (error) {
      throw new Error(`the viewer never reached ${state}: ${JSON.stringify(await viewerState(page))}`, { cause: error });
    }
    return (await page.textContent('#status')) ?? '';
  }

  /** The frame of `owner` that an iframe element matching `selector` holds, waited for. */
  async function childFrame(owner: Page | Frame, selector: string): Promise<Frame> {
    const element = await owner.waitForSelector(selector, { state: 'attached', timeout: WAIT });
    const frame = await element.contentFrame();
    assert.ok(frame, `${selector} has a frame`);
    return frame;
  }

  it('hosts the app in the sandbox with the saved input and output, under its declared CSP', { timeout: 60_000 }, async (t) => {
    const { page, errors } = await openViewer(t, ARTIFACT, true);
    assert.equal(await settled(page, 'ready'), '');

    const outer = await page.$eval('#app > iframe', (f) => ({ sandbox: f.getAttribute('sandbox'), src: f.getAttribute('src') }));
    assert.equal(outer.sandbox, 'allow-scripts allow-same-origin');
    assert.ok(outer.src?.startsWith(`${service.sandboxOrigin}/artifacts/sandbox?policy=`), outer.src ?? 'no src');
    const proxy = await childFrame(page, '#app > iframe');
    const app = await childFrame(proxy, 'iframe');

    const done = 'body[data-initialized="true"][data-city="Paris"][data-summary="Sunny"][data-undeclared-fetch]';
    await app.waitForSelector(done, { state: 'attached', timeout: WAIT }).catch(async (error: unknown) => {
      const seen = await app.evaluate(() => ({ ...document.body.dataset })).catch(() => 'unreadable');
      throw new Error(`the app never got its data: ${JSON.stringify(seen)}`, { cause: error });
    });
    const data = await app.evaluate(() => ({ ...document.body.dataset }));
    assert.equal(data.initialized, 'true', 'ui/initialize completed');
    assert.equal(data.city, 'Paris', 'the saved input arrived as tool input');
    assert.equal(data.summary, 'Sunny', 'the saved output arrived as tool result');
    assert.equal(data.temperature, '21', 'with its structured content');
    assert.equal(data.undeclaredFetch, 'blocked');
    assert.equal(data.cspViolation, 'connect-src', 'the CSP, not the network, blocked the undeclared fetch');

    const first = await app.evaluate(() => {
      const el = document.head.firstElementChild;
      return { tag: el?.tagName, httpEquiv: el?.getAttribute('http-equiv'), content: el?.getAttribute('content') };
    });
    const declared = { ...EMPTY_CSP, connectDomains: [...WEATHER_APP_UI.csp.connectDomains] };
    assert.deepEqual(first, {
      tag: 'META',
      httpEquiv: 'Content-Security-Policy',
      content: buildCsp({ parentOrigin: service.consoleOrigin, csp: declared }, 'inner'),
    });

    // The app's size-changed notifications set the frame's height.
    await page.waitForSelector('#app > iframe[style*="height"]', { state: 'attached', timeout: WAIT });
    assert.match(await page.$eval('#app > iframe', (f) => f.style.height), /^\d+px$/);

    // No tool is offered to the app: a tools/call through the relay is answered with an error.
    const answer = await app.evaluate(
      (wait) =>
        new Promise((resolve) => {
          window.addEventListener('message', (event) => {
            if (event.data && event.data.id === 'viewer-test-call') resolve(event.data);
          });
          parent.postMessage({ jsonrpc: '2.0', id: 'viewer-test-call', method: 'tools/call',
            params: { name: 'get_forecast', arguments: { city: 'Oslo' } } }, '*');
          setTimeout(() => resolve('no answer'), wait);
        }),
      WAIT,
    );
    assert.equal((answer as { error?: { code?: number } }).error?.code, -32601, JSON.stringify(answer));

    assert.ok(!(await page.content()).includes('id="temperature"'), "the app's HTML is never in the viewer's DOM");
    assert.deepEqual(errors.map(String), []);
  });

  it('sends the saved input as tool input before the result', { timeout: 60_000 }, async (t) => {
    const { page, errors } = await openViewer(t, OTHER_INPUT, true);
    const app = await childFrame(await childFrame(page, '#app > iframe'), 'iframe');
    await app.waitForSelector('body[data-summary="Sunny"]', { state: 'attached', timeout: WAIT });
    assert.equal(await app.evaluate(() => document.body.dataset.city), 'Lyon');
    assert.deepEqual(errors.map(String), []);
  });

  it('shows unavailable for an artifact the user does not have', { timeout: 60_000 }, async (t) => {
    const { page, errors } = await openViewer(t, testId(99_999), true);
    assert.equal(await settled(page, 'unavailable'), 'This artifact is unavailable.');
    assert.equal((await viewerState(page)).frames, 0);
    assert.deepEqual(errors.map(String), []);
  });

  it('asks a signed-out user to sign in, refuses a wrong token, and shows the app after the form signs in', { timeout: 60_000 }, async (t) => {
    const { page, errors } = await openViewer(t, ARTIFACT, false);
    assert.equal(await settled(page, 'signed-out'), 'Sign in to the console to see this artifact.');
    assert.equal((await viewerState(page)).frames, 0);
    assert.equal(await page.isVisible('form#sign-in'), true);

    await page.fill('#token', 'token-nobody');
    await page.click('form#sign-in button[type=submit]');
    await page.waitForSelector('#sign-in-error:not(:empty)', { timeout: WAIT });
    assert.equal(await page.textContent('#sign-in-error'), 'That token was not accepted.');
    assert.equal(await page.evaluate(() => document.documentElement.dataset.state), 'signed-out');

    await page.fill('#token', 'token-alice');
    await page.press('#token', 'Enter');
    assert.equal(await settled(page, 'ready'), '');
    assert.equal(await page.isVisible('form#sign-in'), false);
    assert.equal(await page.textContent('#title'), 'Forecast');
    assert.equal(await page.textContent('#meta'), 'Weather · tool get_forecast');
    const app = await childFrame(await childFrame(page, '#app > iframe'), 'iframe');
    await app.waitForSelector('body[data-summary="Sunny"]', { state: 'attached', timeout: WAIT });
    assert.deepEqual(errors.map(String), []);
  });

  it('says so when the artifact\'s installation is gone, with Reload offered', { timeout: 60_000 }, async (t) => {
    const { page, errors } = await openViewer(t, DISABLED, true);
    assert.equal(await settled(page, 'unavailable'),
      "This artifact's app is no longer available: its provider installation is disabled, unauthorized or gone.");
    assert.equal((await viewerState(page)).frames, 0);
    assert.equal(await page.isVisible('#reload'), true);
    assert.deepEqual(errors.map(String), []);
  });

  it("shows failed, with the problem's detail, when the UI resource cannot be loaded", { timeout: 60_000 }, async (t) => {
    const { page, errors } = await openViewer(t, MISSING_RESOURCE, true);
    assert.equal(await settled(page, 'failed'), 'The artifact could not be loaded: MCP app resource could not be loaded');
    assert.equal((await viewerState(page)).frames, 0);
    assert.deepEqual(errors.map(String), []);
  });
});
