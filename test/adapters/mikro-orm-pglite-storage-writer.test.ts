import { storageWriterContract } from '../contracts/storage-writer.contract.ts';
import { embeddedStorage } from '../support/embedded-storage.ts';

storageWriterContract('mikro-orm on embedded PGlite', embeddedStorage);
