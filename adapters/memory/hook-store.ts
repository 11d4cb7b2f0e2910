import type { Hook, HookStore, StoredHook } from '../../ports/hook-store.ts';

/** What the memory adapter keeps of hooks: hooks by id, and each kept key's call by `hook\u0000key`. */
export interface MemoryHooks {
  readonly hooks: Map<string, StoredHook>;
  readonly keys: Map<string, { readonly call_id: string; readonly at: string }>;
}

const shown = ({ secret_hash: _, ...hook }: StoredHook): Hook => hook;

/** Hooks in memory; each method checks and writes without an `await` in between, so a key names one call. */
export function memoryHookStore(state: MemoryHooks): HookStore {
  return {
    async create(hook, max) {
      if ([...state.hooks.values()].filter((h) => h.owner === hook.owner).length >= max) return false;
      state.hooks.set(hook.id, hook);
      return true;
    },
    list: async (owner) =>
      [...state.hooks.values()].filter((h) => h.owner === owner).sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)).map(shown),
    async remove(owner, id) {
      const hook = state.hooks.get(id);
      if (hook === undefined || hook.owner !== owner) return false;
      state.hooks.delete(id);
      for (const key of state.keys.keys()) if (key.startsWith(`${id}\u0000`)) state.keys.delete(key);
      return true;
    },
    find: async (id) => state.hooks.get(id) ?? null,
    async claimKey({ hook_id, key, call_id, at, since }) {
      const name = `${hook_id}\u0000${key}`;
      const kept = state.keys.get(name);
      if (kept !== undefined && Date.parse(kept.at) > Date.parse(since)) return kept.call_id;
      state.keys.set(name, { call_id, at });
      return call_id;
    },
  };
}
