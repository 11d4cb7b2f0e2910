import { core } from '../packages.ts';
import { RUN_STATUSES } from '../../../domain/model.ts';
import { ThreadSchema } from './threads.ts';
import type { DeliveryAsk } from '../../../ports/delivery-outbox.ts';

/** Loaded with `require`, not `import` (see ../packages.ts). */
const { defineEntity, p } = core;

/** `conversations`: one agent's conversation in a thread, with its posture and agent session. */
export const ConversationSchema = defineEntity({
  name: 'Conversation',
  tableName: 'conversations',
  properties: {
    id: p.uuid().primary(),
    thread_id: p.manyToOne(ThreadSchema).mapToPk().fieldName('thread_id'),
    agent: p.text(),
    model: p.text().nullable(),
    permission_mode: p.text().nullable(),
    effort: p.text().nullable(),
    address: p.json<{ channel: string; id: string }>().nullable(),
    turn_running: p.boolean(),
    created_at: p.datetime(),
    /** Where a teleport moved the conversation (`MovedTo`); null while it is here. */
    moved_to: p.json<{ thread_id: string; conversation_id: string; address: { channel: string; id: string } }>().nullable(),
    // The agent session the conversation runs in: written and read on its own, never part of the row answered.
    session_id: p.text().nullable(),
    // The running turn's lease: its run, the instance holding it, and when it lapses unless renewed.
    turn_run_id: p.uuid().nullable(),
    turn_holder: p.text().nullable(),
    turn_expires_at: p.datetime().nullable(),
  },
  indexes: [
    { name: 'conversations_thread_id_id_index', properties: ['thread_id', 'id'] },
    { name: 'conversations_turn_expires_at_index', properties: ['turn_expires_at'] },
  ],
});

/**
 * `runs`: an agent run under a conversation; `started_at` is the time its id carries. `message_id` is the
 * ledger message that started it (never answered), `rewound` whether a rewind took it back.
 */
export const RunSchema = defineEntity({
  name: 'Run',
  tableName: 'runs',
  properties: {
    id: p.uuid().primary(),
    conversation_id: p.manyToOne(ConversationSchema).mapToPk().fieldName('conversation_id'),
    directory: p.text().nullable(),
    status: p.enum([...RUN_STATUSES]),
    error: p.text().nullable(),
    started_at: p.datetime(),
    ended_at: p.datetime().nullable(),
    message_id: p.uuid().nullable(),
    rewound: p.boolean().default(false),
  },
  indexes: [{ name: 'runs_conversation_id_id_index', properties: ['conversation_id', 'id'] }],
});

/** `model_messages`: the model conversation inside a run. */
export const ModelMessageSchema = defineEntity({
  name: 'ModelMessage',
  tableName: 'model_messages',
  properties: {
    id: p.uuid().primary(),
    run_id: p.manyToOne(RunSchema).mapToPk().fieldName('run_id'),
    role: p.text(),
    content: p.text(),
    created_at: p.datetime(),
  },
  indexes: [{ name: 'model_messages_run_id_id_index', properties: ['run_id', 'id'] }],
});

/** `pending`: an approval or question waiting for the user; `run_id` is informative, not a foreign key. */
export const PendingSchema = defineEntity({
  name: 'Pending',
  tableName: 'pending',
  properties: {
    id: p.uuid().primary(),
    kind: p.enum(['approval', 'question']),
    conversation_id: p.manyToOne(ConversationSchema).mapToPk().fieldName('conversation_id'),
    run_id: p.uuid().nullable(),
    title: p.text(),
    options: p.json<{ id: string; name: string; kind: string | null }[]>(),
    /** The ACP tool call an approval asks about. */
    tool_call: p.json<Record<string, unknown>>().nullable(),
  },
  indexes: [{ name: 'pending_conversation_id_index', properties: ['conversation_id'] }],
});

/**
 * `pending_answers`: the answer given to a pending item whose run still waits for it, kept until
 * the run ends, so an agent whose answer signal was lost (a bus reconnect) finds it in storage.
 */
export const PendingAnswerSchema = defineEntity({
  name: 'PendingAnswer',
  tableName: 'pending_answers',
  properties: {
    pending_id: p.uuid().primary(),
    run_id: p.uuid(),
    answer: p.json<Record<string, unknown>>(),
  },
  indexes: [{ name: 'pending_answers_run_id_index', properties: ['run_id'] }],
});

/** `deliveries`: the outbox of deliveries to channels, each kept until its channel takes it. */
export const DeliverySchema = defineEntity({
  name: 'Delivery',
  tableName: 'deliveries',
  properties: {
    id: p.uuid().primary(),
    channel: p.text(),
    place: p.text(),
    new_thread: p.boolean(),
    address: p.json<{ channel: string; id: string }>(),
    title: p.text(),
    text: p.text(),
    /** The approval or question it asks (buttons where the platform has them), or null (migration 0016-delivery-asks). */
    ask: p.json<DeliveryAsk>().nullable(),
    /** The platform address of the one person it is for (`Delivery.to`), or null: everyone at the place. */
    recipient: p.text().nullable(),
    attempts: p.integer().default(0),
    /** When it is due: now or a retry's time, or the end of the claim `holder` has on it. */
    due_at: p.datetime(),
    holder: p.text().nullable(),
  },
  indexes: [{ name: 'deliveries_due_at_index', properties: ['due_at'] }],
});
