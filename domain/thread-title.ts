/**
 * Thread titles (contract section 4, "Managing threads"): what a new thread is called, taken from its
 * first directive, and what a rename may set.
 */

/** The longest title a new thread gets from its first directive. */
export const DERIVED_TITLE_MAX = 80;

/** The longest title a rename may set. */
export const TITLE_MAX = 200;

/** C0 and C1 control characters, DEL included: a title is one line of plain text. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/gu;

/** Whether `title` (already trimmed) may be a thread's title: 1 to 200 characters, none of them a control character. */
export function isValidTitle(title: string): boolean {
  return title.length >= 1 && title.length <= TITLE_MAX && !CONTROL.test(title);
}

/** One line's Markdown marks, each replaced by what it shows. */
function plainLine(line: string): string {
  return line
    .replace(/^\s*(?:>\s*)+/u, '') // blockquotes, nested too
    .replace(/^\s*#{1,6}(?:\s+|$)/u, '') // an ATX heading
    .replace(/^\s*(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?/u, '') // a list item (a task item too)
    .replace(/!?\[([^\]]*)\]\([^)]*\)/gu, '$1') // a link or an image: its text
    .replace(/`+/gu, '') // inline code: its text
    .replace(/(\*{1,3})(?=\S)(.*?\S)\1/gu, '$2') // emphasis: its text
    .replace(/(?<![\p{L}\p{N}_])(_{1,3})(?=\S)(.*?\S)\1(?![\p{L}\p{N}_])/gu, '$2') // and with underscores, never inside a word (snake_case)
    .replace(/~~(?=\S)(.*?\S)~~/gu, '$1') // strike-through: its text
    .replace(/\s+#+\s*$/u, '') // a heading's closing hashes
    .replace(/\s+/gu, ' ')
    .trim();
}

/** A code fence's opening or closing line, or a thematic break: lines that show no text of their own. */
const NO_TEXT = /^\s*(?:`{3,}|~{3,}|(?:[-*_]\s*){3,}$)/u;

/** The longest prefix of `text` within `max` UTF-16 units, never cut inside a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\ud800-\udbff]/u.test(text[max - 1]!) ? max - 1 : max;
  return text.slice(0, end);
}

/**
 * A new thread's title: the first line of its first directive that shows any text, with its Markdown
 * marks removed (headings, emphasis, inline code, links, list markers, blockquotes; code fences and
 * thematic breaks are skipped), at most 80 characters (UTF-16 units, never cut inside a surrogate pair),
 * without control characters. Empty
 * when the directive shows no text at all.
 */
export function titleFromDirective(text: string): string {
  for (const raw of text.split(/\r\n|\r|\n/u)) {
    if (NO_TEXT.test(raw)) continue;
    const line = plainLine(raw.replace(CONTROLS, ' '));
    if (line !== '') return cut(line, DERIVED_TITLE_MAX).trim();
  }
  return '';
}
