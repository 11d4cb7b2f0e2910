import { createMemoryEventBus } from '../../adapters/memory/event-bus.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { emptyState } from '../../adapters/memory/state.ts';
import { consoleWriterContract } from '../contracts/console-writer.contract.ts';
import { directiveQueueContract } from '../contracts/directive-queue.contract.ts';
import { eventBusContract } from '../contracts/event-bus.contract.ts';
import { eventLogContract } from '../contracts/event-log.contract.ts';
import { storageContract } from '../contracts/storage.contract.ts';

storageContract('memory', async () => createMemoryStorage());
consoleWriterContract('memory', async () => createMemoryStorage());
eventLogContract('memory', async () => createMemoryStorage());
directiveQueueContract('memory', async () => {
  const state = emptyState();
  return { storage: createMemoryStorage(state), reopen: async () => createMemoryStorage(state), close: async () => {} };
});
eventBusContract('in-process bus on memory', async () => ({
  storage: createMemoryStorage(), bus: createMemoryEventBus(), peer: null, dropConnections: null,
}));
