/**
 * A hook in (contract section 12): a URL with a secret that sends a directive as its owner. With
 * `thread_id`, to that thread (queued when busy); without, to a new thread each time, with `project` and
 * `model` as a directive's. Only the SHA-256 of the secret is stored.
 */
export interface Hook {
  readonly id: string;
  readonly owner: string;
  readonly thread_id: string | null;
  readonly project: string | null;
  readonly model: string | null;
  /** ISO 8601, UTC. */
  readonly created_at: string;
}

/** A hook as stored: with the SHA-256 (hex) of its secret, never the secret. */
export interface StoredHook extends Hook {
  readonly secret_hash: string;
}

/** A call's idempotency key as it is claimed: the call id to use when the key is new (or its last use is too old). */
export interface KeyClaim {
  readonly hook_id: string;
  /** The caller's `idempotency_key`. */
  readonly key: string;
  /** A fresh call id (a UUID), kept for the key when no call within the window holds it. */
  readonly call_id: string;
  /** ISO 8601: now, by the caller's clock. */
  readonly at: string;
  /** ISO 8601: a call kept for the key at or before this instant is too old, and replaced by `call_id`. */
  readonly since: string;
}

/**
 * Stored hooks, and the idempotency keys of their calls. A key names one call id for its window: every
 * claim of it, on any instance, at once or later, answers the same id until the window ends, and the
 * directive is deduplicated by it (its `message_id`), in the directive's own transaction.
 */
export interface HookStore {
  /** Stores a hook; false (nothing stored) when its owner is at the limit of `max` hooks. */
  create(hook: StoredHook, max: number): Promise<boolean>;
  /** The owner's hooks, newest first, without their secrets' hashes. */
  list(owner: string): Promise<Hook[]>;
  /** Removes one of the owner's hooks (and its kept keys); false when the owner has none by that id. */
  remove(owner: string, id: string): Promise<boolean>;
  /** A hook by id, with its secret's hash; null when there is none. */
  find(id: string): Promise<StoredHook | null>;
  /** The call id a key names now: the one kept within the window, else `claim.call_id`, kept from now on. */
  claimKey(claim: KeyClaim): Promise<string>;
}
