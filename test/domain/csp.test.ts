import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { buildCsp, CSP_DIRECTIVES, cspDirectives } from '../../domain/csp.ts';
import { cspSource } from '../../domain/csp-source.ts';
import type { SandboxPolicy } from '../../domain/sandbox-policy.ts';

const policy = (csp: Partial<SandboxPolicy['csp']> = {}, parentOrigin = 'http://localhost:8080'): SandboxPolicy => ({
  parentOrigin,
  csp: { resourceDomains: [], connectDomains: [], frameDomains: [], baseUriDomains: [], ...csp },
});

/** Strings a hostile provider might declare: plain origins mixed with injection attempts. */
const hostileEntry = fc.oneof(
  fc.webUrl({ withFragments: true, withQueryParameters: true }),
  fc.domain().map((d) => `https://${d}`),
  fc.constantFrom(
    '*', 'https:', 'http:', "'unsafe-eval'", "'self'", 'data:', 'blob:', 'https://a.example; script-src *',
    'https://a.example,https://b.example', 'https://a.example https://b.example', 'https://a.example\nscript-src *',
    'https://*.com', 'https://*', '"https://a.example"', 'https://a.example\u0000', 'https://*.cdn.example',
    'wss://live.example:8443', 'https://a.example:99999', 'HTTPS://UPPER.EXAMPLE/',
  ),
  fc.string({ unit: 'binary' }),
);
const listArb = fc.array(hostileEntry, { maxLength: 6 });
const cspArb = fc.record({
  resourceDomains: listArb,
  connectDomains: listArb,
  frameDomains: listArb,
  baseUriDomains: listArb,
});

const parse = (header: string): Map<string, string[]> => {
  const out = new Map<string, string[]>();
  for (const part of header.split('; ')) {
    const [name, ...sources] = part.split(' ');
    assert.ok(!out.has(name!), `directive ${name} appears twice`);
    out.set(name!, sources);
  }
  return out;
};

describe('the sandbox CSP builder', () => {
  it('builds the proxy form of the spec table exactly', () => {
    const p = policy({
      resourceDomains: ['https://cdn.example.com'],
      connectDomains: ['https://api.example.com', 'wss://live.example.com'],
      frameDomains: ['https://maps.example.com'],
      baseUriDomains: ['https://base.example.com'],
    }, 'http://localhost:8080/');
    assert.equal(
      buildCsp(p, 'proxy'),
      "default-src 'none'; script-src 'self' 'unsafe-inline' https://cdn.example.com; " +
        "style-src 'self' 'unsafe-inline' https://cdn.example.com; img-src 'self' data: https://cdn.example.com; " +
        "font-src 'self' data: https://cdn.example.com; media-src 'self' data: https://cdn.example.com; " +
        'connect-src https://api.example.com wss://live.example.com; frame-src \'self\' https://maps.example.com; ' +
        "base-uri https://base.example.com; object-src 'none'; form-action 'none'; worker-src 'none'; " +
        'frame-ancestors http://localhost:8080',
    );
  });

  it('builds the inner form with no frame-ancestors and no self frames', () => {
    assert.equal(
      buildCsp(policy(), 'inner'),
      "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
        "img-src 'self' data:; font-src 'self' data:; media-src 'self' data:; connect-src 'none'; " +
        "frame-src 'none'; base-uri 'none'; object-src 'none'; form-action 'none'; worker-src 'none'",
    );
    assert.match(buildCsp(policy(), 'proxy'), /frame-src 'self'; /);
  });

  it('drops entries that are not plain origins', () => {
    for (const entry of ['*', 'https:', "'unsafe-eval'", 'https://a.example; script-src *', 'https://a b', 'https://*.com',
      'https://a.example/path', 'data:', 'https://a.example,https://b.example', '"https://a.example"']) {
      assert.equal(cspSource(entry), null, entry);
    }
    assert.equal(cspSource('HTTPS://CDN.Example.com/'), 'https://cdn.example.com');
    assert.equal(cspSource('https://*.tiles.example.com'), 'https://*.tiles.example.com');
    assert.equal(cspSource('wss://live.example.com:8443'), 'wss://live.example.com:8443');
  });

  it('property: every directive of the table is present exactly once, in order', () => {
    fc.assert(
      fc.property(cspArb, fc.boolean(), (csp, proxy) => {
        const header = buildCsp(policy(csp), proxy ? 'proxy' : 'inner');
        const names = [...parse(header).keys()];
        const expected = proxy ? [...CSP_DIRECTIVES] : CSP_DIRECTIVES.filter((d) => d !== 'frame-ancestors');
        assert.deepEqual(names, expected);
      }),
    );
  });

  it('property: no input adds, splits or widens a directive', () => {
    fc.assert(
      fc.property(cspArb, (csp) => {
        for (const form of ['proxy', 'inner'] as const) {
          const header = buildCsp(policy(csp), form);
          assert.doesNotMatch(header, /[,"\u0000-\u001f\u007f]/);
          for (const [name, sources] of parse(header)) {
            for (const source of sources) {
              assert.ok(
                /^'(none|self|unsafe-inline)'$/.test(source) || source === 'data:' ||
                  /^(https?|wss?):\/\/(\*\.)?[a-z0-9.\-[\]:]+$/.test(source),
                `${name} got ${JSON.stringify(source)}`,
              );
              assert.notEqual(source, '*');
            }
          }
        }
      }),
    );
  });

  it('property: the inner form is never looser than the proxy form', () => {
    fc.assert(
      fc.property(cspArb, (csp) => {
        const proxy = cspDirectives(policy(csp), 'proxy');
        const inner = cspDirectives(policy(csp), 'inner');
        for (const [name, sources] of inner) {
          const outer = proxy.get(name);
          assert.ok(outer, `${name} missing from the proxy form`);
          if (sources.length === 1 && sources[0] === "'none'") continue;
          for (const source of sources) assert.ok(outer.includes(source), `${name}: ${source} not in the proxy form`);
        }
      }),
    );
  });

  it('a hand-built policy cannot inject through its parent origin', () => {
    const header = buildCsp(policy({}, "http://a.example; script-src *"), 'proxy');
    assert.match(header, /frame-ancestors 'none'$/);
  });
});
