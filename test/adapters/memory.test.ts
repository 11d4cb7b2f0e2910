import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { storageContract } from '../contracts/storage.contract.ts';

storageContract('memory', async () => createMemoryStorage());
