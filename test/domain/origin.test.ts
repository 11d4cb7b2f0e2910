import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  formatOrigin,
  parseHostHeader,
  parseOrigin,
  sameHostAndPort,
  sameOrigin,
} from '../../domain/origin.ts';

const hostArb = fc.oneof(fc.domain(), fc.ipV4(), fc.constant('localhost'), fc.constant('sandbox.localhost'));
const portArb = fc.integer({ min: 1, max: 65535 });
const schemeArb = fc.constantFrom('http' as const, 'https' as const);

describe('origins', () => {
  it('parses scheme, host and port, with default ports and a trailing slash', () => {
    assert.deepEqual(parseOrigin('http://sandbox.localhost:8080'), { scheme: 'http', host: 'sandbox.localhost', port: 8080 });
    assert.deepEqual(parseOrigin('HTTPS://Example.COM/'), { scheme: 'https', host: 'example.com', port: 443 });
    assert.deepEqual(parseOrigin('http://[::1]:3000'), { scheme: 'http', host: '[::1]', port: 3000 });
  });

  it('refuses what is not a bare http(s) origin', () => {
    for (const text of [
      '',
      'localhost:8080',
      'ftp://example.com',
      'http://example.com/path',
      'http://example.com?x',
      'http://user@example.com',
      'http://example.com:0',
      'http://example.com:65536',
      'http://exa mple.com',
      'http://example.com;',
      'http://*.example.com',
      'javascript:alert(1)',
      'http://',
    ]) {
      assert.equal(parseOrigin(text), null, text);
    }
  });

  it('formats without the default port and without a trailing slash', () => {
    assert.equal(formatOrigin(parseOrigin('https://a.example:443/')!), 'https://a.example');
    assert.equal(formatOrigin(parseOrigin('http://a.example:8443')!), 'http://a.example:8443');
  });

  it('property: format then parse is the identity', () => {
    fc.assert(
      fc.property(schemeArb, hostArb, portArb, (scheme, host, port) => {
        const origin = { scheme, host: host.toLowerCase(), port };
        assert.deepEqual(parseOrigin(formatOrigin(origin)), origin);
      }),
    );
  });

  it('property: 80 and 443 are equal to each other and to nothing else', () => {
    fc.assert(
      fc.property(hostArb, portArb, portArb, (host, a, b) => {
        const web = (port: number) => port === 80 || port === 443;
        const expected = a === b || (web(a) && web(b));
        assert.equal(sameHostAndPort({ host, port: a }, { host, port: b }), expected);
      }),
    );
  });

  it('property: hosts must be equal for host-and-port equality', () => {
    fc.assert(
      fc.property(hostArb, hostArb, portArb, (a, b, port) => {
        fc.pre(a.toLowerCase() !== b.toLowerCase());
        assert.equal(sameHostAndPort({ host: a.toLowerCase(), port }, { host: b.toLowerCase(), port }), false);
      }),
    );
  });

  it('full origin equality compares scheme too', () => {
    assert.equal(sameOrigin(parseOrigin('http://a.example')!, parseOrigin('http://a.example:80')!), true);
    assert.equal(sameOrigin(parseOrigin('http://a.example')!, parseOrigin('https://a.example')!), false);
  });

  it('reads a Host header with the port the scheme implies', () => {
    assert.deepEqual(parseHostHeader('Sandbox.Localhost', 'https'), { host: 'sandbox.localhost', port: 443 });
    assert.deepEqual(parseHostHeader('sandbox.localhost:8080', 'http'), { host: 'sandbox.localhost', port: 8080 });
    assert.equal(parseHostHeader('sandbox.localhost:99999', 'http'), null);
    assert.equal(parseHostHeader('a b', 'http'), null);
  });
});
