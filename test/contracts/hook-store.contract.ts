import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { uuidv7 } from 'uuidv7';
import type { HookStore, StoredHook } from '../../ports/hook-store.ts';
import type { Storage } from '../../ports/storage.ts';
import { sha256 } from '../support/ids.ts';

/** One backend for the suite: a storage, and another over the same data (a second instance). */
export interface HookBackend {
  readonly storage: Storage;
  readonly reopen: () => Promise<Storage>;
  readonly close: () => Promise<void>;
}

/** The suite's clock: instants are chosen, never read, so the window is exact. */
const T0 = Date.UTC(2026, 2, 1, 12, 0, 0);
const at = (ms: number) => new Date(T0 + ms).toISOString();
const DAY = 86_400_000;
/** Rounds of each race: enough for an interleaving to show a claim that is not one decision. */
const ROUNDS = 8;

/**
 * The HookStore contract (contract section 12, "Hooks in"): hooks stored with their secret's hash, listed
 * by owner without it, removed by their owner only; an idempotency key names one call id for its window,
 * whatever the races between instances, and a new one after it.
 */
export function hookStoreContract(name: string, open: () => Promise<HookBackend>): void {
  describe(`hook store contract: ${name}`, () => {
    let backend: HookBackend;
    let other: Storage;
    before(async () => {
      backend = await open();
      other = await backend.reopen();
    });
    after(() => backend.close());
    const hooks = (): HookStore => backend.storage.hooks;
    const newOwner = () => `user-${randomUUID()}`;
    const hook = (owner: string, fields: Partial<StoredHook> = {}): StoredHook => ({
      id: uuidv7(), owner, thread_id: null, project: null, model: null, secret_hash: sha256(randomUUID()), created_at: at(0), ...fields,
    });

    it('a stored hook is found by id with its hash, and listed by its owner without it, newest first', async () => {
      const owner = newOwner();
      const first = hook(owner, { project: 'alpha', model: 'claude/sonnet' });
      const second = hook(owner, { thread_id: randomUUID(), created_at: at(1_000) });
      assert.equal(await hooks().create(first, 10), true);
      assert.equal(await hooks().create(second, 10), true);
      assert.deepEqual(await other.hooks.find(first.id), first, 'another instance finds it');
      const { secret_hash: _a, ...shownFirst } = first;
      const { secret_hash: _b, ...shownSecond } = second;
      assert.deepEqual(await hooks().list(owner), [shownSecond, shownFirst]);
      assert.deepEqual(await hooks().list(newOwner()), [], "another owner's list is empty");
      assert.equal(await hooks().find(randomUUID()), null);
      assert.equal(await hooks().find('not-a-uuid'), null);
    });

    it('an owner holds at most `max` hooks', async () => {
      const owner = newOwner();
      assert.equal(await hooks().create(hook(owner), 2), true);
      assert.equal(await hooks().create(hook(owner), 2), true);
      const third = hook(owner);
      assert.equal(await hooks().create(third, 2), false);
      assert.equal(await hooks().find(third.id), null, 'nothing stored');
      assert.equal(await hooks().create(hook(newOwner()), 2), true, 'the limit is per owner');
    });

    it('a hook is removed by its owner only, with its kept keys', async () => {
      const owner = newOwner();
      const stored = hook(owner);
      await hooks().create(stored, 10);
      const first = await hooks().claimKey({ hook_id: stored.id, key: 'k', call_id: randomUUID(), at: at(0), since: at(-DAY) });
      assert.equal(await hooks().remove(newOwner(), stored.id), false, "another user's remove");
      assert.equal(await hooks().remove(owner, 'not-a-uuid'), false);
      assert.notEqual(await hooks().find(stored.id), null);
      assert.equal(await hooks().remove(owner, stored.id), true);
      assert.equal(await other.hooks.find(stored.id), null);
      assert.equal(await hooks().remove(owner, stored.id), false, 'a second remove finds none');
      const fresh = randomUUID();
      assert.equal(await hooks().claimKey({ hook_id: stored.id, key: 'k', call_id: fresh, at: at(1), since: at(1 - DAY) }), fresh, 'its keys went with it');
      assert.notEqual(first, fresh);
    });

    it('a key names the first call id within its window, a new one after it', async () => {
      const id = uuidv7();
      const claim = (call_id: string, now: number) => hooks().claimKey({ hook_id: id, key: 'deploy-42', call_id, at: at(now), since: at(now - DAY) });
      const first = randomUUID();
      assert.equal(await claim(first, 0), first);
      assert.equal(await claim(randomUUID(), DAY - 1), first, 'within 24 h: the first');
      assert.equal(await other.hooks.claimKey({ hook_id: id, key: 'deploy-42', call_id: randomUUID(), at: at(10), since: at(10 - DAY) }), first, 'on another instance too');
      const own = randomUUID();
      assert.equal(await hooks().claimKey({ hook_id: uuidv7(), key: 'deploy-42', call_id: own, at: at(10), since: at(10 - DAY) }), own, "another hook's key is its own");
      const later = randomUUID();
      assert.equal(await claim(later, DAY), later, 'at 24 h: a new call');
      assert.equal(await claim(randomUUID(), DAY + 5), later);
    });

    it('concurrent claims of one key on two instances name one call id', async () => {
      for (let round = 0; round < ROUNDS; round += 1) {
        const id = uuidv7();
        const key = `key-${round}`;
        const race = (now: number) => Promise.all([hooks(), other.hooks].map((store) =>
          store.claimKey({ hook_id: id, key, call_id: randomUUID(), at: at(now), since: at(now - DAY) })));
        const [a, b] = await race(0);
        assert.equal(a, b, `round ${round}`);
        // Past the window, two renewals at once also agree on one, a new one.
        const [c, d] = await race(2 * DAY);
        assert.equal(c, d, `round ${round}, renewed`);
        assert.notEqual(c, a, `round ${round}, renewed`);
      }
    });
  });
}
