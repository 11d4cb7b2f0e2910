// The ChatInbox contract on every storage: memory, MikroORM on embedded PGlite, and (with
// TEST_DATABASE_URL) MikroORM on PostgreSQL, each with a second storage over the same data.
import { chatInboxContract } from '../contracts/chat-inbox.contract.ts';
import { allStorageKinds } from '../support/storage-kinds.ts';

for (const kind of allStorageKinds('chat_inbox')) chatInboxContract(kind.name, () => kind.open());
