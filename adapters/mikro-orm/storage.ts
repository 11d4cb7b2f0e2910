import type { MikroORM } from '@mikro-orm/postgresql';
import type { Storage } from '../../ports/storage.ts';
import { mikroOrmAccounts } from './accounts.ts';
import { keptCredentials } from './kept-credentials.ts';
import { mikroOrmArtifactStore } from './artifact-store.ts';
import { mikroOrmCatalog } from './catalog.ts';
import { mikroOrmChannelLinks } from './channel-links.ts';
import { mikroOrmHookStore } from './hook-store.ts';
import { mikroOrmScheduleStore } from './schedule-store.ts';
import { mikroOrmWebhookStore } from './webhook-store.ts';
import { mikroOrmChatInbox } from './chat-inbox.ts';
import { mikroOrmStorageWriter } from './storage-writer.ts';
import { mikroOrmConversationStore } from './conversation-store.ts';
import { mikroOrmDeliveryOutbox } from './delivery-outbox.ts';
import { mikroOrmEventLog } from './event-log.ts';
import { importWorld } from './import-world.ts';
import { mikroOrmLedgerStore } from './ledger-store.ts';
import { migrate } from './migrate.ts';
import { openOrm, type OrmOptions } from './orm.ts';
import { runStatement } from './sql.ts';
import { mikroOrmThreadStore } from './thread-store.ts';

/** Storage on MikroORM, plus the ORM itself for the write paths built beside these reads. */
export interface MikroOrmStorage extends Storage {
  /** The connected ORM: use `orm.em.fork()` per unit of work; never its global EntityManager. */
  readonly orm: MikroORM;
}

/** How long a readiness probe waits for the database before answering false. */
const READY_TIMEOUT_MS = 2_000;

/**
 * Connects to PostgreSQL (or the embedded PGlite socket), applies pending migrations, and answers
 * every store over that database. Every read is one SQL statement (`onQuery` sees each one).
 * Throws when the database cannot be reached or migrated at open. `kept.catalog`: the agents and projects
 * are kept in memory once read, until a world is imported through this storage; only for a database no
 * other process writes (the embedded one: its data dir is locked to one process). On a PostgreSQL server
 * shared by instances, another's world import would go unseen: they are read each time there. `kept.credentials`:
 * credentials found are kept a few seconds, forgotten at every write of this storage's that could change them
 * (kept-credentials.ts); only for such a database too.
 */
export async function createMikroOrmStorage(options: OrmOptions, kept: { readonly catalog?: boolean; readonly credentials?: boolean } = {}): Promise<MikroOrmStorage> {
  const orm = await openOrm(options);
  try {
    await migrate(orm);
  } catch (error) {
    await orm.close(true);
    throw error;
  }
  const catalog = mikroOrmCatalog(orm, { keep: kept.catalog === true });
  const credentials = kept.credentials === true ? keptCredentials(mikroOrmAccounts(orm)) : { accounts: mikroOrmAccounts(orm), forgetting: <T>(write: () => Promise<T>) => write() };
  return {
    orm,
    accounts: credentials.accounts,
    threads: mikroOrmThreadStore(orm),
    ledger: mikroOrmLedgerStore(orm),
    conversations: mikroOrmConversationStore(orm),
    catalog,
    artifacts: mikroOrmArtifactStore(orm),
    writer: mikroOrmStorageWriter(orm),
    events: mikroOrmEventLog(orm),
    outbox: mikroOrmDeliveryOutbox(orm),
    links: mikroOrmChannelLinks(orm),
    hooks: mikroOrmHookStore(orm),
    schedules: mikroOrmScheduleStore(orm),
    webhooks: mikroOrmWebhookStore(orm),
    chatInbox: mikroOrmChatInbox(orm),
    importWorld: async (world) => {
      try {
        await credentials.forgetting(() => importWorld(orm, world));
      } finally {
        catalog.forget();
      }
    },
    isEmpty: async () => (await runStatement<{ empty: boolean }>(orm, 'select not exists (select 1 from users) as empty', []))[0]!.empty,
    ready: () => probe(orm),
    close: () => orm.close(true),
    pool: () => {
      // knex's pool is tarn's; it exists once the ORM connected.
      const tarn = (orm.em.getConnection().getKnex().client as { pool?: { numUsed(): number; numFree(): number; numPendingAcquires(): number } }).pool;
      return tarn === undefined ? { used: 0, free: 0, pending: 0 } : { used: tarn.numUsed(), free: tarn.numFree(), pending: tarn.numPendingAcquires() };
    },
  };
}

/** `select 1` within a time limit; any failure (refused, reset, timed out) is "not ready", never an error. */
async function probe(orm: MikroORM): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), READY_TIMEOUT_MS);
  });
  const query = orm.em.getConnection().execute('select 1', [], 'all').then(() => true, () => false);
  try {
    return await Promise.race([query, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
