import assert from 'node:assert/strict';
import { test } from 'node:test';
import { memoryChannelPort } from '../../adapters/memory/channel-port.ts';
import { memoryDeliveryOutbox } from '../../adapters/memory/delivery-outbox.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { deliveryDispatcher } from '../../core/moves/delivery-dispatch.ts';
import type { Channel } from '../../domain/model.ts';
import { ChannelUnavailableError } from '../../ports/channel-port.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { manualClock } from '../support/manual-clock.ts';
import { createLogger } from '../../src/logging.ts';

/**
 * An xmpp channel whose settings left the world while its catalog row stayed (the demo's
 * DEMO_XMPP_* unset after a start that had them): the world file channels' port must not take its
 * deliveries, which would drop them, nor list it as a channel with no places.
 */
async function storageWithUnservedXmppChannel() {
  const storage = createMemoryStorage();
  const world = fixtureWorld();
  const xmpp: Channel = { id: 'team-xmpp', kind: 'xmpp', name: 'Team XMPP', shared: true, browsable: true, agents: ['claude'], defaults: null, linked_users: ['alice'], addresses: [] };
  await storage.importWorld({ ...world, channels: [...world.channels, xmpp] });
  return storage;
}

const delivery = (channel: string, place: string) => ({
  id: '019a0000-0000-7000-8000-000000000001',
  channel,
  place,
  new_thread: false,
  address: { channel, id: place },
  title: '',
  text: 'the reply',
});

test('an xmpp channel with no adapter on this instance is away: listing its places throws ChannelUnavailableError', async () => {
  const port = memoryChannelPort((await storageWithUnservedXmppChannel()).catalog);
  await assert.rejects(port.places('team-xmpp', null), ChannelUnavailableError);
  // The world file's own channels are served as before.
  assert.notEqual(await port.places('team-chat', null), null);
});

test('a delivery to an xmpp channel with no adapter stays in the outbox, retried later; one to a world file channel goes', async () => {
  const storage = await storageWithUnservedXmppChannel();
  const port = memoryChannelPort(storage.catalog);
  await assert.rejects(port.deliver(delivery('team-xmpp', 'room@muc.example')), ChannelUnavailableError);

  // The outbox and its dispatcher on one clock, moved by hand.
  const clock = manualClock();
  const outbox = memoryDeliveryOutbox(new Map(), clock.now);
  await outbox.add(delivery('team-xmpp', 'room@muc.example'));
  await outbox.add({ ...delivery('team-chat', 'general'), id: '019a0000-0000-7000-8000-000000000002' });
  const dispatcher = deliveryDispatcher({
    outbox, channels: port, log: createLogger('silent'), holder: 'test', intervalMs: 60_000, retryMs: 1, maxRetryMs: 1, claimMs: 30_000, clock,
  });
  dispatcher.poke();
  for (let waited = 0; port.read('team-chat', 'general').length === 0 && waited < 5_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
  await dispatcher.close();
  assert.deepEqual(port.read('team-chat', 'general').map((post) => post.text), ['the reply']);
  // Still stored, due again after its back-off (1 ms here), with its refused attempt counted.
  assert.deepEqual(await outbox.claimDue('other', 30_000, 10), [], 'not due before its back-off');
  await clock.advance(1);
  const due = await outbox.claimDue('other', 30_000, 10);
  assert.deepEqual(due.map((entry) => [entry.id, entry.channel]), [['019a0000-0000-7000-8000-000000000001', 'team-xmpp']]);
  assert.ok(due[0]!.attempts >= 1, 'its refused attempts are counted');
});

test('a slack channel with no adapter on this instance is away too: its places answer unavailable and its delivery is refused', async () => {
  const storage = createMemoryStorage();
  const world = fixtureWorld();
  const slack: Channel = { id: 'team-slack', kind: 'slack', name: 'Team Slack', shared: true, browsable: true, agents: ['claude'], defaults: null, linked_users: ['alice'], addresses: [] };
  await storage.importWorld({ ...world, channels: [...world.channels, slack] });
  const port = memoryChannelPort(storage.catalog);
  await assert.rejects(port.places('team-slack', null), ChannelUnavailableError);
  await assert.rejects(port.deliver(delivery('team-slack', 'C0GENERAL:1700000000.000001')), ChannelUnavailableError);
});
