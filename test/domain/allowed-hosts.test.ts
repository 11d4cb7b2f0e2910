import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { distinctHosts, isAllowedHost, loopbackHosts } from '../../domain/allowed-hosts.ts';
import { parseHostHeader } from '../../domain/origin.ts';

const hostArb = fc.oneof(fc.domain(), fc.ipV4(), fc.constant('localhost'));
const portArb = fc.integer({ min: 1, max: 65535 });
const schemeArb = fc.constantFrom('http' as const, 'https' as const);

describe('allowed hosts', () => {
  it('answers a listed host at its port, and no other host or port', () => {
    fc.assert(
      fc.property(hostArb, hostArb, portArb, portArb, schemeArb, (listed, asked, port, other, scheme) => {
        const allowed = [{ host: listed.toLowerCase(), port }];
        const same = parseHostHeader(`${listed}:${port}`, scheme)!;
        assert.equal(isAllowedHost(same, allowed, 1), true);
        const elsewhere = parseHostHeader(`${asked}:${other}`, scheme)!;
        const web = (p: number) => p === 80 || p === 443;
        const expected = asked.toLowerCase() === listed.toLowerCase() && (other === port || (web(other) && web(port)));
        assert.equal(isAllowedHost(elsewhere, allowed, 1), expected);
      }),
    );
  });

  it('reads a listed port of 0 as the port listened on', () => {
    const allowed = loopbackHosts(0);
    for (const host of ['localhost:4321', '127.0.0.1:4321', '[::1]:4321']) assert.equal(isAllowedHost(parseHostHeader(host, 'http')!, allowed, 4321), true, host);
    assert.equal(isAllowedHost(parseHostHeader('localhost:4322', 'http')!, allowed, 4321), false);
  });

  it('takes a host without a port as 80 and 443 alike', () => {
    const allowed = [parseHostHeader('console.example.com', 'http')!];
    assert.equal(isAllowedHost(parseHostHeader('console.example.com', 'https')!, allowed, 8080), true);
    assert.equal(isAllowedHost(parseHostHeader('console.example.com:8443', 'https')!, allowed, 8080), false);
  });

  it('keeps each host and port once', () => {
    assert.deepEqual(distinctHosts([{ host: 'a', port: 1 }, { host: 'a', port: 2 }, { host: 'a', port: 1 }]), [{ host: 'a', port: 1 }, { host: 'a', port: 2 }]);
  });
});
