// The linking use case (contract section 9) over the memory adapters, with a clock the test turns.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { emptyState } from '../../adapters/memory/state.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { channelLinking, LINK_CODE_ALPHABET, LINK_CODE_TTL_MS, linkCodeHash, type WorldLinks } from '../../core/channels/links.ts';
import type { Channel } from '../../domain/model.ts';
import { fixtureWorld } from '../support/fixture-world.ts';

const ALICE = { id: 'alice', name: 'Alice' };
const BOB = { id: 'bob', name: 'Bob' };

async function setup(worldLinks?: WorldLinks) {
  const state = emptyState();
  const storage = createMemoryStorage(state);
  await storage.importWorld(fixtureWorld());
  let clock = Date.UTC(2026, 3, 1);
  const linking = channelLinking({ links: storage.links, catalog: storage.catalog, now: () => clock, ...(worldLinks === undefined ? {} : { worldLinks }) });
  const code = async (user = ALICE, channel = 'team-chat') => {
    const made = await linking.linkCode(user, channel);
    assert.ok(made.ok, JSON.stringify(made));
    return made.value;
  };
  return { state, linking, code, tick: (ms: number) => (clock += ms), now: () => clock };
}

describe('linking a console user to a chat address', () => {
  it('gives an 8-character code of the unambiguous alphabet, valid ten minutes, and stores only its hash', async () => {
    const { state, code, now } = await setup();
    const made = await code();
    assert.match(made.code, new RegExp(`^[${LINK_CODE_ALPHABET}]{8}$`));
    assert.equal(made.expires_at, new Date(now() + LINK_CODE_TTL_MS).toISOString());
    assert.equal(made.send, `link ${made.code}`);
    const stored = JSON.stringify([...state.channelLinks.codes]);
    assert.ok(!stored.includes(made.code), 'the code itself is not stored');
    assert.ok(stored.includes(await linkCodeHash(made.code)));
  });

  it('refuses the console channel and a channel that does not exist', async () => {
    const { linking } = await setup();
    assert.deepEqual(await linking.linkCode(ALICE, 'console'), { ok: false, error: { code: 'channel_not_linkable' } });
    const unknown = await linking.linkCode(ALICE, 'nowhere');
    assert.equal(!unknown.ok && unknown.error.code, 'validation_failed');
    assert.deepEqual((await linking.linkableChannels()).map((c) => c.id), ['quiet', 'team-chat']);
  });

  it('a code typed in lower case, with spaces or a dash, links; the reply names the user; userAt finds them', async () => {
    const { linking, code } = await setup();
    const { code: typed } = await code();
    const spaced = `${typed.slice(0, 4).toLowerCase()}-${typed.slice(4)} `;
    const redeemed = await linking.redeemLinkCode('team-chat', 'Alice@Chat.Example', spaced);
    assert.equal(redeemed.kind, 'linked');
    assert.match(redeemed.reply, /alice@chat\.example on Team chat are now alice's/);
    assert.equal(await linking.userAt('team-chat', 'alice@chat.example'), 'alice');
    assert.deepEqual((await linking.links(ALICE)).map((l) => [l.channel, l.address, l.source]), [['team-chat', 'alice@chat.example', 'code']]);
    const again = await linking.redeemLinkCode('team-chat', 'alice@chat.example', typed);
    assert.deepEqual([again.kind, again.kind === 'refused' && again.reason], ['refused', 'used']);
  });

  it('refuses an expired code, a malformed one, one for another channel, and an address another user holds', async () => {
    const { linking, code, tick } = await setup();
    const late = await code();
    tick(LINK_CODE_TTL_MS);
    const expired = await linking.redeemLinkCode('team-chat', 'a@x', late.code);
    assert.equal(expired.kind === 'refused' && expired.reason, 'expired');
    assert.match(expired.reply, /expired/);
    for (const [channel, typed] of [['team-chat', 'link'], ['team-chat', '0OIL0OIL'], ['console', (await code()).code], ['quiet', (await code()).code]] as const) {
      const refused = await linking.redeemLinkCode(channel, 'a@x', typed);
      assert.equal(refused.kind === 'refused' && refused.reason, 'unknown', `${channel} ${typed}`);
    }
    assert.equal((await linking.redeemLinkCode('team-chat', 'shared@x', (await code(BOB)).code)).kind, 'linked');
    const taken = await linking.redeemLinkCode('team-chat', 'shared@x', (await code(ALICE)).code);
    assert.equal(taken.kind === 'refused' && taken.reason, 'address_taken');
  });

  it("unlinks the caller's own link only; a channel without one is link_not_found", async () => {
    const { linking, code } = await setup();
    await linking.redeemLinkCode('team-chat', 'bob@x', (await code(BOB)).code);
    assert.deepEqual(await linking.unlink(ALICE, 'team-chat'), { ok: false, error: { code: 'link_not_found' } });
    assert.equal(await linking.userAt('team-chat', 'bob@x'), 'bob');
    assert.deepEqual(await linking.unlink(BOB, 'team-chat'), { ok: true, value: null });
    assert.equal(await linking.userAt('team-chat', 'bob@x'), null);
  });

  it("merges the world file's links: they win for their address, are listed, and need no code", async () => {
    const world: WorldLinks = (channel: Channel) => (channel.id === 'team-chat' ? { bob: 'Bob@World' } : ({} as Record<string, string>));
    const { linking, code } = await setup(world);
    assert.equal(await linking.userAt('team-chat', 'bob@world'), 'bob');
    assert.equal(await linking.userAt('quiet', 'bob@world'), null);
    const refused = await linking.redeemLinkCode('team-chat', 'bob@world', (await code(ALICE)).code);
    assert.equal(refused.kind === 'refused' && refused.reason, 'address_taken');
    assert.deepEqual(await linking.links(BOB), [{ channel: 'team-chat', address: 'bob@world', created_at: null, source: 'world' }]);
    assert.deepEqual(await linking.unlink(BOB, 'team-chat'), { ok: false, error: { code: 'link_not_found' } }, "the world's link is not removed here");
  });

  it("a deactivated user's links, made with a code or by the world file, name no one until they are active again", async () => {
    const state = emptyState();
    const storage = createMemoryStorage(state);
    await storage.importWorld(fixtureWorld());
    const world: WorldLinks = (channel: Channel) => (channel.id === 'quiet' ? { alice: 'alice@world' } : ({} as Record<string, string>));
    const linking = channelLinking({ links: storage.links, catalog: storage.catalog, worldLinks: world, isActive: async (id) => (await storage.accounts.account(id))?.active === true });
    const made = await linking.linkCode(ALICE, 'team-chat');
    assert.ok(made.ok);
    assert.equal((await linking.redeemLinkCode('team-chat', 'alice@chat.example', made.value.code)).kind, 'linked');
    assert.equal(await linking.userAt('quiet', 'alice@world'), 'alice');
    await storage.accounts.changeAccount('bob', { role: 'admin' });
    assert.equal(typeof await storage.accounts.changeAccount('alice', { active: false }), 'object');
    assert.equal(await linking.userAt('team-chat', 'alice@chat.example'), null);
    assert.equal(await linking.userAt('quiet', 'alice@world'), null);
    assert.equal(await linking.userAt('team-chat', 'bob@chat.example'), null, 'bob never linked');
    await storage.accounts.changeAccount('alice', { active: true });
    assert.equal(await linking.userAt('team-chat', 'alice@chat.example'), 'alice');
  });
});
