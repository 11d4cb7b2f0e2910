import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { chatChannels } from '../../src/channels/chat-channels.ts';
import { createLogger } from '../../src/logging.ts';
import { WorldFileError } from '../../src/open-storage.ts';
import { parseWorld } from '../../src/world/load.ts';

const demo = async () => JSON.parse(await readFile(new URL('../../src/world/demo-world.json', import.meta.url), 'utf8'));

/** Contract section 9's channel, as an operator writes it. */
const xmppChannel = () => ({
  id: 'team-xmpp', kind: 'xmpp', name: 'Team XMPP', shared: true, browsable: true, agents: ['claude'],
  xmpp: { service: 'xmpp://127.0.0.1:5222', domain: 'localhost', muc: 'conference.localhost', jid: 'console@localhost', password_env: 'XMPP_PASSWORD', nick: 'console' },
  links: { alice: 'alice@localhost', bob: 'bob@localhost' },
});

async function withChannel(change: (channel: any) => void = () => {}) {
  const world = await demo();
  const channel = xmppChannel();
  change(channel);
  world.channels.push(channel);
  return parseWorld(world);
}

async function refused(change: (channel: any) => void, path: string, reason: RegExp) {
  const parsed = await withChannel(change);
  assert.equal(parsed.ok, false, `expected ${path} to be refused`);
  if (parsed.ok) return;
  const at = (await demo()).channels.length;
  const issue = parsed.error.find((i) => i.path === `channels.${at}${path}`);
  assert.ok(issue, `no issue at channels.${at}${path}: ${JSON.stringify(parsed.error)}`);
  assert.match(issue.message, reason);
}

describe('an xmpp channel in the world file (contract section 9)', () => {
  it('is read with its account and links kept apart from the catalog entry, whose linked users are the links', async () => {
    const parsed = await withChannel();
    assert.ok(parsed.ok, JSON.stringify(!parsed.ok && parsed.error));
    const entry = parsed.value.channels.find((c) => c.id === 'team-xmpp')!;
    assert.deepEqual(entry.linked_users, ['alice', 'bob']);
    assert.deepEqual(entry.addresses, []);
    assert.equal('xmpp' in entry, false, 'the catalog entry (what reads return) carries no server or account');
    assert.equal('links' in entry, false);
    assert.deepEqual(parsed.value.xmpp, [{ channel: 'team-xmpp', account: xmppChannel().xmpp, links: xmppChannel().links }]);
  });

  it('refuses a password in the world, and names what is wrong with each field', async () => {
    await refused((c) => (c.xmpp.password = 'hunter2'), '.xmpp.password', /not a field of xmpp.*password_env/);
    await refused((c) => delete c.xmpp, '.xmpp', /required for an xmpp channel/);
    await refused((c) => (c.xmpp.password_env = 'not a name'), '.xmpp.password_env', /variable name/);
    await refused((c) => (c.xmpp.service = 'http://127.0.0.1:5222'), '.xmpp.service', /xmpp:\/\/host:port/);
    await refused((c) => (c.xmpp.jid = 'console@localhost/res'), '.xmpp.jid', /bare JID/);
    await refused((c) => (c.xmpp.muc = 'conference localhost'), '.xmpp.muc', /domain name/);
    await refused((c) => (c.xmpp.nick = 'a b'), '.xmpp.nick', /spaces/);
    await refused((c) => (c.links.alice = 'alice'), '.links.alice', /bare JID/);
    await refused((c) => (c.links.carol = 'carol@localhost'), '.links.carol', /no user/);
    await refused((c) => (c.linked_users = ['alice']), '.linked_users', /keys of links/);
    await refused((c) => (c.addresses = [{ id: 'x', name: 'x' }]), '.addresses', /rooms/);
    await refused((c) => (c.kind = 'chat'), '.xmpp', /only for a channel of kind "xmpp"/);
  });
});

describe('composing the channels of a world', () => {
  const compose = async (world: Awaited<ReturnType<typeof withChannel>>, env: Record<string, string>) => {
    assert.ok(world.ok);
    return chatChannels({ world: world.value, env, catalog: createMemoryStorage().catalog, log: createLogger('silent'), file: 'world.json' });
  };

  it('is nothing new without an xmpp channel (the world file channels serve alone)', async () => {
    const world = parseWorld(await demo());
    assert.ok(world.ok);
    assert.equal(await chatChannels({ world: world.value, env: {}, catalog: createMemoryStorage().catalog, log: createLogger('silent'), file: 'w' }), null);
  });

  it("refuses to start when the bot's password variable is not set, naming the variable and not any value", async () => {
    const world = await withChannel();
    await assert.rejects(compose(world, { OTHER: 'x' }), (error: unknown) =>
      error instanceof WorldFileError && /channels\[team-xmpp\]\.xmpp\.password_env names XMPP_PASSWORD, which is not set/.test(error.message));
  });
});
