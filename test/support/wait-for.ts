/**
 * Waits for something a test expects to happen, instead of a fixed sleep: polls `condition` every `everyMs`
 * (10 by default) until it holds, and fails naming `what` never came once `timeoutMs` (5 s by default) has passed.
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  { timeoutMs = 5_000, everyMs = 10, what }: { readonly timeoutMs?: number; readonly everyMs?: number; readonly what: string },
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: never came within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

