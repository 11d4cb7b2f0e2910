import { core } from '../packages.ts';
import type { DirectiveOrigin, Worktree } from '../../../domain/model.ts';

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
    /** Whether its owner archived it (the thread list leaves it out unless asked). */
    archived: p.boolean().default(false),
  },
  indexes: [
    { name: 'threads_owner_id_index', properties: ['owner', 'id'] },
    // The thread list's search (migration 0023): the expression its statement writes, exactly.
    { name: 'threads_title_search_index', expression: `create index "threads_title_search_index" on "threads" using gin (to_tsvector('simple', "title"))` },
  ],
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
    /** The schedule or hook that sent this directive (`{"kind", "id"}`); null for a person's, and for every other message. */
    origin: p.json<DirectiveOrigin>().nullable(),
    /** Whether a rewind took it back: the history brief of a later turn leaves it out (never answered). */
    rewound: p.boolean().default(false),
  },
  indexes: [
    { name: 'messages_thread_id_id_index', properties: ['thread_id', 'id'] },
    // The thread list's search of the ledger (migration 0023).
    { name: 'messages_text_search_index', expression: `create index "messages_text_search_index" on "messages" using gin (to_tsvector('simple', "text"))` },
  ],
});

/**
 * `thread_rewinds`: the journal of a rewind whose files are not yet put back (contract section 11): written with the
 * runs' marks, removed once the worktree holds `commit` (the checkpoint); one per thread at most.
 */
export const ThreadRewindSchema = defineEntity({
  name: 'ThreadRewind',
  tableName: 'thread_rewinds',
  properties: {
    thread_id: p.manyToOne(ThreadSchema).mapToPk().fieldName('thread_id').primary().deleteRule('cascade'),
    run_id: p.uuid(),
    commit: p.text(),
    created_at: p.datetime(),
  },
});
