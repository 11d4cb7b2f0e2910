import { core } from '../packages.ts';
import type { Worktree } from '../../../domain/model.ts';

/** Loaded with `require`, not `import` (see ../packages.ts). */
const { defineEntity, p } = core;

/**
 * `threads`: a thread row. `fork_of` is a plain id: the fork chain is read with a recursive query
 * that stops at a missing parent, as the domain's fork rule does. Keys are unique per owner.
 */
export const ThreadSchema = defineEntity({
  name: 'Thread',
  tableName: 'threads',
  properties: {
    id: p.uuid().primary(),
    key: p.text().nullable(),
    channel: p.text(),
    owner: p.text(),
    project: p.text().nullable(),
    title: p.text(),
    fork_of: p.uuid().nullable(),
    fork_cutoff: p.uuid().nullable(),
    created_at: p.datetime(),
    /** The thread's git worktree ({branch, base, path}), once its first turn on a repository project made it. */
    worktree: p.json<Worktree>().nullable(),
  },
  indexes: [{ name: 'threads_owner_id_index', properties: ['owner', 'id'] }],
  uniques: [
    {
      name: 'threads_owner_key_unique',
      expression: 'create unique index "threads_owner_key_unique" on "threads" ("owner", "key") where "key" is not null',
    },
  ],
});

/** `thread_members`: who besides the owner may use a thread; replaced per thread on import. */
export const ThreadMemberSchema = defineEntity({
  name: 'ThreadMember',
  tableName: 'thread_members',
  properties: {
    thread_id: p.manyToOne(ThreadSchema).primary().mapToPk().fieldName('thread_id'),
    user_id: p.text().primary(),
  },
  indexes: [{ name: 'thread_members_user_id_thread_id_index', properties: ['user_id', 'thread_id'] }],
});

/** `messages`: the chat ledger; a page is a backward range scan of (thread_id, id). */
export const MessageSchema = defineEntity({
  name: 'Message',
  tableName: 'messages',
  properties: {
    id: p.uuid().primary(),
    thread_id: p.manyToOne(ThreadSchema).mapToPk().fieldName('thread_id'),
    role: p.text(),
    text: p.text(),
    artifact_id: p.uuid().nullable(),
    created_at: p.datetime(),
  },
  indexes: [{ name: 'messages_thread_id_id_index', properties: ['thread_id', 'id'] }],
});
