import { storageContract } from '../contracts/storage.contract.ts';
import { embeddedStorage } from '../support/embedded-storage.ts';

storageContract('mikro-orm on embedded PGlite', embeddedStorage);
