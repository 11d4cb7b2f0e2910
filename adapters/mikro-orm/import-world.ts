import type { EntitySchema } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { uuid7Time } from '../../domain/vocabulary.ts';
import type { World } from '../../domain/world.ts';
import {
  AgentSchema, ArtifactSchema, ChannelSchema, ConversationSchema, InstallationSchema, MessageSchema, ModelMessageSchema,
  PendingSchema, ProjectSchema, RunSchema, ThreadMemberSchema, ThreadSchema, UserSchema,
} from './entities/index.ts';

/** Rows per statement: a large world is written in a few bounded statements per table. */
const BATCH = 500;

/** The time a UUIDv7 carries, for the created_at and started_at columns. */
const timeOf = (id: string): Date => new Date(uuid7Time(id));

/**
 * `insert ... on conflict (<key>) do update` of every mapped column (`do nothing` for a table that is
 * all key), in batches, inside the caller's transaction. Rows are cut to the mapped properties, so a
 * world object carrying more fields than the table cannot break the insert.
 */
async function upsert(em: EntityManager, schema: EntitySchema<any>, rows: readonly object[], key: string[]): Promise<void> {
  const columns = Object.keys(schema.meta.properties);
  const mapped = rows.map((row) => Object.fromEntries(columns.filter((c) => c in row).map((c) => [c, (row as Record<string, unknown>)[c]])));
  for (let at = 0; at < mapped.length; at += BATCH) {
    const insert = em.createQueryBuilder(schema).insert(mapped.slice(at, at + BATCH)).onConflict(key);
    await (columns.length > key.length ? insert.merge() : insert.ignore()).execute();
  }
}

/**
 * Writes a world in one transaction, upserting by id, so importing it twice doubles nothing; a
 * thread's members are replaced. Parents are written before their children (the foreign keys).
 * Every statement runs on the transaction's one connection and nothing else is awaited meanwhile:
 * the embedded socket serves all connections from one session, so waiting on another would deadlock.
 *
 * The transaction is the connection's (knex's), its query builders bound to it, never `em.transactional`
 * (nor `em.flush`): those run in an AsyncLocalStorage, and once one has run, Node keeps a promise hook
 * on for the rest of the process, which roughly doubles what every await of every request costs
 * (test/promise-hooks-off.test.ts fails if something on the start path turns it on again).
 */
export async function importWorld(orm: MikroORM, world: World): Promise<void> {
  const threads = world.threads;
  const conversations = threads.flatMap((t) => t.conversations.map((c) => ({ thread: t, c })));
  const runs = conversations.flatMap(({ c }) => c.runs.map((r) => ({ c, r })));
  await orm.em.getConnection().transactional(async (trx) => {
    const em = orm.em.fork();
    em.setTransactionContext(trx);
    // A world user's name, token and role are the world's (and it signs in by token, not OpenID Connect);
    // `active` and `created_at` are not in the rows, so a re-import keeps an admin's deactivation.
    await upsert(em, UserSchema, world.users.map((u) => ({ id: u.id, name: u.name, token_hash: u.token_hash, role: u.role, issuer: null, subject: null })), ['id']);
    await upsert(em, ProjectSchema, world.projects, ['name']);
    await upsert(em, AgentSchema, world.agents.map((a) => ({ ...a, env: a.env ?? {}, env_pass: a.env_pass ?? [], network: a.network ?? 'host' })), ['id']);
    await upsert(em, ChannelSchema, world.channels, ['id']);
    await upsert(em, InstallationSchema, world.installations, ['id']);
    await upsert(em, ArtifactSchema, world.artifacts.map((a) => ({ ...a, created_at: timeOf(a.id) })), ['id']);
    await upsert(em, ThreadSchema, threads.map((t) => ({ ...t, created_at: timeOf(t.id) })), ['id']);
    for (let at = 0; at < threads.length; at += BATCH) {
      const ids = threads.slice(at, at + BATCH).map((t) => t.id);
      await em.createQueryBuilder(ThreadMemberSchema).delete({ thread_id: { $in: ids } }).execute();
    }
    await upsert(em, ThreadMemberSchema, threads.flatMap((t) => t.members.map((user_id) => ({ thread_id: t.id, user_id }))), ['thread_id', 'user_id']);
    await upsert(em, MessageSchema, threads.flatMap((t) => t.messages.map((m) => ({ ...m, thread_id: t.id, created_at: timeOf(m.id) }))), ['id']);
    await upsert(em, ConversationSchema, conversations.map(({ thread, c }) => ({
      id: c.id, thread_id: thread.id, agent: c.agent, model: c.model, permission_mode: c.permission_mode, effort: c.effort,
      address: c.address, turn_running: c.turn_running, created_at: timeOf(c.id),
    })), ['id']);
    await upsert(em, RunSchema, runs.map(({ c, r }) => ({
      id: r.id, conversation_id: c.id, directory: r.directory, status: r.status, error: r.error,
      started_at: timeOf(r.id), ended_at: r.ended_at === null ? null : new Date(r.ended_at), rewound: false,
    })), ['id']);
    await upsert(em, ModelMessageSchema, runs.flatMap(({ r }) => r.model_messages.map((m) => ({ ...m, run_id: r.id, created_at: timeOf(m.id) }))), ['id']);
    await upsert(em, PendingSchema, conversations.flatMap(({ c }) => c.pending.map((p) => ({ ...p, conversation_id: c.id }))), ['id']);
  });
}
