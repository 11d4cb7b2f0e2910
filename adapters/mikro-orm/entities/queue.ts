import { core } from '../packages.ts';
import { ConversationSchema } from './conversations.ts';
import type { DirectiveOrigin } from '../../../domain/model.ts';
import { ThreadSchema } from './threads.ts';

/** Loaded with `require`, not `import` (see ../packages.ts). */
const { defineEntity, p } = core;

/**
 * `directive_queue`: directives waiting for their thread's turn, run one per turn by `ordinal` (an
 * interrupt takes one below the smallest, so it runs first). A row is deleted when its turn starts
 * or when it is revoked; its ledger message (`message_id`) stays. `directory` and `permission_mode`
 * are what the directive asked, kept for the turn it starts later; `origin` where it came from.
 */
export const QueuedDirectiveSchema = defineEntity({
  name: 'QueuedDirective',
  tableName: 'directive_queue',
  properties: {
    id: p.uuid().primary(),
    thread_id: p.manyToOne(ThreadSchema).mapToPk().fieldName('thread_id'),
    conversation_id: p.manyToOne(ConversationSchema).mapToPk().fieldName('conversation_id'),
    message_id: p.uuid(),
    text: p.text(),
    author: p.text(),
    ordinal: p.integer(),
    directory: p.text().nullable(),
    permission_mode: p.text().nullable(),
    created_at: p.datetime(),
    /** The schedule or hook that queued it; its ledger message has the same (null: a person's). */
    origin: p.json<DirectiveOrigin>().nullable(),
  },
  indexes: [{ name: 'directive_queue_thread_id_ordinal_index', properties: ['thread_id', 'ordinal'] }],
});

/**
 * `unsent_prompts`: a queued directive's run started by a hand-over, until its turn takes the prompt
 * to send it to the agent (the row is deleted then, or when the turn is handed over or released).
 * `started` is the item, its ledger message and its `dequeued` event, as the hand-over answered them.
 */
export const UnsentPromptSchema = defineEntity({
  name: 'UnsentPrompt',
  tableName: 'unsent_prompts',
  properties: {
    run_id: p.uuid().primary(),
    thread_id: p.manyToOne(ThreadSchema).mapToPk().fieldName('thread_id'),
    started: p.json<unknown>(),
  },
});
