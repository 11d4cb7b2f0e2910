/*
 * The viewer's log panel: an app's log messages (MCP `notifications/message`, which ext-apps 1.x and
 * 2.x apps both send through `sendLog`), shown as text at a bounded rate, with the newest kept and a
 * count of what the rate dropped. Browser code.
 */
import { RateGate } from './rate-gate.ts';

/** At most this many entries stay in the panel; older ones are removed. */
const KEPT = 200;
/** Longer messages are cut: the panel is for reading, not for storing an app's data. */
const MAX_TEXT = 2_000;

export interface LogEntry {
  readonly level: string;
  readonly logger?: string;
  readonly data: unknown;
}

/** A message's data as one line of text. */
function textOf(data: unknown): string {
  let text: string;
  if (typeof data === 'string') text = data;
  else {
    try {
      text = JSON.stringify(data) ?? String(data);
    } catch {
      text = String(data);
    }
  }
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text;
}

export class LogPanel {
  readonly #gate = new RateGate(10, 20);
  #dropped = 0;

  constructor(
    private readonly panel: HTMLDetailsElement,
    private readonly list: HTMLOListElement,
    private readonly summary: HTMLElement,
  ) {}

  /** Adds an entry, unless the rate is spent; the text is never parsed as HTML. */
  add(entry: LogEntry): void {
    if (!this.#gate.admit(performance.now())) {
      this.#dropped += 1;
      this.#count();
      return;
    }
    const item = document.createElement('li');
    item.dataset.level = String(entry.level);
    const level = document.createElement('span');
    level.className = 'level';
    level.textContent = String(entry.level);
    item.append(level, ` ${typeof entry.logger === 'string' && entry.logger !== '' ? `[${entry.logger}] ` : ''}${textOf(entry.data)}`);
    this.list.append(item);
    while (this.list.childElementCount > KEPT) this.list.firstElementChild?.remove();
    this.panel.hidden = false;
    this.#count();
  }

  /** Empties the panel (a reload starts the app anew). */
  clear(): void {
    this.list.replaceChildren();
    this.#dropped = 0;
    this.panel.hidden = true;
    this.#count();
  }

  #count(): void {
    const shown = this.list.childElementCount;
    this.summary.textContent = `App log (${shown}${this.#dropped > 0 ? `, ${this.#dropped} dropped by the rate limit` : ''})`;
  }
}
