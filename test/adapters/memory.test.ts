import { createMemoryEventBus } from '../../adapters/memory/event-bus.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { consoleWriterContract } from '../contracts/console-writer.contract.ts';
import { eventBusContract } from '../contracts/event-bus.contract.ts';
import { eventLogContract } from '../contracts/event-log.contract.ts';
import { storageContract } from '../contracts/storage.contract.ts';

storageContract('memory', async () => createMemoryStorage());
consoleWriterContract('memory', async () => createMemoryStorage());
eventLogContract('memory', async () => createMemoryStorage());
eventBusContract('in-process bus on memory', async () => ({
  storage: createMemoryStorage(), bus: createMemoryEventBus(), peer: null, dropConnections: null,
}));
