import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect } from 'node:net';
import fc from 'fast-check';
import { buildCsp } from '../../domain/csp.ts';
import { parseSandboxPolicy, sandboxUrl, type SandboxPolicy } from '../../domain/sandbox-policy.ts';
import { PERMISSIONS_POLICY } from '../../src/sandbox/routes.ts';
import { startService, type TestService } from '../support/service.ts';

const csp = {
  resourceDomains: ['https://cdn.example.com'],
  connectDomains: ['https://api.example.com'],
  frameDomains: [],
  baseUriDomains: [],
};

/** Sends a raw upgrade request and reads the first line of the answer. */
function upgrade(port: number, host: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
          'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
      );
    });
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString('utf8')));
    socket.on('close', () => resolve(text.split('\r\n')[0] ?? ''));
    socket.on('error', reject);
  });
}

describe('the sandbox origin', () => {
  let service: TestService;
  let sandboxHost: string;
  let policy: SandboxPolicy;
  let pagePath: string;

  before(async () => {
    service = await startService();
    sandboxHost = `sandbox.localhost:${service.port}`;
    policy = { parentOrigin: service.consoleOrigin, csp };
    const url = new URL(sandboxUrl(service.sandboxOrigin!, policy));
    pagePath = url.pathname + url.search;
  });
  after(() => service.close());

  const onSandbox = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
    service.ask({ method, path, headers: { host: sandboxHost, ...headers } });

  it('answers a policy seen before exactly as the first time, after many others pushed it out of the kept pages too', async () => {
    const first = await onSandbox(pagePath);
    // More distinct policies than pages are kept (512): the first is made again, and must not differ.
    for (let i = 0; i < 600; i++) {
      const other = { parentOrigin: service.consoleOrigin, csp: { ...csp, connectDomains: [`https://api${i}.example.com`] } };
      const url = new URL(sandboxUrl(service.sandboxOrigin!, other));
      const res = await onSandbox(url.pathname + url.search);
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-security-policy'], buildCsp(other, 'proxy'));
    }
    for (const again of [await onSandbox(pagePath), await onSandbox(pagePath)]) {
      assert.equal(again.status, 200);
      assert.equal(again.text, first.text);
      assert.equal(again.headers['content-security-policy'], first.headers['content-security-policy']);
      assert.notEqual(again.headers['x-request-id'], first.headers['x-request-id']);
    }
  });

  it('answers a kept page with the very bytes and headers of the page made afresh, each with its own request id', async () => {
    // A policy never asked before: its first answer is made, the next ones are the kept answer.
    const fresh = { parentOrigin: service.consoleOrigin, csp: { ...csp, resourceDomains: ['https://kept.example.com'] } };
    const url = new URL(sandboxUrl(service.sandboxOrigin!, fresh));
    const made = await onSandbox(url.pathname + url.search);
    assert.equal(made.status, 200);
    const steady = (headers: Record<string, unknown>) => Object.fromEntries(Object.entries(headers).filter(([name]) => name !== 'date' && name !== 'x-request-id'));
    const kept = [await onSandbox(url.pathname + url.search), await onSandbox(url.pathname + url.search)];
    for (const again of kept) {
      assert.equal(again.text, made.text);
      assert.deepEqual(steady(again.headers), steady(made.headers));
    }
    assert.equal(new Set([made, ...kept].map((res) => res.headers['x-request-id'])).size, 3);
    const head = await onSandbox(url.pathname + url.search, {}, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    assert.deepEqual(steady(head.headers), steady(made.headers));
    // The script too: one answer, written the same every time.
    const scripts = [await onSandbox('/artifacts/sandbox.js'), await onSandbox('/artifacts/sandbox.js')];
    assert.equal(scripts[0]!.text, scripts[1]!.text);
    assert.deepEqual(steady(scripts[0]!.headers), steady(scripts[1]!.headers));
    assert.equal(scripts[0]!.headers['cache-control'], 'no-store');
    assert.equal(scripts[0]!.headers['x-content-type-options'], 'nosniff');
  });

  it('serves the proxy page with every header of the spec', async () => {
    const res = await onSandbox(pagePath);
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers['content-security-policy'], buildCsp(policy, 'proxy'));
    assert.equal(
      res.headers['permissions-policy'],
      'camera=(), microphone=(), geolocation=(), clipboard-read=(), clipboard-write=(), fullscreen=(), ' +
        'display-capture=(), payment=(), usb=()',
    );
    assert.equal(PERMISSIONS_POLICY, res.headers['permissions-policy']);
    assert.equal(res.headers['referrer-policy'], 'no-referrer');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.match(res.headers['content-security-policy']!, new RegExp(`frame-ancestors ${service.consoleOrigin}$`));
  });

  it('writes the parent origin and the inner CSP into the page, escaped for an attribute', async () => {
    const res = await onSandbox(pagePath);
    const attr = (name: string) => new RegExp(`${name}="([^"]*)"`).exec(res.text)?.[1];
    assert.equal(attr('data-parent-origin'), service.consoleOrigin);
    const inner = buildCsp(policy, 'inner');
    assert.equal(attr('data-inner-csp'), inner.replaceAll("'", '&#39;'));
    assert.ok(!res.text.includes(inner), 'the raw quotes of the CSP must not appear unescaped');
    assert.ok(res.text.includes('<script src="/artifacts/sandbox.js"'));
  });

  it('removes the trailing slash of the parent origin', async () => {
    const res = await onSandbox(
      `/artifacts/sandbox?policy=${encodeURIComponent(JSON.stringify({ parentOrigin: `${service.consoleOrigin}/` }))}`,
    );
    assert.equal(res.status, 200);
    assert.ok(res.text.includes(`data-parent-origin="${service.consoleOrigin}"`));
    assert.match(String(res.headers['content-security-policy']), new RegExp(`frame-ancestors ${service.consoleOrigin}$`));
  });

  it('serves the proxy script with its headers; the script is ASCII', async () => {
    const res = await onSandbox('/artifacts/sandbox.js');
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'text/javascript');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.match(res.text, /ui\/notifications\/sandbox-/);
    assert.doesNotMatch(res.text, /[^\x00-\x7f]/);
  });

  it('answers HEAD like GET, without a body', async () => {
    const res = await onSandbox('/artifacts/sandbox.js', {}, 'HEAD');
    assert.equal(res.status, 200);
    assert.equal(res.text, '');
    assert.equal(res.headers['cache-control'], 'no-store');
  });

  const refused = async (path: string, reason: RegExp) => {
    const res = await onSandbox(path);
    assert.equal(res.status, 422, path.slice(0, 80));
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(res.headers['cache-control'], 'no-store');
    const body = res.json();
    assert.equal(body.status, 422);
    assert.ok(Array.isArray(body.errors) && body.errors.length > 0);
    assert.match(JSON.stringify(body.errors), reason);
  };

  it('422: a policy over 16384 characters (the listener takes it, no 431)', async () => {
    const padded = JSON.stringify({ parentOrigin: service.consoleOrigin, csp: { connectDomains: ['x'.repeat(16400)] } });
    await refused(`/artifacts/sandbox?policy=${encodeURIComponent(padded)}`, /at most 16384/);
  });

  it('accepts a policy of exactly 16384 characters', async () => {
    const base = JSON.stringify({ parentOrigin: service.consoleOrigin, csp: { connectDomains: [''] } });
    const exact = base.replace('[""]', `["${'x'.repeat(16384 - base.length)}"]`);
    assert.equal(exact.length, 16384);
    const res = await onSandbox(`/artifacts/sandbox?policy=${encodeURIComponent(exact)}`);
    assert.equal(res.status, 200);
  });

  it('422: a missing, repeated, non-JSON or invalid policy', async () => {
    await refused('/artifacts/sandbox', /policy/);
    const one = encodeURIComponent(JSON.stringify(policy));
    await refused(`/artifacts/sandbox?policy=${one}&policy=${one}`, /policy/);
    await refused('/artifacts/sandbox?policy=%7B', /must be JSON/);
    await refused(`/artifacts/sandbox?policy=${encodeURIComponent('"just a string"')}`, /JSON object/);
    await refused(`/artifacts/sandbox?policy=${encodeURIComponent('{"parentOrigin":"javascript:x"}')}`, /parentOrigin/);
    await refused(
      `/artifacts/sandbox?policy=${encodeURIComponent(`{"parentOrigin":"${service.consoleOrigin}","csp":{"connectDomains":[7]}}`)}`,
      /csp.connectDomains.0/,
    );
  });

  it('422: a parent origin equal to the request own origin', async () => {
    const self = encodeURIComponent(JSON.stringify({ parentOrigin: `http://${sandboxHost}` }));
    await refused(`/artifacts/sandbox?policy=${self}`, /sandbox origin itself/);
  });

  it('404 for any other path on the sandbox origin, even API and health paths', async () => {
    for (const path of ['/', '/healthz', '/readyz', '/api/openapi.json', '/api/artifacts/config', '/artifacts/sandbox/', '/artifacts']) {
      const res = await onSandbox(path);
      assert.equal(res.status, 404, path);
      assert.equal(res.headers['content-type'], 'application/problem+json');
    }
  });

  it('405 with Allow for another method on a sandbox path', async () => {
    const res = await onSandbox('/artifacts/sandbox.js', {}, 'POST');
    assert.equal(res.status, 405);
    assert.equal(res.headers.allow, 'GET, HEAD');
  });

  it('404 for the two sandbox paths on the console origin', async () => {
    for (const path of [pagePath, '/artifacts/sandbox.js']) {
      const res = await service.ask({ path, headers: { host: `localhost:${service.port}` } });
      assert.equal(res.status, 404, path);
      assert.equal(res.headers['content-security-policy'], undefined);
    }
  });

  it('refuses websockets on the sandbox origin and on the sandbox paths anywhere', async () => {
    assert.match(await upgrade(service.port, sandboxHost, '/artifacts/sandbox.js'), /^HTTP\/1.1 404/);
    assert.match(await upgrade(service.port, sandboxHost, '/api/console/live'), /^HTTP\/1.1 404/);
    assert.match(await upgrade(service.port, `localhost:${service.port}`, '/artifacts/sandbox'), /^HTTP\/1.1 404/);
  });

  it('property: no policy JSON, however hostile, yields anything but a 200 page or a 422', async () => {
    const hostileValue = fc.oneof(
      fc.jsonValue(),
      fc.record({
        parentOrigin: fc.oneof(fc.constant(service.consoleOrigin), fc.constant(`http://${sandboxHost}`), fc.string(), fc.webUrl()),
        csp: fc.oneof(
          fc.jsonValue(),
          fc.dictionary(
            fc.constantFrom('resourceDomains', 'connectDomains', 'frameDomains', 'baseUriDomains', '__proto__', 'x'),
            fc.array(fc.oneof(fc.string({ unit: 'binary' }), fc.webUrl(), fc.constant("'unsafe-eval'"), fc.jsonValue())),
          ),
        ),
      }, { requiredKeys: [] }),
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(hostileValue.map((value) => JSON.stringify(value)), fc.string({ unit: 'binary' })), async (text) => {
        const res = await onSandbox(`/artifacts/sandbox?policy=${encodeURIComponent(text)}`);
        assert.ok(res.status === 200 || res.status === 422, `${res.status} for ${text.slice(0, 200)}`);
        if (res.status === 200) {
          const parsed = parseSandboxPolicy(JSON.parse(text));
          assert.ok(parsed.ok);
          assert.equal(res.headers['content-security-policy'], buildCsp(parsed.value, 'proxy'));
        }
      }),
      { numRuns: 150 },
    );
  });
});

describe('the sandbox origin under another scheme', () => {
  let service: TestService;
  before(async () => {
    service = await startService({ TRUST_PROXY: 'true', ARTIFACT_SANDBOX_ORIGIN: 'https://sandbox.example.com' });
  });
  after(() => service.close());

  it('is served under its configured scheme, port 80 and 443 alike', async () => {
    const path = `/artifacts/sandbox?policy=${encodeURIComponent(JSON.stringify({ parentOrigin: 'https://console.example.com' }))}`;
    for (const host of ['sandbox.example.com', 'sandbox.example.com:443', 'sandbox.example.com:80']) {
      const res = await service.ask({ path, headers: { host, 'x-forwarded-proto': 'https' } });
      assert.equal(res.status, 200, host);
    }
  });

  it('refuses a parent that is the sandbox itself on port 80 or 443 alike (a regression: Host :443 with an http parent answered 200)', async () => {
    for (const parentOrigin of ['http://sandbox.example.com', 'https://sandbox.example.com', 'https://sandbox.example.com:443', 'http://sandbox.example.com:80']) {
      const path = `/artifacts/sandbox?policy=${encodeURIComponent(JSON.stringify({ parentOrigin }))}`;
      for (const host of ['sandbox.example.com', 'sandbox.example.com:443', 'sandbox.example.com:80']) {
        const res = await service.ask({ path, headers: { host, 'x-forwarded-proto': 'https' } });
        assert.equal(res.status, 422, `${parentOrigin} on ${host}`);
        assert.match(res.text, /sandbox origin itself/);
      }
    }
  });

  it('404 for the same host under http', async () => {
    const res = await service.ask({ path: '/artifacts/sandbox.js', headers: { host: 'sandbox.example.com', 'x-forwarded-proto': 'http' } });
    assert.equal(res.status, 404);
  });

  it('another port on the same host is not the sandbox origin', async () => {
    const res = await service.ask({ path: '/artifacts/sandbox.js', headers: { host: 'sandbox.example.com:8443', 'x-forwarded-proto': 'https' } });
    assert.equal(res.status, 404);
    // Nor a host the service answers to at all (ALLOWED_HOSTS): the console is not served there either.
    const health = await service.ask({ path: '/healthz', headers: { host: 'sandbox.example.com:8443' } });
    assert.equal(health.status, 421);
  });
});
