/**
 * Lets the host exit while only this timer is pending, where the host can tell (Node and Bun
 * timers have `unref`); elsewhere (a browser, Deno's numeric ids) it does nothing.
 */
export function unrefTimer(timer: unknown): void {
  if (typeof timer === 'object' && timer !== null && 'unref' in timer && typeof timer.unref === 'function') timer.unref();
}
