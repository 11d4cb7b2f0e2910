import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { blockedAddress, parseIpv6 } from '../../domain/ip-ranges.ts';
import { checkWebhookUrl, normalHost } from '../../domain/webhook-url.ts';

const octet = fc.integer({ min: 0, max: 255 });
const v4 = (a: number, b: number, c: number, d: number) => `${a}.${b}.${c}.${d}`;

describe('webhook URL rule (contract section 12)', () => {
  it('an https URL to any name is taken; an http one only to a listed host', () => {
    fc.assert(fc.property(fc.domain(), fc.webPath(), (host, path) => {
      assert.equal(checkWebhookUrl(`https://${host}${path}`, []).ok, true);
      const plain = checkWebhookUrl(`http://${host}${path}`, []);
      assert.equal(plain.ok, false);
      assert.equal(checkWebhookUrl(`http://${host}${path}`, [normalHost(host)]).ok, true);
      assert.equal(checkWebhookUrl(`http://${host.toUpperCase()}${path}`, [normalHost(host)]).ok, true, 'hosts compare without case');
    }), { numRuns: 50 });
  });

  it('no other scheme, no credentials, no fragment', () => {
    for (const url of ['ftp://hooks.example.com/', 'file:///etc/passwd', 'javascript:alert(1)', 'https://user:pw@hooks.example.com/', 'https://hooks.example.com/#x', 'not a url', `https://hooks.example.com/${'a'.repeat(2001)}`]) {
      assert.equal(checkWebhookUrl(url, ['hooks.example.com']).ok, false, url);
    }
  });

  it('a host written as a loopback, private, link-local or metadata address is refused unless listed', () => {
    for (const host of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.100.100.200', '0.0.0.0', '[::1]', '[fd00:ec2::254]', '[fe80::1]', '[::ffff:10.0.0.1]', '[::ffff:7f00:1]', '[64:ff9b::a9fe:a9fe]']) {
      const refused = checkWebhookUrl(`https://${host}/in`, []);
      assert.equal(refused.ok, false, host);
      assert.equal(checkWebhookUrl(`https://${host}/in`, [normalHost(host)]).ok, true, `${host} listed`);
    }
    assert.equal(checkWebhookUrl('https://93.184.215.14/in', []).ok, true);
    assert.equal(checkWebhookUrl('https://[2606:4700::1111]/in', []).ok, true);
  });
});

describe('refused address ranges', () => {
  it('every address of 10/8, 127/8, 169.254/16, 172.16/12 and 192.168/16 is refused', () => {
    fc.assert(fc.property(octet, octet, octet, fc.integer({ min: 16, max: 31 }), (b, c, d, x) => {
      for (const address of [v4(10, b, c, d), v4(127, b, c, d), v4(169, 254, c, d), v4(172, x, c, d), v4(192, 168, c, d)]) {
        assert.notEqual(blockedAddress(address), null, address);
        // The same address written as IPv6 (mapped) is refused as well.
        assert.notEqual(blockedAddress(`::ffff:${address}`), null, `::ffff:${address}`);
      }
    }));
  });

  it('public IPv4 addresses pass', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 223 }), octet, octet, octet, (a, b, c, d) => {
      fc.pre(![0, 10, 127].includes(a) && !(a === 169 && b === 254) && !(a === 172 && b >= 16 && b <= 31) && !(a === 192 && b === 168));
      fc.pre(!(a === 100 && b >= 64 && b <= 127) && !(a === 192 && b === 0 && c === 0) && !(a === 198 && (b === 18 || b === 19)) && v4(a, b, c, d) !== '168.63.129.16');
      assert.equal(blockedAddress(v4(a, b, c, d)), null, v4(a, b, c, d));
    }));
  });

  it('unique-local, link-local, loopback and multicast IPv6 are refused; global unicast passes', () => {
    fc.assert(fc.property(fc.ipV6(), (address) => {
      const groups = parseIpv6(address);
      assert.notEqual(groups, null, address);
      const first = groups![0]!;
      if ((first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80 || (first & 0xff00) === 0xff00) assert.notEqual(blockedAddress(address), null, address);
    }));
    for (const address of ['::1', '::', 'fd00:ec2::254', 'fe80::1%eth0', 'ff02::1', 'fc00::1']) assert.notEqual(blockedAddress(address), null, address);
    for (const address of ['2606:4700:4700::1111', '2001:4860:4860::8888']) assert.equal(blockedAddress(address), null, address);
  });

  it('what is no address is refused', () => {
    for (const text of ['', 'localhost', '1.2.3', '1.2.3.256', '01.2.3.4', ':::', '1::2::3', 'g::1']) assert.notEqual(blockedAddress(text), null, text);
  });
});
