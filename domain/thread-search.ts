/**
 * The thread list's search (contract section 4, "Managing threads"): `?q=<words>` keeps the threads whose
 * title or ledger text matches every word. A word is a run of letters and digits, compared in lower case,
 * and it matches a word of the text that it begins ("deplo" matches "Deploying"): a prefix, so a search box
 * finds as the person types. Everything else in `q` (quotes, `&|!:*`, punctuation) only separates words,
 * so no character of it reaches a query language as an operator.
 */

/** The longest `q` the thread list takes, in UTF-16 units. */
export const SEARCH_TEXT_MAX = 200;

/** The most words one search may hold: each is an index probe on the SQL storages. */
export const SEARCH_WORDS_MAX = 10;

const WORD = /[\p{L}\p{N}]+/gu;

/** The words of a search or of a text, in lower case, each once, in order of first appearance. */
export function searchWords(text: string): string[] {
  return [...new Set(text.toLowerCase().match(WORD) ?? [])];
}

/**
 * Whether every word (from {@link searchWords}) begins a word of one of `texts` (a thread's title and its
 * ledger's messages; a word may be found in one text and the next in another). No words: true.
 */
export function matchesEveryWord(words: readonly string[], texts: readonly string[]): boolean {
  if (words.length === 0) return true;
  const found = texts.flatMap(searchWords);
  return words.every((word) => found.some((candidate) => candidate.startsWith(word)));
}
