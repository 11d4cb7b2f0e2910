import { consoleWriterContract } from '../contracts/console-writer.contract.ts';
import { embeddedStorage } from '../support/embedded-storage.ts';

consoleWriterContract('mikro-orm on embedded PGlite', embeddedStorage);
