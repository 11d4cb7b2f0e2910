import type { SetPermissionMode } from '../../ports/posture-writer.ts';
import type { MemoryState } from './state.ts';

/** Sets a conversation's approval posture in the memory state. */
export function memorySetPermissionMode(state: MemoryState): SetPermissionMode {
  return async (conversationId, mode) => {
    const conversation = state.conversations.get(conversationId);
    if (conversation === undefined) return null;
    const updated = { ...conversation, permission_mode: mode };
    state.conversations.set(conversationId, updated);
    return updated;
  };
}
