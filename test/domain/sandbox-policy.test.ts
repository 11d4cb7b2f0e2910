import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  MAX_POLICY_LENGTH,
  parseSandboxPolicy,
  parseSandboxPolicyText,
  sandboxUrl,
  serializeSandboxPolicy,
  type SandboxPolicy,
} from '../../domain/sandbox-policy.ts';

const originArb = fc
  .tuple(fc.constantFrom('http', 'https'), fc.domain(), fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }))
  .map(([scheme, host, port]) => {
    const implied = scheme === 'https' ? 443 : 80;
    return port === undefined || port === implied ? `${scheme}://${host}` : `${scheme}://${host}:${port}`;
  });
const policyArb: fc.Arbitrary<SandboxPolicy> = fc.record({
  parentOrigin: originArb,
  csp: fc.record({
    resourceDomains: fc.array(fc.string()),
    connectDomains: fc.array(fc.string()),
    frameDomains: fc.array(fc.string()),
    baseUriDomains: fc.array(fc.string()),
  }, { noNullPrototype: true }),
}, { noNullPrototype: true });

describe('ArtifactSandboxPolicy', () => {
  it('reads the MCP Apps aliases; missing lists are empty', () => {
    const parsed = parseSandboxPolicy({ parentOrigin: 'http://localhost:8080/', csp: { connectDomains: ['https://a.example'] } });
    assert.deepEqual(parsed, {
      ok: true,
      value: {
        parentOrigin: 'http://localhost:8080',
        csp: { resourceDomains: [], connectDomains: ['https://a.example'], frameDomains: [], baseUriDomains: [] },
      },
    });
    const bare = parseSandboxPolicy({ parentOrigin: 'https://console.example' });
    assert.ok(bare.ok);
    assert.deepEqual(bare.value.csp.resourceDomains, []);
  });

  it('names what is wrong', () => {
    const cases: [unknown, string][] = [
      [null, ''],
      [[], ''],
      [{}, 'parentOrigin'],
      [{ parentOrigin: 'not an origin' }, 'parentOrigin'],
      [{ parentOrigin: 'http://a.example', csp: 'x' }, 'csp'],
      [{ parentOrigin: 'http://a.example', csp: { resourceDomains: 'x' } }, 'csp.resourceDomains'],
      [{ parentOrigin: 'http://a.example', csp: { frameDomains: [1] } }, 'csp.frameDomains.0'],
    ];
    for (const [value, path] of cases) {
      const parsed = parseSandboxPolicy(value);
      assert.equal(parsed.ok, false);
      if (!parsed.ok) assert.equal(parsed.error[0]!.path, path, JSON.stringify(value));
    }
  });

  it('refuses a policy text that is too long or not JSON', () => {
    const long = parseSandboxPolicyText(' '.repeat(MAX_POLICY_LENGTH + 1));
    assert.ok(!long.ok && /at most 16384/.test(long.error[0]!.message));
    const broken = parseSandboxPolicyText('{');
    assert.ok(!broken.ok && broken.error[0]!.path === 'policy');
  });

  it('property: serialize then parse is the identity', () => {
    fc.assert(
      fc.property(policyArb, (policy) => {
        assert.deepEqual(parseSandboxPolicyText(serializeSandboxPolicy(policy)), { ok: true, value: policy });
      }),
    );
  });

  it('property: the sandbox URL carries the policy and nothing else', () => {
    fc.assert(
      fc.property(originArb, policyArb, (sandbox, policy) => {
        const url = new URL(sandboxUrl(sandbox, policy));
        assert.equal(url.origin, new URL(sandbox).origin);
        assert.equal(url.pathname, '/artifacts/sandbox');
        assert.deepEqual([...url.searchParams.keys()], ['policy']);
        assert.equal(url.searchParams.get('policy'), serializeSandboxPolicy(policy));
      }),
    );
  });
});
