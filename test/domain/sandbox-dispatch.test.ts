import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isSandboxPath, requestSurface } from '../../domain/sandbox-dispatch.ts';

const hostArb = fc.constantFrom('sandbox.localhost', 'localhost', 'sandbox.example.com', 'console.example.com', '127.0.0.1');
const portArb = fc.constantFrom(80, 443, 8080, 8443, 3000);
const schemeArb = fc.constantFrom('http' as const, 'https' as const);
const defaultPort = (scheme: string) => (scheme === 'https' ? 443 : 80);

describe('sandbox-origin dispatch', () => {
  it('property: a request is on the sandbox exactly when its host and port match (80 ~ 443)', () => {
    fc.assert(
      fc.property(
        schemeArb, hostArb, portArb, // the configured sandbox origin
        schemeArb, hostArb, fc.option(portArb, { nil: undefined }), fc.boolean(), // the request
        (sScheme, sHost, sPort, rScheme, rHost, rPort, websocket) => {
          const hostHeader = rPort === undefined ? rHost : `${rHost}:${rPort}`;
          const effective = rPort ?? defaultPort(rScheme);
          const web = (p: number) => p === 80 || p === 443;
          const matches = rHost === sHost && (effective === sPort || (web(effective) && web(sPort)));
          const expected = !matches ? 'console' : rScheme === sScheme && !websocket ? 'sandbox' : 'refused';
          const got = requestSurface(
            { host: hostHeader, scheme: rScheme, websocket },
            { scheme: sScheme, host: sHost, port: sPort },
          );
          assert.equal(got, expected);
        },
      ),
    );
  });

  it('without a configured sandbox origin or a Host header, everything is console', () => {
    assert.equal(requestSurface({ host: 'sandbox.localhost:8080', scheme: 'http', websocket: false }, null), 'console');
    assert.equal(
      requestSurface({ host: undefined, scheme: 'http', websocket: false }, { scheme: 'http', host: 'a', port: 80 }),
      'console',
    );
  });

  it('knows exactly the two sandbox paths', () => {
    assert.equal(isSandboxPath('/artifacts/sandbox'), true);
    assert.equal(isSandboxPath('/artifacts/sandbox.js'), true);
    for (const path of ['/artifacts/sandbox/', '/artifacts/Sandbox', '/artifacts', '/', '/artifacts/sandbox.jsx']) {
      assert.equal(isSandboxPath(path), false, path);
    }
  });
});
