// Credentials kept on the embedded database (adapters/mikro-orm/kept-credentials.ts): a credential found is answered
// from memory for a few seconds, never past its end, never a personal token's, and never across a write that could
// change it. The accounts contract runs on a storage kept so too (test/adapters/accounts.test.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KEEP_CREDENTIAL_MS, keptCredentials } from '../../adapters/mikro-orm/kept-credentials.ts';
import type { Credential } from '../../domain/accounts.ts';
import type { Accounts } from '../../ports/accounts.ts';

const T0 = Date.UTC(2026, 0, 1);
const at = (ms: number) => new Date(T0 + ms).toISOString();

/** Accounts whose lookups are counted, answering what `known` holds now; a lookup may be held until released. */
function countedAccounts() {
  const known = new Map<string, Credential>();
  const lookups: string[] = [];
  let hold: Promise<void> | null = null;
  const accounts = {
    userByCredential: async (hash: string) => {
      lookups.push(hash);
      if (hold !== null) await hold;
      return known.get(hash) ?? null;
    },
    endSession: async (hash: string) => void known.delete(hash),
    revokeToken: async () => true,
    changeAccount: async () => ({ kind: 'changed' }),
    signInIdentity: async () => ({ kind: 'refused' }),
  } as unknown as Accounts;
  return { known, lookups, accounts, holdLookups: (until: Promise<void>) => (hold = until), release: () => (hold = null) };
}

describe('credentials kept in memory (embedded database)', () => {
  it('a world token or session found is answered from memory for a while, then looked up again', async () => {
    const { known, lookups, accounts } = countedAccounts();
    known.set('w', { id: 'alice', name: 'Alice', via: 'world', expires_at: null });
    const kept = keptCredentials(accounts).accounts;
    assert.equal((await kept.userByCredential('w', at(0)))?.id, 'alice');
    assert.equal((await kept.userByCredential('w', at(KEEP_CREDENTIAL_MS - 1)))?.id, 'alice');
    assert.equal(lookups.length, 1, 'one lookup within the while');
    await kept.userByCredential('w', at(KEEP_CREDENTIAL_MS));
    assert.equal(lookups.length, 2, 'looked up again after it');
    await kept.userByCredential('w', at(-1));
    assert.equal(lookups.length, 3, 'a time before it was kept is looked up');
  });

  it('never past its end, never a personal token, never an unknown one', async () => {
    const { known, lookups, accounts } = countedAccounts();
    known.set('s', { id: 'alice', name: 'Alice', via: 'session', expires_at: at(1_000) });
    known.set('p', { id: 'alice', name: 'Alice', via: 'token', expires_at: null });
    const kept = keptCredentials(accounts).accounts;
    await kept.userByCredential('s', at(0));
    await kept.userByCredential('s', at(999));
    assert.equal(lookups.length, 1);
    known.delete('s');
    assert.equal(await kept.userByCredential('s', at(1_000)), null, 'ended: looked up, and gone');
    await kept.userByCredential('p', at(0));
    await kept.userByCredential('p', at(1));
    await kept.userByCredential('x', at(0));
    await kept.userByCredential('x', at(1));
    assert.deepEqual(lookups.slice(2), ['p', 'p', 'x', 'x']);
  });

  it('every write that could change a credential forgets them all, and a lookup under way across one is not kept', async () => {
    const { known, lookups, accounts, holdLookups, release } = countedAccounts();
    known.set('w', { id: 'alice', name: 'Alice', via: 'world', expires_at: null });
    const { accounts: kept, forgetting } = keptCredentials(accounts);
    const writes: (() => Promise<unknown>)[] = [
      () => kept.endSession('other'),
      () => kept.revokeToken('alice', 't'),
      () => kept.changeAccount('alice', { active: false }),
      () => kept.signInIdentity({ issuer: 'i', subject: 's', name: null, email: null, email_verified: false }, { kind: 'open' } as never, 'id', at(0)),
      () => forgetting(async () => {}),
    ];
    for (const write of writes) {
      await kept.userByCredential('w', at(0));
      const before = lookups.length;
      await write();
      await kept.userByCredential('w', at(1));
      assert.equal(lookups.length, before + 1, `looked up again after ${write.toString()}`);
    }
    // A lookup that began before a write and ended after it is answered, not kept.
    await kept.endSession('other');
    let letGo!: () => void;
    holdLookups(new Promise<void>((resolve) => (letGo = resolve)));
    const under = kept.userByCredential('w', at(2));
    await new Promise((resolve) => setTimeout(resolve, 0));
    const write = kept.revokeToken('alice', 't');
    release();
    letGo();
    assert.equal((await under)?.id, 'alice');
    await write;
    const before = lookups.length;
    await kept.userByCredential('w', at(3));
    assert.equal(lookups.length, before + 1, 'not kept from across the write');
  });
});
