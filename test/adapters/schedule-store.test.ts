// The ScheduleStore contract, and the scheduler over it, on every storage: memory, MikroORM on embedded PGlite,
// and (with TEST_DATABASE_URL) MikroORM on PostgreSQL, each with a second storage over the same data.
import { scheduleStoreContract } from '../contracts/schedule-store.contract.ts';
import { allStorageKinds } from '../support/storage-kinds.ts';

for (const kind of allStorageKinds('schedules')) scheduleStoreContract(kind.name, () => kind.open());
