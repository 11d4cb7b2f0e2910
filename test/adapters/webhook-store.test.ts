// The WebhookStore contract on every storage: memory, MikroORM on embedded PGlite, and (with TEST_DATABASE_URL)
// MikroORM on PostgreSQL, each with a second storage over the same data.
import { webhookStoreContract } from '../contracts/webhook-store.contract.ts';
import { allStorageKinds } from '../support/storage-kinds.ts';

for (const kind of allStorageKinds('webhooks')) webhookStoreContract(kind.name, () => kind.open());
