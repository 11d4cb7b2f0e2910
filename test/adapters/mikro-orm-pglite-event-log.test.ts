import { eventLogContract } from '../contracts/event-log.contract.ts';
import { embeddedStorage } from '../support/embedded-storage.ts';

eventLogContract('mikro-orm on embedded PGlite', embeddedStorage);
