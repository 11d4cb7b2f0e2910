// The ChannelLinks contract on every storage: memory, MikroORM on embedded PGlite, and (with
// TEST_DATABASE_URL) MikroORM on PostgreSQL, each with a second storage over the same data.
import { channelLinksContract } from '../contracts/channel-links.contract.ts';
import { allStorageKinds } from '../support/storage-kinds.ts';

for (const kind of allStorageKinds('links')) channelLinksContract(kind.name, () => kind.open());
