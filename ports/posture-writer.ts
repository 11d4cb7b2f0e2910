import type { Conversation, Id } from '../domain/model.ts';

/** Sets a conversation's approval posture; answers the updated row, or null when there is none. */
export type SetPermissionMode = (conversationId: Id, mode: string) => Promise<Conversation | null>;
