// The sandbox proxy in a real Chromium: a console page frames `sandbox_url` and speaks the MCP Apps
// sandbox proxy protocol (spec version 2026-01-26) with it, as a console would. Skipped, with a
// reason, where no Chromium is found.
//
// Callbacks passed to `page.evaluate` and `waitForFunction` stay anonymous and inline: tsx compiles
// with esbuild's keepNames, which wraps named inner functions in a `__name` helper the page lacks.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it, type TestContext } from 'node:test';
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { buildCsp } from '../../domain/csp.ts';
import { EMPTY_CSP, sandboxUrl, type SandboxPolicy } from '../../domain/sandbox-policy.ts';
import { findChromium, launchChromium, NO_CHROMIUM } from '../support/chromium.ts';
import { startService, type TestService } from '../support/service.ts';

/** The longest any single wait may take, so a broken relay fails the test instead of hanging it. */
const WAIT = 10_000;
const READY = 'ui/notifications/sandbox-proxy-ready';
const RESOURCE_READY = 'ui/notifications/sandbox-resource-ready';

/** A message the framing page received from the proxy frame. */
interface Received {
  readonly origin: string;
  readonly data: any;
}

/** What the framing page (see `framingPage`) exposes to the test. */
interface FramingWindow {
  received: Received[];
  frameLoads: number;
  sendToProxy(message: unknown): void;
}

/** JSON to embed in a `<script>` element: every `<` escaped, so no `</script>` in the data can end it. */
const scriptJson = (value: unknown): string => JSON.stringify(value).replaceAll('<', '\\u003c');

/**
 * A page that embeds the sandbox proxy as a console does: its message listener is attached before
 * the frame's `src` is set; it records every message from the frame, and answers the ready
 * notification (from the sandbox origin only) with `sandbox-resource-ready` and `resourceReady`.
 */
function framingPage(config: { sandboxUrl: string; sandboxOrigin: string; resourceReady: object }): string {
  return `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>console</title></head><body><script>
(function () {
  var config = ${scriptJson(config)};
  var frame = document.createElement('iframe');
  window.received = [];
  window.frameLoads = 0;
  window.sendToProxy = function (message) { frame.contentWindow.postMessage(message, config.sandboxOrigin); };
  window.addEventListener('message', function (event) {
    if (event.source !== frame.contentWindow) return;
    window.received.push({ origin: event.origin, data: event.data });
    var data = event.data;
    if (data && data.method === '${READY}' && event.origin === config.sandboxOrigin) {
      window.sendToProxy({ jsonrpc: '2.0', method: '${RESOURCE_READY}', params: config.resourceReady });
    }
  });
  frame.addEventListener('load', function () { window.frameLoads += 1; });
  frame.src = config.sandboxUrl;
  document.body.appendChild(frame);
})();
</script></body></html>`;
}

/**
 * An MCP app for the proxy to run. Its script has `report(method, params)`, which posts a JSON-RPC
 * notification to its parent (the proxy) for the proxy to relay to the console, and
 * `outcome(read)`, which says what a read gave or which error it threw.
 */
function appHtml(script: string, { title = 'probe app', head = '' } = {}): string {
  return `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>${title}</title>${head}</head><body><script>
function report(method, params) { parent.postMessage({ jsonrpc: '2.0', method: method, params: params }, '*'); }
function outcome(read) { try { return { read: String(read()) }; } catch (error) { return { threw: error.name }; } }
${script}
</script></body></html>`;
}

/** A second real server, on another port: CORS-open answers that name the path, and pages set by the test. */
async function startOtherServer() {
  const requests: { host: string; path: string }[] = [];
  const pages = new Map<string, string>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    requests.push({ host: req.headers.host ?? '', path });
    const page = pages.get(path);
    if (page !== undefined) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(page);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*', 'cache-control': 'no-store' });
    res.end(`reached ${path}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    requests,
    pages,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const chromiumPath = findChromium();

describe('the sandbox proxy in Chromium', { skip: chromiumPath === null ? NO_CHROMIUM : false }, () => {
  let browser: Browser;
  let service: TestService;
  let other: Awaited<ReturnType<typeof startOtherServer>>;
  let consoleOrigin: string;
  let sandboxOrigin: string;
  /** Declared in connectDomains. */
  let declared: string;
  /** The same server under another origin, declared nowhere. */
  let undeclared: string;
  let policy: SandboxPolicy;
  let url: string;

  before(async () => {
    service = await startService();
    other = await startOtherServer();
    consoleOrigin = service.consoleOrigin;
    assert.ok(service.sandboxOrigin, 'the test service has a sandbox origin');
    sandboxOrigin = service.sandboxOrigin;
    declared = `http://127.0.0.1:${other.port}`;
    undeclared = `http://localhost:${other.port}`;
    policy = { parentOrigin: consoleOrigin, csp: { ...EMPTY_CSP, connectDomains: [declared] } };
    url = sandboxUrl(sandboxOrigin, policy);
    const launched = await launchChromium();
    assert.ok(launched, 'Chromium launches');
    browser = launched;
  });
  after(async () => {
    await browser?.close();
    await service?.close();
    await other?.close();
  });

  /**
   * Opens the console page at `{console origin}/host` in a fresh browser context, served by request
   * interception, so its origin is exactly the policy's parentOrigin.
   */
  async function openConsole(
    t: TestContext,
    resourceReady: object,
    prepare: (context: BrowserContext) => Promise<void> = async () => {},
  ): Promise<Page> {
    const context = await browser.newContext();
    t.after(() => context.close());
    // A fulfilled response has no IP address, so Chromium's Local Network Access checks would count
    // this page as public and stop it from framing the loopback sandbox origin. A real console is
    // served from a real address; this grant stands in for that, for the console origin only.
    await context.grantPermissions(['local-network-access'], { origin: consoleOrigin });
    await prepare(context);
    const page = await context.newPage();
    const hostUrl = `${consoleOrigin}/host`;
    await page.route(hostUrl, (route) =>
      route.fulfill({ contentType: 'text/html', body: framingPage({ sandboxUrl: url, sandboxOrigin, resourceReady }) }),
    );
    await page.goto(hostUrl);
    return page;
  }

  const receivedBy = (page: Page): Promise<Received[]> =>
    page.evaluate(() => (window as unknown as FramingWindow).received);

  /** The first message with `method` that reached the console page, waited for. */
  async function waitForMethod(page: Page, method: string): Promise<Received> {
    try {
      const found = await page.waitForFunction(
        (wanted) => (window as unknown as FramingWindow).received.find((r) => r.data && r.data.method === wanted),
        method,
        { timeout: WAIT },
      );
      return (await found.jsonValue()) as Received;
    } catch (error) {
      const received = await receivedBy(page).catch(() => 'unreadable');
      throw new Error(`no ${method} reached the console page; it received ${JSON.stringify(received)}`, {
        cause: error,
      });
    }
  }

  const sendToProxy = (page: Page, message: unknown): Promise<void> =>
    page.evaluate((m) => (window as unknown as FramingWindow).sendToProxy(m), message);

  /** The proxy page's frame, found once its document is on the sandbox origin. */
  function proxyFrame(page: Page): Frame {
    const frame = page.frames().find((f) => f.url().startsWith(`${sandboxOrigin}/`));
    assert.ok(frame, `a frame on ${sandboxOrigin}; frames: ${page.frames().map((f) => f.url()).join(', ')}`);
    return frame;
  }

  it('relays JSON-RPC both ways after the ready handshake, and nothing of its own', { timeout: 60_000 }, async (t) => {
    const page = await openConsole(t, {
      html: appHtml(`
        window.addEventListener('message', function (event) {
          report('test/app-received', { origin: event.origin, data: event.data });
        });
        parent.postMessage({ jsonrpc: '2.0', id: 1, method: 'ui/initialize', params: {
          appInfo: { name: 'probe', version: '1.0.0' }, appCapabilities: {}, protocolVersion: '2026-01-26' } }, '*');
      `),
    });

    const ready = await waitForMethod(page, READY);
    assert.deepEqual(ready, { origin: sandboxOrigin, data: { jsonrpc: '2.0', method: READY, params: {} } });

    const initialize = await waitForMethod(page, 'ui/initialize');
    assert.deepEqual(initialize, {
      origin: sandboxOrigin,
      data: {
        jsonrpc: '2.0',
        id: 1,
        method: 'ui/initialize',
        params: { appInfo: { name: 'probe', version: '1.0.0' }, appCapabilities: {}, protocolVersion: '2026-01-26' },
      },
    });

    const answer = { jsonrpc: '2.0', id: 1, result: { protocolVersion: '2026-01-26', hostInfo: { name: 'console' } } };
    const toolInput = { jsonrpc: '2.0', method: 'ui/notifications/tool-input', params: { arguments: { q: 'x' } } };
    await sendToProxy(page, answer);
    // The proxy's own messages are never relayed, whichever side sends them.
    await sendToProxy(page, { jsonrpc: '2.0', method: RESOURCE_READY, params: { html: '<p>second</p>' } });
    await sendToProxy(page, { jsonrpc: '2.0', method: READY, params: {} });
    await sendToProxy(page, toolInput);
    await waitForMethod(page, 'test/app-received');
    await page.waitForFunction(
      () => (window as unknown as FramingWindow).received.filter((r) => r.data.method === 'test/app-received').length >= 2,
      null,
      { timeout: WAIT },
    );

    const appReceived = (await receivedBy(page))
      .filter((r) => r.data.method === 'test/app-received')
      .map((r) => r.data.params);
    assert.deepEqual(appReceived, [
      { origin: sandboxOrigin, data: answer },
      { origin: sandboxOrigin, data: toolInput },
    ]);
    const methods = (await receivedBy(page)).map((r) => r.data.method ?? null);
    assert.deepEqual(methods, [READY, 'ui/initialize', 'test/app-received', 'test/app-received']);
    assert.equal(await proxyFrame(page).evaluate(() => document.querySelectorAll('iframe').length), 1);
  });

  it('runs the app with scripts only, under the inner CSP as the first child of its head', { timeout: 60_000 }, async (t) => {
    const page = await openConsole(t, {
      html: appHtml(
        `report('test/document', {
          origin: self.origin,
          head: Array.prototype.map.call(document.head.children, function (el) {
            return { tag: el.tagName, httpEquiv: el.getAttribute('http-equiv'), content: el.getAttribute('content') };
          }),
        });`,
        // The app's own policy comes after the proxy's, and policies only ever add restrictions.
        { head: '<meta http-equiv="Content-Security-Policy" content="connect-src *">' },
      ),
      // Overrides the proxy must ignore: the frame gets scripts only and the server's CSP, never more.
      sandbox: 'allow-scripts allow-same-origin allow-top-navigation allow-popups allow-forms',
      csp: { connectDomains: ['*'], resourceDomains: ['*'] },
      permissions: { camera: {}, microphone: {} },
    });

    const { data } = await waitForMethod(page, 'test/document');
    const report = data.params as { origin: string; head: { tag: string; httpEquiv: string | null; content: string | null }[] };
    assert.equal(report.origin, 'null', 'the app has an opaque origin');
    assert.deepEqual(report.head[0], {
      tag: 'META',
      httpEquiv: 'Content-Security-Policy',
      content: buildCsp(policy, 'inner'),
    });
    assert.deepEqual(
      report.head.map((el) => el.tag),
      ['META', 'META', 'TITLE', 'META'],
      'the inner CSP, then the app head as written',
    );

    const frames = await proxyFrame(page).evaluate(() =>
      Array.prototype.map.call(document.querySelectorAll('iframe'), (f: HTMLIFrameElement) => ({
        sandbox: f.getAttribute('sandbox'),
        allow: f.getAttribute('allow'),
        srcdoc: f.hasAttribute('srcdoc'),
        src: f.getAttribute('src'),
      })),
    );
    assert.deepEqual(frames, [{ sandbox: 'allow-scripts', allow: null, srcdoc: true, src: null }]);
  });

  it("keeps the console's DOM and cookies out of the app's reach", { timeout: 60_000 }, async (t) => {
    const page = await openConsole(
      t,
      {
        html: appHtml(`report('test/reach', {
          cookie: outcome(function () { return document.cookie; }),
          parentDocument: outcome(function () { return parent.document.documentElement.outerHTML; }),
          topDocument: outcome(function () { return top.document.documentElement.outerHTML; }),
          topLocation: outcome(function () { return top.location.href; }),
        });`),
      },
      (context) =>
        context.addCookies([{ name: 'console_session', value: 'secret-session', domain: 'localhost', path: '/' }]),
    );

    // The cookie is there to steal: the console page itself can read it.
    assert.match(await page.evaluate(() => document.cookie), /console_session=secret-session/);

    const { data } = await waitForMethod(page, 'test/reach');
    const reach = data.params as Record<string, { read?: string; threw?: string }>;
    assert.ok(
      reach.cookie?.threw !== undefined || reach.cookie?.read === '',
      `document.cookie gave ${JSON.stringify(reach.cookie)}`,
    );
    assert.deepEqual(reach.parentDocument, { threw: 'SecurityError' });
    assert.deepEqual(reach.topDocument, { threw: 'SecurityError' });
    assert.deepEqual(reach.topLocation, { threw: 'SecurityError' });
    assert.doesNotMatch(JSON.stringify(data), /secret-session/);
  });

  it('lets the app fetch a declared connect domain and blocks an undeclared one', { timeout: 60_000 }, async (t) => {
    const page = await openConsole(t, {
      html: appHtml(`
        var violation = new Promise(function (resolve) {
          document.addEventListener('securitypolicyviolation', function (event) {
            resolve({ directive: event.effectiveDirective, blocked: event.blockedURI });
          }, { once: true });
        });
        function attempt(url) {
          return fetch(url).then(
            function (response) { return response.text().then(function (body) { return { status: response.status, body: body }; }); },
            function (error) { return { failed: error.name }; });
        }
        // Undeclared first: once the declared request has reached the server, the other one would have too.
        attempt(${scriptJson(`${undeclared}/connect/undeclared`)}).then(function (undeclared) {
          return attempt(${scriptJson(`${declared}/connect/declared`)}).then(function (declared) {
            return violation.then(function (violation) {
              report('test/fetches', { undeclared: undeclared, declared: declared, violation: violation });
            });
          });
        });
      `),
      // Ignored by the proxy: only the server's CSP counts.
      csp: { connectDomains: [undeclared] },
    });

    const { data } = await waitForMethod(page, 'test/fetches');
    assert.deepEqual(data.params, {
      undeclared: { failed: 'TypeError' },
      declared: { status: 200, body: 'reached /connect/declared' },
      violation: { directive: 'connect-src', blocked: `${undeclared}/connect/undeclared` },
    });
    const paths = other.requests.map((r) => r.path);
    assert.ok(paths.includes('/connect/declared'));
    assert.ok(!paths.includes('/connect/undeclared'), `the undeclared request reached the server: ${paths}`);

    // The undeclared origin is reachable from this browser: the CSP, not the network, stopped it.
    const control = await page.evaluate((u) => fetch(u).then((r) => r.text()), `${undeclared}/connect/control`);
    assert.equal(control, 'reached /connect/control');
    assert.ok(other.requests.some((r) => r.path === '/connect/control' && r.host === `localhost:${other.port}`));
  });

  it('drops a sandbox-resource-ready forged by the app and keeps the app', { timeout: 60_000 }, async (t) => {
    const forged = appHtml(`report('test/replaced', {});`, { title: 'forged app' });
    const page = await openConsole(t, {
      html: appHtml(`
        window.addEventListener('message', function (event) {
          if (event.data && event.data.method === 'test/ping') report('test/pong', { title: document.title });
        });
        report('test/before-forgery', {});
        parent.postMessage({ jsonrpc: '2.0', method: '${RESOURCE_READY}', params: { html: ${scriptJson(forged)} } }, '*');
        parent.postMessage({ jsonrpc: '2.0', method: '${READY}', params: {} }, '*');
        report('test/after-forgery', {});
      `),
    });

    // The proxy relays in order, so a relayed forgery would have arrived before this.
    await waitForMethod(page, 'test/after-forgery');
    await sendToProxy(page, { jsonrpc: '2.0', method: 'test/ping', params: {} });
    const pong = await waitForMethod(page, 'test/pong');
    assert.deepEqual(pong.data.params, { title: 'probe app' });

    const methods = (await receivedBy(page)).map((r) => r.data.method ?? null);
    assert.deepEqual(methods, [READY, 'test/before-forgery', 'test/after-forgery', 'test/pong']);
    const proxy = proxyFrame(page);
    assert.equal(await proxy.evaluate(() => document.querySelectorAll('iframe').length), 1);
    const [inner] = proxy.childFrames();
    assert.ok(inner);
    assert.equal(await inner.evaluate(() => document.title), 'probe app');
  });

  it('refuses to be framed by another origin (frame-ancestors)', { timeout: 60_000 }, async (t) => {
    // The same framing page, served by a real server on another origin.
    const evilOrigin = `http://127.0.0.1:${other.port}`;
    other.pages.set('/evil', framingPage({ sandboxUrl: url, sandboxOrigin, resourceReady: { html: appHtml('') } }));
    const context = await browser.newContext();
    t.after(() => context.close());
    const page = await context.newPage();
    const proxyRequests: string[] = [];
    page.on('request', (request) => {
      if (request.url().startsWith(sandboxOrigin)) proxyRequests.push(new URL(request.url()).pathname);
    });
    const refused = page.waitForEvent('console', {
      predicate: (message) => message.text().includes('frame-ancestors'),
      timeout: WAIT,
    });
    const failed = page.waitForEvent('requestfailed', {
      predicate: (request) => request.url() === url,
      timeout: WAIT,
    });

    await page.goto(`${evilOrigin}/evil`);
    const message = await refused;
    assert.equal(message.type(), 'error');
    assert.match(message.text(), new RegExp(`violates .*"frame-ancestors ${consoleOrigin}"`));
    assert.equal((await failed).failure()?.errorText, 'net::ERR_BLOCKED_BY_RESPONSE');
    // The blocked frame still fires load (on an error page); by then a proxy would have said ready.
    await page.waitForFunction(() => (window as unknown as FramingWindow).frameLoads > 0, null, { timeout: WAIT });

    assert.deepEqual(await receivedBy(page), []);
    assert.deepEqual(proxyRequests, ['/artifacts/sandbox'], 'the proxy script was never loaded');
    assert.deepEqual(
      page.frames().map((f) => f.url()),
      [`${evilOrigin}/evil`, 'chrome-error://chromewebdata/'],
    );
  });
});
