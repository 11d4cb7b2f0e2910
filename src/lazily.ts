/**
 * An async function whose implementation is imported on first call (or on `warm()`), so a start to
 * `/readyz` does not load a large module graph it does not use (the MCP SDK, with zod and ajv). A
 * failed import is not kept: the next call tries again.
 */
export function lazily<A extends unknown[], R>(load: () => Promise<(...args: A) => Promise<R>>): {
  readonly call: (...args: A) => Promise<R>;
  /** Starts the import now, in the background; a failure waits for the first call. */
  readonly warm: () => void;
} {
  let loading: Promise<(...args: A) => Promise<R>> | undefined;
  const loaded = () =>
    (loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    }));
  return {
    call: async (...args) => (await loaded())(...args),
    warm: () => void loaded().catch(() => {}),
  };
}
