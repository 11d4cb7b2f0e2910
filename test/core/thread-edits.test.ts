// The thread edits use case over the memory storage (contract section 4, "Managing threads"): who may rename or
// archive a thread, and that a refused edit writes nothing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { threadEdits } from '../../core/threads/thread-edits.ts';
import { F, fixtureWorld } from '../support/fixture-world.ts';

const user = (id: string) => ({ id, name: id }) as never;

describe('thread edits (core)', () => {
  const setUp = async () => {
    const storage = createMemoryStorage();
    await storage.importWorld(fixtureWorld());
    return { storage, edit: threadEdits(storage) };
  };

  it('renames and archives for the owner, answering the row as it is after', async () => {
    const { storage, edit } = await setUp();
    const edited = await edit(user('alice'), F.root, { title: 'Fix the CI build', archived: true });
    assert.ok(edited.ok);
    assert.deepEqual(edited.value, { ...(await storage.threads.findRow('alice', F.root))!, title: 'Fix the CI build', archived: true });
  });

  it("refuses a member (403) and anyone who cannot read the thread (404), writing nothing", async () => {
    const { storage, edit } = await setUp();
    const before = await storage.threads.findRow('bob', F.shared);
    assert.deepEqual(await edit(user('alice'), F.shared, { archived: true }), { ok: false, error: { code: 'not_thread_owner' } });
    assert.deepEqual(await edit(user('bob'), F.root, { archived: true }), { ok: false, error: { code: 'thread_unavailable' } });
    assert.deepEqual(await edit(user('carol'), F.root, { title: 'x' }), { ok: false, error: { code: 'thread_unavailable' } });
    assert.deepEqual(await storage.threads.findRow('bob', F.shared), before);
  });

  it('refuses a title that is empty, too long or holds a control character, whoever asks', async () => {
    const { storage, edit } = await setUp();
    for (const title of ['', 'x'.repeat(201), 'a\nb', 'tab\there', '\u009b']) {
      const refused = await edit(user('alice'), F.root, { title });
      assert.equal(refused.ok ? null : refused.error.code, 'validation_failed', JSON.stringify(title));
    }
    assert.equal((await storage.threads.findRow('alice', F.root))!.title, 'Fix the build');
  });
});
