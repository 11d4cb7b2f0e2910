import type { EntitySchema } from '@mikro-orm/core';
import { AgentSchema, ChannelSchema, ConversationSchema, MessageSchema, ModelMessageSchema, PendingSchema, RunSchema, ThreadSchema } from './entities/index.ts';
import { iso } from './sql.ts';

/** A mapped property as the entity definition declares it (before discovery: its options). */
interface DeclaredProperty {
  readonly fieldName?: string;
  readonly type?: unknown;
}

const isTime = (property: DeclaredProperty): boolean => (property.type as { name?: string } | undefined)?.name === 'DateTimeType';

/**
 * The select list of a row as the reads answer it, from its entity definition (one source for the
 * columns): every mapped column but `omit`, times as ISO strings, each under its property's name,
 * qualified by `alias` when the statement joins. Built once, at load.
 */
export function answerColumns(schema: EntitySchema, options: { readonly alias?: string; readonly omit?: readonly string[] } = {}): string {
  const properties = (schema.meta as unknown as { properties: Record<string, DeclaredProperty> }).properties;
  const prefix = options.alias === undefined ? '' : `${options.alias}.`;
  return Object.entries(properties)
    .filter(([name]) => !(options.omit ?? []).includes(name))
    .map(([name, property]) => {
      const column = `${prefix}${property.fieldName ?? name}`;
      if (isTime(property)) return `${iso(column)} as ${name}`;
      return column === name ? column : `${column} as ${name}`;
    })
    .join(', ');
}

/**
 * A select list per alias, built on its first use and kept: the reads ask for one on every call,
 * and building it (the entity's properties walked, filtered and joined) cost a ledger page a few µs.
 */
function byAlias(build: (alias: string) => string): (alias: string) => string {
  const built = new Map<string, string>();
  return (alias) => {
    let columns = built.get(alias);
    if (columns === undefined) built.set(alias, (columns = build(alias)));
    return columns;
  };
}

/** What a conversation row keeps that the reads never answer: its agent session and its turn's lease. */
const CONVERSATION_PRIVATE = ['session_id', 'turn_run_id', 'turn_holder', 'turn_expires_at'];

export const THREAD = answerColumns(ThreadSchema);
export const CONVERSATION = answerColumns(ConversationSchema, { omit: CONVERSATION_PRIVATE });
export const CONVERSATION_OF = byAlias((alias) => answerColumns(ConversationSchema, { alias, omit: CONVERSATION_PRIVATE }));
/** What a run row keeps that the reads never answer: the ledger message that started it. */
const RUN_PRIVATE = ['message_id'];

export const RUN = answerColumns(RunSchema, { omit: RUN_PRIVATE });
export const RUN_OF = byAlias((alias) => answerColumns(RunSchema, { alias, omit: RUN_PRIVATE }));
export const MODEL_MESSAGE_OF = byAlias((alias) => answerColumns(ModelMessageSchema, { alias }));
export const PENDING_OF = byAlias((alias) => answerColumns(PendingSchema, { alias }));
/** A ledger message without its thread (the ledger read answers the row, not where it lives). */
export const MESSAGE_OF = byAlias((alias) => answerColumns(MessageSchema, { alias, omit: ['thread_id', 'rewound'] }));
export const AGENT = answerColumns(AgentSchema);
export const CHANNEL = answerColumns(ChannelSchema);
