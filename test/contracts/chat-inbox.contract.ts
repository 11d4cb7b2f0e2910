import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { SERVED_PLACES_MAX, type ChatInbox } from '../../ports/chat-inbox.ts';
import type { Storage } from '../../ports/storage.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import type { OpenedStorage } from '../support/storage-kinds.ts';
import { waitFor } from '../support/wait-for.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The ChatInbox contract (contract section 9, "Nothing lost while away"), with the conversations a chat
 * adapter serves (`ConversationStore.livingOn`): a place's cursor written and read back by another
 * instance; a message claimed by one holder at a time, by nobody once done, again once a claim lapsed;
 * two instances claiming one message at once get it once.
 */
export function chatInboxContract(name: string, open: () => Promise<OpenedStorage>): void {
  describe(`chat inbox contract: ${name}`, () => {
    let backend: OpenedStorage;
    let other: Storage;
    before(async () => {
      backend = await open();
      await backend.storage.importWorld(fixtureWorld());
      other = await backend.reopen();
    });
    after(() => backend.close());
    const inbox = (): ChatInbox => backend.storage.chatInbox;
    const channel = () => `chan-${randomUUID()}`;

    it('a cursor is null until advanced, then the last one written, per (channel, place), for every instance', async () => {
      const c = channel();
      assert.equal(await inbox().cursor(c, 'room@muc'), null);
      await inbox().advance(c, 'room@muc', { id: 'stanza-1', at: '2026-03-01T12:00:00.000Z' });
      await inbox().advance(c, 'room@muc', { id: 'stanza-2', at: '2026-03-01T12:00:01.000Z' });
      assert.deepEqual(await other.chatInbox.cursor(c, 'room@muc'), { id: 'stanza-2', at: '2026-03-01T12:00:01.000Z' });
      assert.equal(await inbox().cursor(c, 'other@muc'), null, 'per place');
      assert.equal(await inbox().cursor(channel(), 'room@muc'), null, 'per channel');
    });

    it('an occupant id names the sender remembered for it, for every instance; one seen for two senders names nobody', async () => {
      const c = channel();
      assert.equal(await inbox().occupant(c, 'room@muc', 'id-a'), null);
      await inbox().rememberOccupant(c, 'room@muc', 'id-a', 'alice@example.org');
      await inbox().rememberOccupant(c, 'room@muc', 'id-a', 'alice@example.org');
      assert.equal(await other.chatInbox.occupant(c, 'room@muc', 'id-a'), 'alice@example.org');
      assert.equal(await inbox().occupant(c, 'other@muc', 'id-a'), null, 'per place');
      assert.equal(await inbox().occupant(channel(), 'room@muc', 'id-a'), null, 'per channel');
      await other.chatInbox.rememberOccupant(c, 'room@muc', 'id-a', 'mallory@example.org');
      assert.equal(await inbox().occupant(c, 'room@muc', 'id-a'), null, 'two senders under one id: nobody');
      await inbox().rememberOccupant(c, 'room@muc', 'id-a', 'alice@example.org');
      assert.equal(await inbox().occupant(c, 'room@muc', 'id-a'), null, 'and nobody for good');
    });

    it('a key is claimed by one holder while its lease runs, by nobody once done', async () => {
      const c = channel();
      assert.equal(await inbox().claim(c, 'm1', 'a', 60_000), true);
      assert.equal(await other.chatInbox.claim(c, 'm1', 'b', 60_000), false, 'another holder waits');
      assert.equal(await inbox().claim(c, 'm1', 'a', 60_000), true, 'its holder may claim it again');
      await inbox().done(c, 'm1');
      assert.equal(await inbox().claim(c, 'm1', 'a', 60_000), false, 'done: never again');
      assert.equal(await other.chatInbox.claim(c, 'm1', 'b', 60_000), false);
      assert.equal(await inbox().claim(c, 'm2', 'b', 60_000), true, 'another key is free');
    });

    it('a claim whose holder died lapses: another holder gets it', async () => {
      const c = channel();
      assert.equal(await inbox().claim(c, 'm1', 'dead', 300), true);
      assert.equal(await other.chatInbox.claim(c, 'm1', 'live', 60_000), false);
      // Asked again until the 300 ms claim has lapsed (a refused claim changes nothing).
      await waitFor(() => other.chatInbox.claim(c, 'm1', 'live', 60_000), { everyMs: 50, what: "the dead holder's claim to lapse" });
    });

    it('two instances claiming one key at once: exactly one gets it', async () => {
      for (let round = 0; round < 8; round++) {
        const c = channel();
        const got = await Promise.all([inbox().claim(c, 'k', 'a', 60_000), other.chatInbox.claim(c, 'k', 'b', 60_000)]);
        assert.equal(got.filter(Boolean).length, 1, `round ${round}: ${JSON.stringify(got)}`);
      }
    });

    it('isDone tells a done key from one another holder has (or had, and died)', async () => {
      const c = channel();
      assert.equal(await inbox().isDone(c, 'm1'), false, 'never claimed');
      assert.equal(await inbox().claim(c, 'm1', 'dead', 60_000), true);
      assert.equal(await other.chatInbox.claim(c, 'm1', 'live', 60_000), false);
      assert.equal(await other.chatInbox.isDone(c, 'm1'), false, 'refused, but not done: it must be read again');
      await inbox().done(c, 'm1');
      assert.equal(await other.chatInbox.isDone(c, 'm1'), true);
    });

    it('pruning forgets claims made before the horizon (a pruned key is claimed again); a recent one still blocks', async () => {
      const c = channel();
      assert.equal(await inbox().claim(c, 'old-done', 'a', 60_000), true);
      await inbox().done(c, 'old-done');
      assert.equal(await inbox().claim(c, 'old-lapsed', 'a', 1), true);
      assert.equal(await inbox().claim(c, 'old-held', 'a', 60_000), true);
      await sleep(50); // the old claims are before the horizon (and the 1 ms one has lapsed)
      const horizon = new Date();
      await sleep(50); // the recent claims are after it
      assert.equal(await inbox().claim(c, 'recent-done', 'a', 60_000), true);
      await inbox().done(c, 'recent-done');
      assert.equal(await inbox().claim(c, 'recent-held', 'a', 60_000), true);
      assert.ok(await other.chatInbox.pruneClaims(horizon) >= 2, 'the old done and the old lapsed claims went');
      assert.equal(await other.chatInbox.claim(c, 'old-done', 'b', 60_000), true, 'a pruned claim no longer blocks');
      assert.equal(await other.chatInbox.claim(c, 'old-lapsed', 'b', 60_000), true);
      assert.equal(await other.chatInbox.claim(c, 'old-held', 'b', 60_000), false, 'a claim whose lease runs is kept, however old');
      assert.equal(await other.chatInbox.claim(c, 'recent-done', 'b', 60_000), false, 'a recent done claim still blocks');
      assert.equal(await other.chatInbox.isDone(c, 'recent-done'), true);
      assert.equal(await other.chatInbox.claim(c, 'recent-held', 'b', 60_000), false, 'a recent held claim still blocks');
    });

    it('a served place is kept for every instance, once, oldest first, per channel', async () => {
      const c = channel();
      assert.deepEqual(await inbox().served(c), []);
      assert.equal(await inbox().serve(c, 'b@muc'), 'added');
      assert.equal(await other.chatInbox.serve(c, 'a@muc'), 'added');
      assert.equal(await other.chatInbox.serve(c, 'b@muc'), 'known', 'served already');
      assert.deepEqual(await other.chatInbox.served(c), ['b@muc', 'a@muc']);
      assert.deepEqual(await inbox().served(channel()), [], 'per channel');
      // The room kicked the bot: served no more, for every instance; asked again, nothing was served.
      assert.equal(await other.chatInbox.unserve(c, 'b@muc'), true);
      assert.equal(await inbox().unserve(c, 'b@muc'), false);
      assert.deepEqual(await inbox().served(c), ['a@muc']);
      assert.equal(await inbox().serve(c, 'b@muc'), 'added', 'invited again, served again');
    });

    it(`a channel serves at most ${SERVED_PLACES_MAX} places: one more is declined, one served already is still known`, async () => {
      const c = channel();
      for (let i = 0; i < SERVED_PLACES_MAX; i++) assert.equal(await inbox().serve(c, `room-${i}@muc`), 'added');
      assert.equal(await other.chatInbox.serve(c, 'one-more@muc'), 'full');
      assert.equal(await other.chatInbox.serve(c, 'room-7@muc'), 'known');
      assert.equal((await inbox().served(c)).length, SERVED_PLACES_MAX);
      assert.equal(await inbox().serve(channel(), 'one-more@muc'), 'added', 'another channel has its own bound');
    });

    it('livingOn lists the conversations living on a channel with their titles, in address order, not those of other channels', async () => {
      const c = channel();
      const make = (id: string, title: string, on = c) => backend.storage.writer.createConsoleThread({
        owner: 'alice', key: `${on}:${id}`, channel: 'team-chat', project: null, title,
        conversation: { agent: 'claude', model: null, permission_mode: null, effort: null, address: { channel: on, id } },
      });
      await make('room@muc#b', 'Second');
      await make('room@muc#a', 'First');
      await make('room@muc#x', 'Elsewhere', channel());
      assert.deepEqual(await other.conversations.livingOn(c), [{ address: 'room@muc#a', title: 'First' }, { address: 'room@muc#b', title: 'Second' }]);
    });
  });
}
