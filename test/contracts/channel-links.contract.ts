import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { ChannelLinks, RedeemOutcome } from '../../ports/channel-links.ts';
import type { Storage } from '../../ports/storage.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { sha256 } from '../support/ids.ts';

/** One backend for the suite: a storage, and another over the same data (a second instance). */
export interface LinksBackend {
  readonly storage: Storage;
  readonly reopen: () => Promise<Storage>;
  readonly close: () => Promise<void>;
}

/** The suite's clock: instants are chosen, never read, so expiry is exact. */
const T0 = Date.UTC(2026, 2, 1, 12, 0, 0);
const at = (ms: number) => new Date(T0 + ms).toISOString();
const TEN_MINUTES = 600_000;
/** Rounds of each race: enough for an interleaving to show where claiming a code and linking are not one decision. */
const ROUNDS = 8;

/**
 * The ChannelLinks contract (contract section 9, "Linking"): one-use codes stored as hashes, redeemed
 * at most once whatever the races, refused when expired, used, unknown, or from an address another user
 * holds; one link per user per channel; addresses compared in lower case.
 */
export function channelLinksContract(name: string, open: () => Promise<LinksBackend>): void {
  describe(`channel links contract: ${name}`, () => {
    let backend: LinksBackend;
    let other: Storage;
    before(async () => {
      backend = await open();
      await backend.storage.importWorld(fixtureWorld());
      other = await backend.reopen();
    });
    after(() => backend.close());
    const links = (): ChannelLinks => backend.storage.links;

    /** A fresh user id, so the tests share a storage without meeting. */
    const newUser = () => `user-${randomUUID()}`;
    /** Stores a code for (user, channel) made at `made` (ms after T0), valid ten minutes; answers its hash. */
    const code = async (user: string, channel = 'team-xmpp', made = 0, on: ChannelLinks = links()) => {
      const hash = sha256(randomUUID());
      await on.createCode({ code_hash: hash, user, channel, created_at: at(made), expires_at: at(made + TEN_MINUTES) });
      return hash;
    };
    const redeem = (hash: string, address: string, when = 1_000, channel = 'team-xmpp', on: ChannelLinks = links()) =>
      on.redeem({ channel, address, code_hash: hash, at: at(when) });

    it('a redeemed code links its user to the address, stored in lower case and found in any case', async () => {
      const user = newUser();
      const outcome = await redeem(await code(user), 'Alice@Example.ORG', 5_000);
      assert.deepEqual(outcome, { kind: 'linked', link: { user, channel: 'team-xmpp', address: 'alice@example.org', created_at: at(5_000) }, replaced: null });
      assert.equal(await links().userAt('team-xmpp', 'alice@example.org'), user);
      assert.equal(await links().userAt('team-xmpp', 'ALICE@example.org'), user);
      assert.equal(await links().userAt('other-channel', 'alice@example.org'), null, 'a link is on its channel only');
      assert.deepEqual(await links().links(user), [{ user, channel: 'team-xmpp', address: 'alice@example.org', created_at: at(5_000) }]);
      assert.deepEqual(await other.links.links(user), await links().links(user), 'another instance reads the same link');
    });

    it('a code is used once: a second redemption is refused, from any address', async () => {
      const user = newUser();
      const hash = await code(user);
      assert.equal((await redeem(hash, `${user}@one`)).kind, 'linked');
      assert.deepEqual(await redeem(hash, `${user}@one`), { kind: 'used' });
      assert.deepEqual(await redeem(hash, `${user}@two`), { kind: 'used' });
      assert.equal(await links().userAt('team-xmpp', `${user}@two`), null);
    });

    it('refuses an unknown code, and a code made for another channel', async () => {
      const user = newUser();
      assert.deepEqual(await redeem(sha256(randomUUID()), `${user}@x`), { kind: 'unknown' });
      const hash = await code(user, 'team-xmpp');
      assert.deepEqual(await redeem(hash, `${user}@x`, 1_000, 'other-channel'), { kind: 'unknown' });
      assert.deepEqual(await links().links(user), []);
      assert.equal((await redeem(hash, `${user}@x`)).kind, 'linked', 'the refusal on the other channel did not use it');
    });

    it('a code expires ten minutes after it was made, by the clock the caller passes', async () => {
      const user = newUser();
      const hash = await code(user);
      assert.deepEqual(await redeem(hash, `${user}@x`, TEN_MINUTES), { kind: 'expired' });
      assert.deepEqual(await redeem(hash, `${user}@x`, TEN_MINUTES + 60_000), { kind: 'expired' });
      assert.equal((await redeem(hash, `${user}@x`, TEN_MINUTES - 1)).kind, 'linked', 'one millisecond before, it still works');
    });

    it("a user's new code for a channel replaces the earlier one; codes for other channels stay", async () => {
      const user = newUser();
      const first = await code(user, 'team-xmpp');
      const elsewhere = await code(user, 'other-channel');
      const second = await code(user, 'team-xmpp', 2_000);
      assert.deepEqual(await redeem(first, `${user}@x`, 3_000), { kind: 'unknown' });
      assert.equal((await redeem(second, `${user}@x`, 3_000)).kind, 'linked');
      assert.equal((await redeem(elsewhere, `${user}@x`, 3_000, 'other-channel')).kind, 'linked');
    });

    it("refuses an address another user holds on the channel, and leaves the code usable", async () => {
      const [holder, taker] = [newUser(), newUser()];
      const address = `${holder}@shared`;
      assert.equal((await redeem(await code(holder), address)).kind, 'linked');
      const hash = await code(taker);
      assert.deepEqual(await redeem(hash, address.toUpperCase()), { kind: 'address_taken' });
      assert.equal(await links().userAt('team-xmpp', address), holder);
      assert.equal((await redeem(hash, `${taker}@own`)).kind, 'linked', 'the refused code still works from another address');
      // The same address on another channel is another link.
      assert.equal((await redeem(await code(taker, 'other-channel'), address, 1_000, 'other-channel')).kind, 'linked');
    });

    it('one link per user per channel: a new one replaces the old, whose address is free again', async () => {
      const [user, next] = [newUser(), newUser()];
      assert.equal((await redeem(await code(user), `${user}@old`)).kind, 'linked');
      const again = await redeem(await code(user, 'team-xmpp', 2_000), `${user}@new`, 3_000);
      assert.equal(again.kind, 'linked');
      assert.equal((again as Extract<RedeemOutcome, { kind: 'linked' }>).replaced, `${user}@old`);
      assert.deepEqual((await links().links(user)).map((l) => l.address), [`${user}@new`]);
      assert.equal(await links().userAt('team-xmpp', `${user}@old`), null);
      assert.equal((await redeem(await code(next), `${user}@old`)).kind, 'linked', 'the old address can be linked by someone else');
      // Linking the same address again is no replacement.
      const same = await redeem(await code(user, 'team-xmpp', 4_000), `${user}@new`, 5_000);
      assert.deepEqual(same, { kind: 'linked', link: { user, channel: 'team-xmpp', address: `${user}@new`, created_at: at(5_000) }, replaced: null });
    });

    it("lists a user's links by channel, never another's, and removes one", async () => {
      const [user, stranger] = [newUser(), newUser()];
      await redeem(await code(user, 'zeta'), `${user}@z`, 1_000, 'zeta');
      await redeem(await code(user, 'alpha'), `${user}@a`, 1_000, 'alpha');
      await redeem(await code(stranger, 'alpha'), `${stranger}@a`, 1_000, 'alpha');
      assert.deepEqual((await links().links(user)).map((l) => [l.channel, l.address]), [['alpha', `${user}@a`], ['zeta', `${user}@z`]]);
      assert.equal(await links().unlink(user, 'alpha'), true);
      assert.equal(await links().unlink(user, 'alpha'), false, 'nothing left to remove');
      assert.equal(await links().unlink(user, 'nowhere'), false);
      assert.deepEqual((await other.links.links(user)).map((l) => l.channel), ['zeta']);
      assert.equal(await links().userAt('alpha', `${user}@a`), null);
      assert.equal(await links().userAt('alpha', `${stranger}@a`), stranger, "another user's link stays");
    });

    it("the catalog's linked users of a channel are the world's, then those linked with a code, once each", async () => {
      const linkedOn = async (on: Storage) => (await on.catalog.channels()).find((c) => c.id === 'team-chat')?.linked_users;
      assert.deepEqual(await linkedOn(backend.storage), ['alice']);
      await redeem(await code('zed', 'team-chat'), 'zed@chat', 1_000, 'team-chat');
      await redeem(await code('bob', 'team-chat'), 'bob@chat', 1_000, 'team-chat');
      await redeem(await code('alice', 'team-chat'), 'alice@chat', 1_000, 'team-chat');
      assert.deepEqual(await linkedOn(other), ['alice', 'bob', 'zed']);
      await links().unlink('zed', 'team-chat');
      await links().unlink('bob', 'team-chat');
      await links().unlink('alice', 'team-chat');
      assert.deepEqual(await linkedOn(backend.storage), ['alice'], "the world's stay");
    });

    it('two instances redeeming the same code at once: exactly one links, the other is told it was used', async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const user = newUser();
        const hash = await code(user);
        const outcomes = await Promise.all([redeem(hash, `${user}@first`), redeem(hash, `${user}@second`, 1_000, 'team-xmpp', other.links)]);
        const kinds = outcomes.map((o) => o.kind).sort();
        assert.deepEqual(kinds, ['linked', 'used'], `round ${round}: ${JSON.stringify(outcomes)}`);
        const won = outcomes.find((o): o is Extract<RedeemOutcome, { kind: 'linked' }> => o.kind === 'linked')!;
        assert.deepEqual((await links().links(user)).map((l) => l.address), [won.link.address]);
      }
    });

    it('two users redeeming codes from the same address at once: one holds it, the other is refused', async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const [a, b] = [newUser(), newUser()];
        const address = `contested-${round}-${randomUUID()}@chat`;
        const [ha, hb] = [await code(a), await code(b)];
        const outcomes = await Promise.all([redeem(ha, address), redeem(hb, address, 1_000, 'team-xmpp', other.links)]);
        assert.deepEqual(outcomes.map((o) => o.kind).sort(), ['address_taken', 'linked'], `round ${round}: ${JSON.stringify(outcomes)}`);
        const winner = outcomes[0]!.kind === 'linked' ? a : b;
        assert.equal(await links().userAt('team-xmpp', address), winner);
      }
    });
  });
}
