import { createMemoryEventBus } from '../../adapters/memory/event-bus.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { emptyState } from '../../adapters/memory/state.ts';
import { memoryChannelPort } from '../../adapters/memory/channel-port.ts';
import { channelPortContract } from '../contracts/channel-port.contract.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { storageWriterContract } from '../contracts/storage-writer.contract.ts';
import { directiveQueueContract } from '../contracts/directive-queue.contract.ts';
import { eventBusContract } from '../contracts/event-bus.contract.ts';
import { eventLogContract } from '../contracts/event-log.contract.ts';
import { storageContract } from '../contracts/storage.contract.ts';

storageContract('memory', async () => createMemoryStorage());
storageWriterContract('memory', async () => createMemoryStorage());
eventLogContract('memory', async () => createMemoryStorage());
directiveQueueContract('memory', async () => {
  const state = emptyState();
  return { storage: createMemoryStorage(state), reopen: async () => createMemoryStorage(state), close: async () => {} };
});
eventBusContract('in-process bus on memory', async () => ({
  storage: createMemoryStorage(), bus: createMemoryEventBus(), peer: null, dropConnections: null,
}));
channelPortContract('memory (the world file channels)', async () => {
  const storage = createMemoryStorage();
  await storage.importWorld(fixtureWorld());
  const port = memoryChannelPort(storage.catalog);
  const person = (address: string) => ({
    address,
    say: async (at: string, text: string, originId: string | null = null) => {
      await port.say({ channel: 'team-chat', at, sender: address, text, originId });
    },
  });
  return {
    port,
    channel: { id: 'team-chat', kind: 'chat' },
    open: { id: 'general', inside: 'general' },
    thread: 'general/t1',
    barred: { id: 'ops', reason: /not in this room/ },
    seen: async (id) => port.read('team-chat', 'general').filter((post) => post.originId === id).map((post) => ({ address: post.at, body: post.text })),
    read: async (at) => port.read('team-chat', at).map((post) => ({ body: post.text, originId: post.originId })),
    addressBot: (text) => `console: ${text}`,
    people: { alice: person('alice@chat.example'), robot: person('robot@chat.example') },
    another: null,
    server: null,
    close: () => storage.close(),
  };
});
