// The pure rules of who joins, in what role, and what an admin may change (domain/accounts.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { accountName, emailDomain, joiningRole, normalEmail, removesLastAdmin, type Account, type OidcIdentity } from '../../domain/accounts.ts';

const local = fc.stringMatching(/^[a-z0-9._-]{1,20}$/);
const domain = fc.constantFrom('example.com', 'acme.org', 'elsewhere.net', 'sub.example.com');
const identity = fc.record({
  issuer: fc.constant('https://id.example.com'),
  subject: fc.stringMatching(/^[a-z0-9]{1,12}$/),
  email: fc.option(fc.tuple(local, domain).map(([l, d]) => `${l}@${d}`), { nil: null }),
  email_verified: fc.boolean(),
  name: fc.option(fc.string({ maxLength: 30 }), { nil: null }),
}) satisfies fc.Arbitrary<OidcIdentity>;
const policy = fc.record({
  allowedDomains: fc.subarray(['example.com', 'acme.org']),
  firstAdmin: fc.option(fc.tuple(local, domain).map(([l, d]) => `${l}@${d}`), { nil: null }),
});
const facts = fc.record({ invited: fc.boolean(), adminExists: fc.boolean() });

describe('who joins on a first sign-in (joiningRole)', () => {
  it('no one joins without a verified email', () => {
    fc.assert(fc.property(identity, policy, facts, (who, rules, known) => {
      if (who.email === null || !who.email_verified) assert.equal(joiningRole(who, rules, known), null);
    }));
  });

  it('a verified email joins exactly when invited, of an allowed domain, or the first admin while no admin exists', () => {
    fc.assert(fc.property(identity, policy, facts, (who, rules, known) => {
      fc.pre(who.email !== null && who.email_verified);
      const role = joiningRole(who, rules, known);
      const isFirstAdmin = rules.firstAdmin !== null && !known.adminExists && normalEmail(rules.firstAdmin) === normalEmail(who.email!);
      const allowed = rules.allowedDomains.includes(emailDomain(who.email!)!);
      assert.equal(role, isFirstAdmin ? 'admin' : allowed || known.invited ? 'member' : null);
    }));
  });

  it('an allowed domain is matched whole, in any case: a look-alike subdomain or suffix is not it', () => {
    const verified = (email: string): OidcIdentity => ({ issuer: 'i', subject: 's', email, email_verified: true, name: null });
    const rules = { allowedDomains: ['example.com'], firstAdmin: null };
    const none = { invited: false, adminExists: true };
    assert.equal(joiningRole(verified('Ada@EXAMPLE.com'), rules, none), 'member');
    for (const email of ['ada@sub.example.com', 'ada@evilexample.com', 'ada@example.com.evil.net', 'example.com@evil.net']) {
      assert.equal(joiningRole(verified(email), rules, none), null, email);
    }
  });

  it('a name is the token\'s, else the email\'s local part, else the subject; never empty', () => {
    fc.assert(fc.property(identity, (who) => {
      const name = accountName(who);
      assert.ok(name.length > 0 || (who.name?.trim() === '' && who.email === null && who.subject === ''));
      if (who.name !== null && who.name.trim() !== '') assert.equal(name, who.name.trim().slice(0, 200));
    }));
  });
});

describe('an admin change never leaves no active admin (removesLastAdmin)', () => {
  const account = fc.record({
    id: fc.constant('u'), name: fc.constant('U'), email: fc.constant(null), issuer: fc.constant(null), created_at: fc.constant('2026-01-01T00:00:00.000Z'),
    role: fc.constantFrom('admin' as const, 'member' as const), active: fc.boolean(),
  }) satisfies fc.Arbitrary<Account>;
  const change = fc.record({ active: fc.option(fc.boolean(), { nil: undefined }), role: fc.option(fc.constantFrom('admin' as const, 'member' as const), { nil: undefined }) }, { requiredKeys: [] });

  it('refused exactly when it takes the last active admin away', () => {
    fc.assert(fc.property(account, change, fc.integer({ min: 0, max: 3 }), (target, wanted, admins) => {
      const activeAdmins = Math.max(admins, target.active && target.role === 'admin' ? 1 : 0);
      const after = { active: wanted.active ?? target.active, role: wanted.role ?? target.role };
      const takesAdminAway = target.active && target.role === 'admin' && !(after.active && after.role === 'admin');
      assert.equal(removesLastAdmin(target, wanted, activeAdmins), takesAdminAway && activeAdmins <= 1);
    }));
  });
});
