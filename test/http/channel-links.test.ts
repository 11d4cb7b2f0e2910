// Contract section 9, "Linking": a console user asks for a one-use code for a chat channel, sends
// `link <code>` to the channel's bot from the address to link (here: the use case the chat adapter calls),
// lists and removes links. Over HTTP on memory, embedded PGlite and (with TEST_DATABASE_URL) PostgreSQL.
import type { Storage } from '../../ports/storage.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { channelLinking } from '../../core/channels/links.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { startService, type TestService } from '../support/service.ts';
import { storageKinds, type OpenedStorage } from '../support/storage-kinds.ts';

const ALICE: Record<string, string> = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const BOB: Record<string, string> = { authorization: 'Bearer token-bob', 'content-type': 'application/json' };
const P = '/api/account/links';

for (const kind of storageKinds('links_http')) {
  describe(`chat links over HTTP: ${kind.name}`, () => {
    let opened: OpenedStorage;
    let service: TestService;
    before(async () => {
      opened = await kind.open();
      await opened.storage.importWorld(fixtureWorld());
      service = await startService({}, { storage: opened.storage });
    });
    after(async () => {
      await service.close();
      await opened.close();
    });

    const ask = (method: string, path: string, headers = ALICE, body?: unknown) =>
      service.ask({ method, path, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    /** What the chat adapter does when `link <code>` arrives in a direct message: through another storage, as another instance would. */
    let other: Promise<Storage> | null = null;
    const redeem = async (address: string, code: string) => {
      // One other instance for the whole suite: the embedded server takes few connections at once.
      const storage = await (other ??= opened.reopen());
      return channelLinking({ links: storage.links, catalog: storage.catalog }).redeemLinkCode('team-chat', address, code);
    };

    it('answers 401 without a credential, before looking at the body', async () => {
      for (const [method, path] of [['POST', P], ['GET', P], ['DELETE', `${P}/team-chat`], ['GET', '/api/account/link-channels']] as const) {
        const res = await service.ask({ method, path, headers: { 'content-type': 'application/json' }, ...(method === 'POST' ? { body: '{' } : {}) });
        assert.equal(res.status, 401, `${method} ${path}`);
      }
    });

    it('gives a code once, never logged; sent from an address it links that address to the caller, listed after', async () => {
      const res = await ask('POST', P, ALICE, { channel: 'team-chat' });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.headers['cache-control'], 'no-store');
      const made = res.json();
      assert.match(made.code, /^[2-9A-HJKMNP-Z]{8}$/);
      assert.equal(made.send, `link ${made.code}`);
      assert.equal(made.channel, 'team-chat');
      const left = Date.parse(made.expires_at) - Date.now();
      assert.ok(left > 9 * 60_000 && left <= 10 * 60_000, `expires in ${left} ms`);
      assert.deepEqual((await ask('GET', P)).json(), [], 'nothing is linked before the code is sent');

      const linked = await redeem('Alice@Chat.Example', made.code.toLowerCase());
      assert.equal(linked.kind, 'linked', JSON.stringify(linked));
      const list = await ask('GET', P);
      assert.equal(list.status, 200);
      const [link, ...rest] = list.json();
      assert.deepEqual(rest, []);
      assert.deepEqual({ ...link, created_at: typeof link.created_at }, { channel: 'team-chat', address: 'alice@chat.example', created_at: 'string', source: 'code' });
      assert.deepEqual((await ask('GET', P, BOB)).json(), [], "bob does not see alice's links");
      assert.equal((await redeem('mallory@chat.example', made.code)).kind, 'refused', 'the code is used');
      assert.ok(!JSON.stringify(service.logs).includes(made.code), 'the code is in no log line');
    });

    it('refuses the console channel (422 channel_not_linkable) and a channel that does not exist (422)', async () => {
      const console = await ask('POST', P, ALICE, { channel: 'console' });
      assert.equal(console.status, 422);
      assert.equal(console.headers['content-type'], 'application/problem+json');
      assert.equal(console.json().code, 'channel_not_linkable');
      const unknown = await ask('POST', P, ALICE, { channel: 'nowhere' });
      assert.equal(unknown.status, 422);
      assert.deepEqual(unknown.json().errors.map((e: { path: string }) => e.path), ['body.channel']);
      assert.equal((await ask('POST', P, ALICE, {})).status, 422);
      assert.equal((await ask('POST', P, ALICE, { channel: 7 })).status, 422);
    });

    it('lists the channels a user can link: every one but the console', async () => {
      const res = await ask('GET', '/api/account/link-channels', BOB);
      assert.equal(res.status, 200);
      assert.deepEqual(res.json().map((c: { id: string }) => c.id), ['quiet', 'team-chat']);
    });

    it("removes the caller's own link only: 404 link_not_found when there is none", async () => {
      const { code } = (await ask('POST', P, BOB, { channel: 'team-chat' })).json();
      assert.equal((await redeem('bob@chat.example', code)).kind, 'linked');
      const none = await ask('DELETE', `${P}/quiet`, BOB);
      assert.equal(none.status, 404);
      assert.equal(none.json().code, 'link_not_found');
      assert.equal((await ask('DELETE', `${P}/team-chat`, BOB)).status, 204);
      assert.equal((await ask('DELETE', `${P}/team-chat`, BOB)).status, 404);
      assert.deepEqual((await ask('GET', P, BOB)).json(), []);
      assert.equal((await ask('GET', P, ALICE)).json().length, 1, "alice's link stays");
    });

    it('refuses a cross-origin write', async () => {
      const res = await ask('POST', P, { ...ALICE, origin: 'http://evil.example' }, { channel: 'team-chat' });
      assert.equal(res.status, 403);
    });

    it('gives at most 5 codes a minute to a user (429 too_many_link_codes, Retry-After), not counting against others', async () => {
      const user = { authorization: 'Bearer token-bob', 'content-type': 'application/json' };
      // Bob asked for one above; four more are given.
      for (let i = 0; i < 4; i++) assert.equal((await ask('POST', P, user, { channel: 'quiet' })).status, 201);
      const refused = await ask('POST', P, user, { channel: 'quiet' });
      assert.equal(refused.status, 429);
      assert.equal(refused.json().code, 'too_many_link_codes');
      assert.ok(Number(refused.headers['retry-after']) >= 1);
      assert.equal((await ask('POST', P, ALICE, { channel: 'quiet' })).status, 201);
    });
  });
}
