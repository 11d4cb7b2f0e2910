import { SERVED_PLACES_MAX, type ChatCursor, type ChatInbox } from '../../ports/chat-inbox.ts';

/**
 * What the memory adapter keeps for chat adapters: cursors by `channel\u0000place`, claims by
 * `channel\u0000key`, occupants by `channel\u0000place\u0000occupant` (an empty sender: two were seen),
 * served places by channel, in the order they were added.
 */
export interface MemoryChatInbox {
  readonly cursors: Map<string, ChatCursor>;
  readonly claims: Map<string, { holder: string; until: number; done: boolean; created: number }>;
  readonly occupants: Map<string, string>;
  readonly served: Map<string, string[]>;
}

const key = (channel: string, rest: string) => `${channel}\u0000${rest}`;

/** The chat inbox in memory; a claim checks and writes without an `await` in between. */
export function memoryChatInbox(state: MemoryChatInbox, now: () => number = Date.now): ChatInbox {
  return {
    cursor: async (channel, place) => state.cursors.get(key(channel, place)) ?? null,
    async advance(channel, place, cursor) {
      state.cursors.set(key(channel, place), { id: cursor.id, at: cursor.at });
    },
    async claim(channel, name, holder, leaseMs) {
      const found = state.claims.get(key(channel, name));
      if (found !== undefined && (found.done || (found.until > now() && found.holder !== holder))) return false;
      state.claims.set(key(channel, name), { holder, until: now() + leaseMs, done: false, created: found?.created ?? now() });
      return true;
    },
    async done(channel, name) {
      const found = state.claims.get(key(channel, name));
      state.claims.set(key(channel, name), { holder: found?.holder ?? '', until: 0, done: true, created: found?.created ?? now() });
    },
    isDone: async (channel, name) => state.claims.get(key(channel, name))?.done === true,
    async pruneClaims(before) {
      let pruned = 0;
      for (const [name, claim] of state.claims) {
        if (claim.created < before.getTime() && (claim.done || claim.until <= now())) {
          state.claims.delete(name);
          pruned += 1;
        }
      }
      return pruned;
    },
    async rememberOccupant(channel, place, occupant, sender) {
      const name = key(channel, `${place}\u0000${occupant}`);
      const known = state.occupants.get(name);
      state.occupants.set(name, known === undefined || known === sender ? sender : '');
    },
    async occupant(channel, place, occupant) {
      const sender = state.occupants.get(key(channel, `${place}\u0000${occupant}`));
      return sender === undefined || sender === '' ? null : sender;
    },
      async serve(channel, place) {
      const places = state.served.get(channel) ?? [];
      if (places.includes(place)) return 'known';
      if (places.length >= SERVED_PLACES_MAX) return 'full';
      state.served.set(channel, [...places, place]);
      return 'added';
    },
    served: async (channel) => [...(state.served.get(channel) ?? [])],
    async unserve(channel, place) {
      const places = state.served.get(channel) ?? [];
      if (!places.includes(place)) return false;
      state.served.set(channel, places.filter((served) => served !== place));
      return true;
    },
  };
}
