/**
 * Text PostgreSQL can store. Its `text` and `jsonb` refuse the NUL character and lone UTF-16
 * surrogates (a high surrogate not followed by a low one, or a low one alone): such a value fails
 * the write (22P02 / 22021), not the request. Input is refused at the edge; agent output, which
 * nobody can send back, is repaired instead.
 */

/** The replacement for a code unit that cannot be stored (U+FFFD REPLACEMENT CHARACTER). */
export const REPLACEMENT = '\uFFFD';

const isHigh = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

/** Whether `text` holds neither NUL nor a lone surrogate. */
export function isStorableText(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit === 0) return false;
    if (isHigh(unit)) {
      if (!isLow(text.charCodeAt(i + 1))) return false;
      i++;
    } else if (isLow(unit)) return false;
  }
  return true;
}

/** `text` with each NUL and each lone surrogate replaced by U+FFFD; storable text is answered unchanged. */
export function storableText(text: string): string {
  if (isStorableText(text)) return text;
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (isHigh(unit) && isLow(text.charCodeAt(i + 1))) {
      out += text[i]! + text[i + 1]!;
      i++;
    } else if (unit === 0 || isHigh(unit) || isLow(unit)) out += REPLACEMENT;
    else out += text[i]!;
  }
  return out;
}

/** A JSON-like value with every string in it (keys too) made storable. */
export function storableValue<T>(value: T): T {
  if (typeof value === 'string') return storableText(value) as T;
  if (Array.isArray(value)) return value.map((item) => storableValue(item)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [storableText(key), storableValue(item)])) as T;
  }
  return value;
}

/**
 * Joins streamed chunks of text without splitting a surrogate pair: answers the part that can be
 * stored now and the high surrogate (if any) held back for the next chunk.
 */
export function splitTrailingHigh(text: string): { readonly ready: string; readonly held: string } {
  const last = text.charCodeAt(text.length - 1);
  return isHigh(last) ? { ready: text.slice(0, -1), held: text.slice(-1) } : { ready: text, held: '' };
}
