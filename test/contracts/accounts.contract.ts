import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Account, Credential, JoinPolicy, OidcIdentity, Role } from '../../domain/accounts.ts';
import type { World, WorldUser } from '../../domain/world.ts';
import type { Accounts, NewAccessToken } from '../../ports/accounts.ts';
import type { Storage } from '../../ports/storage.ts';
import { sha256 } from '../support/ids.ts';

/** One backend for the suite: a storage, another over the same data (a second instance), and its end. */
export interface AccountsBackend {
  readonly storage: Storage;
  readonly reopen: () => Promise<Storage>;
  readonly close: () => Promise<void>;
}

/** The suite's clock: instants are chosen, never read, so expiry is exact. */
const T0 = Date.UTC(2026, 2, 1, 12, 0, 0);
const at = (ms: number) => new Date(T0 + ms).toISOString();
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** Rounds of each race: enough for an interleaving to show where a check and its write are not one decision. */
const ROUNDS = 8;

/** A world of users only. */
const worldOf = (users: readonly WorldUser[]): World => ({ users, projects: [], agents: [], channels: [], installations: [], artifacts: [], threads: [] });

/** A world user with a fresh id; its token is `token-<id>`. */
const worldUser = (role: Role = 'member', id = `user-${randomUUID()}`): WorldUser => ({ id, name: `Name ${id}`, token_hash: sha256(`token-${id}`), role });
const tokenOf = (user: WorldUser) => sha256(`token-${user.id}`);

/** A verified identity at a fresh issuer (so tests sharing a storage never meet), with the given email. */
const identity = (email: string | null, over: Partial<OidcIdentity> = {}): OidcIdentity => ({
  issuer: `https://issuer-${randomUUID()}.example`, subject: randomUUID(), email, email_verified: true, name: null, ...over,
});

const policy = (over: Partial<JoinPolicy> = {}): JoinPolicy => ({ allowedDomains: ['example.com'], firstAdmin: null, ...over });

/**
 * The Accounts contract (CONTRACT section 13): credentials found by hash only while unexpired and their user
 * active, revoked at once; personal tokens listed without hashes and marked used at most once a minute;
 * accounts created only as the join policy allows, one per identity whatever the race; never no active admin,
 * whatever the race; one-use sign-in flows; invites kept from the first; an admin's deactivation outlives a
 * world re-import.
 */
export function accountsContract(name: string, open: () => Promise<AccountsBackend>): void {
  describe(`accounts contract: ${name}`, () => {
    let backend: AccountsBackend;
    let other: Storage;
    before(async () => {
      backend = await open();
      other = await backend.reopen();
    });
    after(() => backend.close());
    const accounts = (): Accounts => backend.storage.accounts;

    /** World users imported into the shared storage (every other world user is kept: an import upserts). */
    const imported = async (...users: WorldUser[]) => {
      await backend.storage.importWorld(worldOf(users));
      return users;
    };
    /** A session for `user` from `from` (ms after T0) for `ms`; answers its hash. */
    const session = async (userId: string, from = 0, ms = HOUR) => {
      const hash = sha256(randomUUID());
      await accounts().startSession({ hash, user_id: userId, created_at: at(from), expires_at: at(from + ms) });
      return hash;
    };
    /** A personal token for `user`, made at `made`, ending after `ms` (null: never). */
    const token = async (userId: string, made = 0, ms: number | null = null, tokenName = 'script'): Promise<NewAccessToken> => {
      const created: NewAccessToken = {
        id: randomUUID(), user_id: userId, name: tokenName, hash: sha256(randomUUID()), created_at: at(made), expires_at: ms === null ? null : at(made + ms),
      };
      await accounts().createToken(created);
      return created;
    };
    const named = (user: WorldUser) => ({ id: user.id, name: user.name });
    /** Who a credential names, without how (checked on its own below). */
    const idName = (found: Credential | null) => (found === null ? null : { id: found.id, name: found.name });

    /** A backend of its own, for what counts every account (admins, pages); closed after `use`. */
    const alone = async (use: (storage: Storage, second: Storage) => Promise<void>) => {
      const own = await open();
      try {
        await use(own.storage, await own.reopen());
      } finally {
        await own.close();
      }
    };

    describe('credentials', () => {
      it('a world token, a session and a personal token each name their user; anything else names nobody', async () => {
        const [user] = await imported(worldUser());
        const sessionHash = await session(user!.id);
        const personal = await token(user!.id);
        assert.deepEqual(idName(await accounts().userByCredential(tokenOf(user!), at(1))), named(user!));
        assert.deepEqual(idName(await accounts().userByCredential(sessionHash, at(1))), named(user!));
        assert.deepEqual(idName(await accounts().userByCredential(personal.hash, at(1))), named(user!));
        assert.deepEqual(idName(await other.accounts.userByCredential(sessionHash, at(1))), named(user!), 'another instance finds the session');
        assert.equal(await accounts().userByCredential(sha256(randomUUID()), at(1)), null);
        assert.equal(await accounts().userByCredential(`token-${user!.id}`, at(1)), null, 'a token itself is no hash');
        // How each signed in, and until when.
        assert.deepEqual(await accounts().userByCredential(tokenOf(user!), at(1)), { ...named(user!), via: 'world', expires_at: null });
        assert.deepEqual(await accounts().userByCredential(sessionHash, at(1)), { ...named(user!), via: 'session', expires_at: at(HOUR) });
        assert.deepEqual(await accounts().userByCredential(personal.hash, at(1)), { ...named(user!), via: 'token', expires_at: null });
      });

      it('no session or token is stored for a deactivated user', async () => {
        const [user] = await imported(worldUser());
        assert.equal(typeof (await accounts().changeAccount(user!.id, { active: false })), 'object');
        const hash = sha256(randomUUID());
        assert.equal(await accounts().startSession({ hash, user_id: user!.id, created_at: at(0), expires_at: at(HOUR) }), false);
        const refused: NewAccessToken = { id: randomUUID(), user_id: user!.id, name: 'x', hash: sha256(randomUUID()), created_at: at(0), expires_at: null };
        assert.equal(await accounts().createToken(refused), false);
        assert.equal(await accounts().changeAccount(user!.id, { active: true }) !== 'not_found', true);
        assert.equal(await accounts().userByCredential(hash, at(1)), null, 'nothing came back with the reactivation');
        assert.equal(await accounts().userByCredential(refused.hash, at(1)), null);
        assert.deepEqual(await accounts().listTokens(user!.id), []);
        assert.equal(await accounts().startSession({ hash, user_id: user!.id, created_at: at(0), expires_at: at(HOUR) }), true);
      });

      it('an expired session or personal token names nobody; one without an end never expires', async () => {
        const [user] = await imported(worldUser());
        const sessionHash = await session(user!.id, 0, HOUR);
        const ending = await token(user!.id, 0, 2 * HOUR);
        const endless = await token(user!.id, 0, null);
        assert.deepEqual(idName(await accounts().userByCredential(sessionHash, at(HOUR - 1))), named(user!));
        assert.equal(await accounts().userByCredential(sessionHash, at(HOUR)), null, 'a session ends at its expiry');
        assert.deepEqual(idName(await accounts().userByCredential(ending.hash, at(2 * HOUR - 1))), named(user!));
        assert.equal(await accounts().userByCredential(ending.hash, at(2 * HOUR)), null, 'a token ends at its expiry');
        assert.deepEqual(idName(await accounts().userByCredential(endless.hash, at(1000 * 24 * HOUR))), named(user!));
      });

      it('endSession and revokeToken stop a credential at once; another user cannot revoke a token', async () => {
        const [user, stranger] = await imported(worldUser(), worldUser());
        const sessionHash = await session(user!.id);
        const personal = await token(user!.id);
        await accounts().endSession(sessionHash);
        assert.equal(await accounts().userByCredential(sessionHash, at(1)), null);
        await accounts().endSession(sessionHash);
        assert.equal(await accounts().revokeToken(stranger!.id, personal.id), false, 'not the stranger\'s token');
        assert.deepEqual(idName(await accounts().userByCredential(personal.hash, at(1))), named(user!), 'still valid after the refused revocation');
        assert.equal(await accounts().revokeToken(user!.id, randomUUID()), false, 'no such token');
        assert.equal(await accounts().revokeToken(user!.id, 'not-a-uuid'), false, 'no such token');
        assert.equal(await accounts().revokeToken(user!.id, personal.id), true);
        assert.equal(await accounts().userByCredential(personal.hash, at(2)), null);
        assert.equal(await other.accounts.userByCredential(personal.hash, at(2)), null, 'on another instance too');
        assert.equal(await accounts().revokeToken(user!.id, personal.id), false, 'revoked already');
        assert.deepEqual(await accounts().listTokens(user!.id), []);
      });

      it('listTokens: the owner\'s tokens, newest first, without their hashes', async () => {
        const [user, stranger] = await imported(worldUser(), worldUser());
        const made = [await token(user!.id, 5_000, null, 'b'), await token(user!.id, 1_000, HOUR, 'a'), await token(user!.id, 9_000, null, 'c')];
        await token(stranger!.id, 7_000);
        const expected = [...made].sort((x, y) => Date.parse(y.created_at) - Date.parse(x.created_at))
          .map((t) => ({ id: t.id, name: t.name, created_at: t.created_at, expires_at: t.expires_at, last_used_at: null }));
        assert.deepEqual(await accounts().listTokens(user!.id), expected);
        assert.deepEqual((await accounts().listTokens(user!.id)).map((t) => t.name), ['c', 'b', 'a']);
        assert.deepEqual(await accounts().listTokens(`user-${randomUUID()}`), []);
      });

      it('a personal token is marked used, and not written again within a minute', async () => {
        const [user] = await imported(worldUser());
        const personal = await token(user!.id);
        const lastUsed = async () => (await accounts().listTokens(user!.id)).find((t) => t.id === personal.id)!.last_used_at;
        assert.equal(await lastUsed(), null);
        await accounts().userByCredential(personal.hash, at(10_000));
        assert.equal(await lastUsed(), at(10_000));
        await Promise.all([accounts().userByCredential(personal.hash, at(40_000)), other.accounts.userByCredential(personal.hash, at(69_999))]);
        assert.equal(await lastUsed(), at(10_000), 'used within the minute: not rewritten');
        await accounts().userByCredential(personal.hash, at(70_000));
        assert.equal(await lastUsed(), at(70_000), 'a minute later it is');
        await accounts().userByCredential(sha256(randomUUID()), at(500_000));
        assert.equal(await lastUsed(), at(70_000), 'another hash marks nothing');
      });

      it('a deactivated user\'s world token, sessions and tokens name nobody; reactivation revives the world token only', async () => {
        const [user] = await imported(worldUser());
        const sessionHash = await session(user!.id);
        const personal = await token(user!.id);
        const changed = await accounts().changeAccount(user!.id, { active: false });
        assert.equal(typeof changed === 'object' && changed.active, false);
        for (const hash of [tokenOf(user!), sessionHash, personal.hash]) assert.equal(await accounts().userByCredential(hash, at(1)), null);
        assert.deepEqual(await accounts().listTokens(user!.id), [], 'its tokens are revoked');
        const back = await accounts().changeAccount(user!.id, { active: true });
        assert.equal(typeof back === 'object' && back.active, true);
        assert.deepEqual(idName(await accounts().userByCredential(tokenOf(user!), at(2))), named(user!), 'the world token works again');
        assert.equal(await accounts().userByCredential(sessionHash, at(2)), null, 'its sessions were ended');
        assert.equal(await accounts().userByCredential(personal.hash, at(2)), null, 'its tokens were revoked');
      });
    });

    describe('admins', () => {
      it('changeAccount answers the account after the change, or not_found', async () => {
        // Another active admin, so this one may stop being one.
        const [user] = await imported(worldUser('member'), worldUser('admin'));
        const before = await accounts().account(user!.id);
        assert.deepEqual(await accounts().changeAccount(user!.id, { role: 'admin' }), { ...before!, role: 'admin' });
        assert.deepEqual(await accounts().account(user!.id), { ...before!, role: 'admin' });
        assert.deepEqual(await accounts().changeAccount(user!.id, { role: 'member', active: false }), { ...before!, role: 'member', active: false });
        assert.equal(await accounts().changeAccount(`user-${randomUUID()}`, { active: false }), 'not_found');
        assert.equal(await accounts().account(`user-${randomUUID()}`), null);
      });

      it('refuses to demote or deactivate the last active admin', async () => {
        await alone(async (storage) => {
          const admin = worldUser('admin');
          const member = worldUser('member');
          await storage.importWorld(worldOf([admin, member]));
          assert.equal(await storage.accounts.changeAccount(admin.id, { role: 'member' }), 'last_admin');
          assert.equal(await storage.accounts.changeAccount(admin.id, { active: false }), 'last_admin');
          assert.equal((await storage.accounts.account(admin.id))!.role, 'admin', 'unchanged');
          assert.deepEqual(idName(await storage.accounts.userByCredential(tokenOf(admin), at(1))), named(admin));
          // An inactive admin is no admin to leave: with the member promoted, the first may go.
          assert.equal((await storage.accounts.changeAccount(member.id, { role: 'admin' }) as Account).role, 'admin');
          assert.equal((await storage.accounts.changeAccount(admin.id, { active: false }) as Account).active, false);
          assert.equal(await storage.accounts.changeAccount(member.id, { role: 'member' }), 'last_admin', 'the deactivated admin does not count');
        });
      });

      it('two concurrent demotions of the last two admins leave one', async () => {
        await alone(async (storage, second) => {
          const a = worldUser('admin', 'admin-a');
          const b = worldUser('admin', 'admin-b');
          for (let round = 0; round < ROUNDS; round++) {
            // A re-import makes both admins again (the world's role); neither was deactivated.
            await storage.importWorld(worldOf([a, b]));
            const change = round % 2 === 0 ? { role: 'member' as const } : { active: false };
            const outcomes = await Promise.all([storage.accounts.changeAccount(a.id, change), second.accounts.changeAccount(b.id, { role: 'member' })]);
            assert.equal(outcomes.filter((o) => o === 'last_admin').length, 1, `round ${round}: one refused (${JSON.stringify(outcomes)})`);
            const admins = (await storage.accounts.listAccounts({ limit: 10, after: null })).items.filter((x) => x.active && x.role === 'admin');
            assert.equal(admins.length, 1, `round ${round}: one active admin left`);
            await storage.accounts.changeAccount(a.id, { active: true });
          }
        });
      });

      it('listAccounts pages by id', async () => {
        await alone(async (storage) => {
          const users = ['u-c', 'u-a', 'u-e', 'u-b', 'u-d'].map((id) => worldUser('member', id));
          await storage.importWorld(worldOf(users));
          const pages = [];
          let after: string | null = null;
          do {
            const page = await storage.accounts.listAccounts({ limit: 2, after });
            pages.push(page.items.map((a) => a.id));
            after = page.next;
          } while (after !== null);
          assert.deepEqual(pages, [['u-a', 'u-b'], ['u-c', 'u-d'], ['u-e']]);
          const page = await storage.accounts.listAccounts({ limit: 5, after: null });
          assert.equal(page.next, null, 'no next page after the last account');
          assert.deepEqual(page.items[0], await storage.accounts.account('u-a'));
          assert.deepEqual(page.items[0], { ...page.items[0], name: 'Name u-a', email: null, role: 'member', active: true, issuer: null });
        });
      });

      it('a world re-import upserts name and role, and keeps an admin\'s deactivation and the creation time', async () => {
        const [user] = await imported(worldUser('member'));
        const created = (await accounts().account(user!.id))!;
        await accounts().changeAccount(user!.id, { active: false });
        await imported({ ...user!, name: 'Renamed', role: 'admin' });
        assert.deepEqual(await accounts().account(user!.id), { ...created, name: 'Renamed', role: 'admin', active: false });
        assert.equal(await accounts().userByCredential(tokenOf(user!), at(1)), null, 'still deactivated');
        await backend.storage.importWorld(worldOf([{ ...user!, name: 'Renamed', role: 'admin' }]));
        assert.equal((await other.accounts.account(user!.id))!.active, false, 'as another instance reads it');
      });
    });

    describe('sign-in of an identity', () => {
      it('creates an account for a verified email of an allowed domain, then finds and updates it', async () => {
        const person = identity('Ann.Lee@Example.COM', { name: ' Ann Lee ' });
        const id = randomUUID();
        const first = await accounts().signInIdentity(person, policy(), id, at(5_000));
        const account: Account = { id, name: 'Ann Lee', email: 'ann.lee@example.com', role: 'member', active: true, issuer: person.issuer, created_at: at(5_000) };
        assert.deepEqual(first, { ok: true, account, created: true });
        assert.deepEqual(await accounts().account(id), account);
        const renamed = { ...person, name: 'Ann Smith', email: 'ann.smith@example.com' };
        assert.deepEqual(await other.accounts.signInIdentity(renamed, policy(), randomUUID(), at(9_000)),
          { ok: true, account: { ...account, name: 'Ann Smith', email: 'ann.smith@example.com' }, created: false });
        // A token without an email keeps the email known.
        assert.deepEqual(await accounts().signInIdentity({ ...renamed, email: null }, policy({ allowedDomains: [] }), randomUUID(), at(10_000)),
          { ok: true, account: { ...account, name: 'Ann Smith', email: 'ann.smith@example.com' }, created: false });
        // An unverified email does not replace it either.
        assert.deepEqual(await accounts().signInIdentity({ ...renamed, email: 'mallory@evil.example', email_verified: false }, policy(), randomUUID(), at(11_000)),
          { ok: true, account: { ...account, name: 'Ann Smith', email: 'ann.smith@example.com' }, created: false });
      });

      it('refuses who may not join, and creates nothing', async () => {
        const refused = [
          identity('eve@example.com', { email_verified: false }),
          identity('eve@elsewhere.org'),
          identity(null, { name: 'No Email' }),
        ];
        for (const person of refused) {
          const id = randomUUID();
          assert.deepEqual(await accounts().signInIdentity(person, policy(), id, at(1)), { ok: false, reason: 'not_invited' }, JSON.stringify(person));
          assert.equal(await accounts().account(id), null);
        }
      });

      it('an invite lets its email join once, whatever the domain; an unverified email does not spend it', async () => {
        const email = `guest-${randomUUID()}@elsewhere.org`;
        await accounts().invite({ email: email.toUpperCase(), invited_by: 'alice', created_at: at(0) });
        const unverified = identity(email, { email_verified: false });
        assert.deepEqual(await accounts().signInIdentity(unverified, policy(), randomUUID(), at(1)), { ok: false, reason: 'not_invited' });
        const id = randomUUID();
        const joined = await accounts().signInIdentity(identity(email), policy(), id, at(2));
        assert.ok(joined.ok && joined.created && joined.account.id === id && joined.account.role === 'member', JSON.stringify(joined));
        assert.deepEqual(await accounts().signInIdentity(identity(email), policy(), randomUUID(), at(3)), { ok: false, reason: 'not_invited' }, 'the invite was spent');
      });

      it('a deactivated account is refused', async () => {
        const person = identity('dan@example.com');
        const id = randomUUID();
        await accounts().signInIdentity(person, policy(), id, at(0));
        await accounts().changeAccount(id, { active: false });
        assert.deepEqual(await accounts().signInIdentity(person, policy(), randomUUID(), at(1)), { ok: false, reason: 'deactivated' });
        assert.equal((await accounts().account(id))!.active, false);
      });

      it('the first admin joins as admin while no active admin exists, as a member after', async () => {
        await alone(async (storage) => {
          const rule = policy({ allowedDomains: ['example.com'], firstAdmin: 'Boss@Example.com' });
          const early = await storage.accounts.signInIdentity(identity('someone@example.com'), rule, randomUUID(), at(0));
          assert.ok(early.ok && early.account.role === 'member', 'only the configured email becomes the first admin');
          const boss = await storage.accounts.signInIdentity(identity('boss@example.com'), rule, randomUUID(), at(1));
          assert.ok(boss.ok && boss.account.role === 'admin', JSON.stringify(boss));
          const again = await storage.accounts.signInIdentity(identity('boss@example.com'), rule, randomUUID(), at(2));
          assert.ok(again.ok && again.created && again.account.role === 'member', 'an admin exists now');
          // The first admin may join from outside the allowed domains.
          await alone(async (fresh) => {
            const outside = await fresh.accounts.signInIdentity(identity('boss@elsewhere.org'), policy({ firstAdmin: 'boss@elsewhere.org' }), randomUUID(), at(0));
            assert.ok(outside.ok && outside.account.role === 'admin', JSON.stringify(outside));
          });
        });
      });

      it('two concurrent first sign-ins of one identity create one account', async () => {
        for (let round = 0; round < ROUNDS; round++) {
          const person = identity(`race-${round}@example.com`);
          const ids = [randomUUID(), randomUUID(), randomUUID()];
          const outcomes = await Promise.all(ids.map((id, i) => (i % 2 === 0 ? accounts() : other.accounts).signInIdentity(person, policy(), id, at(round))));
          assert.ok(outcomes.every((o) => o.ok), JSON.stringify(outcomes));
          const made = outcomes.filter((o) => o.ok && o.created);
          assert.equal(made.length, 1, `round ${round}: one created`);
          const winner = made[0]!.ok ? made[0]!.account.id : '';
          assert.ok(outcomes.every((o) => o.ok && o.account.id === winner), 'all signed in to that account');
          for (const id of ids.filter((id) => id !== winner)) assert.equal(await accounts().account(id), null);
        }
      });

      it('two concurrent first sign-ins by one invite create one account and spend it', async () => {
        for (let round = 0; round < ROUNDS; round++) {
          const email = `invited-${randomUUID()}@elsewhere.org`;
          await accounts().invite({ email, invited_by: 'alice', created_at: at(0) });
          const person = identity(email);
          const outcomes = await Promise.all([accounts(), other.accounts].map((on) => on.signInIdentity(person, policy(), randomUUID(), at(round))));
          assert.ok(outcomes.every((o) => o.ok), `round ${round}: ${JSON.stringify(outcomes)}`);
          assert.equal(outcomes.filter((o) => o.ok && o.created).length, 1);
          assert.deepEqual(await accounts().signInIdentity(identity(email), policy(), randomUUID(), at(round)), { ok: false, reason: 'not_invited' });
        }
      });
    });

    describe('sign-in flows and invites', () => {
      const flow = (expires: number) => ({
        hash: sha256(randomUUID()), state: randomUUID(), nonce: randomUUID(), code_verifier: randomUUID(), redirect_uri: 'https://console.example/api/auth/callback', expires_at: at(expires),
      });

      it('a flow is taken once, by any instance', async () => {
        const saved = flow(10 * MINUTE);
        await accounts().saveFlow(saved);
        assert.deepEqual(await other.accounts.takeFlow(saved.hash, at(MINUTE)), saved);
        assert.equal(await accounts().takeFlow(saved.hash, at(MINUTE)), null);
        assert.equal(await accounts().takeFlow(sha256(randomUUID()), at(MINUTE)), null);
      });

      it('an expired flow is not taken', async () => {
        const saved = flow(10 * MINUTE);
        await accounts().saveFlow(saved);
        assert.equal(await accounts().takeFlow(saved.hash, at(10 * MINUTE)), null);
        assert.equal(await accounts().takeFlow(saved.hash, at(0)), null, 'nor later, with an earlier clock');
      });

      it('concurrent takes of one flow: one gets it', async () => {
        const saved = flow(10 * MINUTE);
        await accounts().saveFlow(saved);
        const taken = await Promise.all([accounts().takeFlow(saved.hash, at(1)), other.accounts.takeFlow(saved.hash, at(1))]);
        assert.equal(taken.filter((f) => f !== null).length, 1);
      });

      it('inviting an email again answers the first invite; emails are normalised', async () => {
        const email = `Inv-${randomUUID()}@Example.ORG`;
        const first = await accounts().invite({ email: ` ${email} `, invited_by: 'alice', created_at: at(0) });
        assert.deepEqual(first, { email: email.toLowerCase(), invited_by: 'alice', created_at: at(0) });
        assert.deepEqual(await other.accounts.invite({ email: email.toLowerCase(), invited_by: 'bob', created_at: at(MINUTE) }), first);
      });
    });
  });
}
