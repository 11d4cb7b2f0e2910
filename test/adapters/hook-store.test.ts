// The HookStore contract on every storage: memory, MikroORM on embedded PGlite, and (with
// TEST_DATABASE_URL) MikroORM on PostgreSQL, each with a second storage over the same data.
import { hookStoreContract } from '../contracts/hook-store.contract.ts';
import { allStorageKinds } from '../support/storage-kinds.ts';

for (const kind of allStorageKinds('hooks')) hookStoreContract(kind.name, () => kind.open());
