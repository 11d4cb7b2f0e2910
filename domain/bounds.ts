/**
 * Bounds on what agents send that is stored and broadcast: an agent can send megabytes in one tool
 * call (a file's whole text in a diff, a command's output) and repeat it in every update. Each
 * string is cut to {@link MAX_STORED_STRING} characters, with a marker saying how much was cut;
 * a value still larger than {@link MAX_STORED_VALUE} characters of JSON keeps only its small fields.
 */

/** The longest string of agent output stored as it came: 64 Ki characters. */
export const MAX_STORED_STRING = 64 * 1024;
/** The largest agent update stored whole, as JSON characters: 512 Ki. */
export const MAX_STORED_VALUE = 512 * 1024;
/** How many directives may wait in one thread's queue (contract section 7: 429 `queue_full` past it). */
export const QUEUE_LIMIT = 20;

/** The longest reply kept as one ledger message: 1 Mi characters. */
export const MAX_REPLY = 1024 * 1024;

/** `text` cut to `max` characters (never inside a surrogate pair), with a marker naming how much was cut. */
export function boundedText(text: string, max: number = MAX_STORED_STRING): string {
  if (text.length <= max) return text;
  let end = max;
  const unit = text.charCodeAt(end - 1);
  if (unit >= 0xd800 && unit <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}… [${text.length - end} characters cut]`;
}

/** A JSON-like value with every string in it cut to `maxString` characters. */
export function boundedStrings<T>(value: T, maxString: number = MAX_STORED_STRING): T {
  if (typeof value === 'string') return boundedText(value, maxString) as T;
  if (Array.isArray(value)) return value.map((item) => boundedStrings(item, maxString)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, boundedStrings(item, maxString)])) as T;
  }
  return value;
}

/**
 * A record with its strings bounded; when its JSON is still over `maxTotal`, the fields named in
 * `bulky` are dropped (largest first) until it fits, and `truncated: true` says so.
 */
export function boundedRecord<T extends object>(
  value: T,
  bulky: readonly (keyof T & string)[],
  maxTotal: number = MAX_STORED_VALUE,
  maxString: number = MAX_STORED_STRING,
): T & { readonly truncated?: true } {
  const bounded = boundedStrings({ ...value } as Record<string, unknown>, maxString);
  const size = (v: unknown) => JSON.stringify(v)?.length ?? 0;
  if (size(bounded) <= maxTotal) return bounded as T;
  const drop = bulky.filter((key) => key in bounded).sort((a, b) => size(bounded[b]) - size(bounded[a]));
  for (const key of drop) {
    delete bounded[key];
    if (size(bounded) <= maxTotal) break;
  }
  return { ...bounded, truncated: true } as T & { truncated: true };
}
