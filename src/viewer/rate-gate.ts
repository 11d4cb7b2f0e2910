/**
 * A token bucket: at most `burst` events at once and `perSecond` on average after that. The viewer
 * uses it to bound how fast an app's log messages reach the page, so a chatty or hostile app cannot
 * flood it. Pure (the clock is an argument): used by the viewer page and tested in Node.
 */
export class RateGate {
  #tokens: number;
  #last: number | null = null;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
  ) {
    this.#tokens = burst;
  }

  /** Whether an event at `nowMs` may pass; a refused event spends nothing. */
  admit(nowMs: number): boolean {
    if (this.#last !== null && nowMs > this.#last) {
      this.#tokens = Math.min(this.burst, this.#tokens + ((nowMs - this.#last) * this.perSecond) / 1000);
    }
    this.#last = this.#last === null ? nowMs : Math.max(this.#last, nowMs);
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}
