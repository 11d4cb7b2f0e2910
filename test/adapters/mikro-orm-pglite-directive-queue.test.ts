import { directiveQueueContract } from '../contracts/directive-queue.contract.ts';
import { openEmbedded } from '../support/embedded-storage.ts';

directiveQueueContract('mikro-orm on embedded PGlite', openEmbedded);
