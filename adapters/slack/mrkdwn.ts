/**
 * Markdown as agents write it, made into Slack mrkdwn (contract section 10), and mrkdwn cut to fit a
 * section block. Pure functions.
 *
 * Agent text is untrusted: what comes out never pings (every `<` and `&` of the text is escaped), and
 * the only `<` emitted opens a link the agent wrote as a Markdown link or autolink to an http(s) or
 * mailto URL; the only raw `>` closes such a link or marks a quote at the start of a line.
 *
 * The converter is minimal-touch: text with no Markdown construct comes out as it went in, escaping
 * apart. When a construct is ambiguous (`a*b*c`, `2 * 3 * 4`, `my_var_name`, `__init__`, `src/*.ts`)
 * the text is left as written.
 */

/** The most characters the text of a section block holds. */
export const SECTION_TEXT_LIMIT = 3_000;

/** The longest link `<url|text>` the converter emits; a longer one is written out as plain text. */
export const LINK_LIMIT = 2_000;

/** The smallest `limit` mrkdwnChunks takes: room for a reopened and a closed fence and an entity. */
export const MIN_CHUNK_LIMIT = 16;

const FENCE = '```';

/** Slack's three control characters as its entities (`&amp;`, `&lt;`, `&gt;`), nothing else. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}

// ---------------------------------------------------------------------------------------------
// Markdown to mrkdwn
// ---------------------------------------------------------------------------------------------

/**
 * Markdown as Slack mrkdwn. Converted: fenced code blocks (``` or ~~~, info string dropped, content
 * escaped only; an unclosed fence runs to the end and is closed there), inline code spans (content
 * escaped only), `**b**`/`__b__` → `*b*`, `*i*`/`_i_` → `_i_`, `***bi***` → `*_bi_*`, `~~s~~` → `~s~`,
 * `[text](url)` and `![alt](url)` → `<url|text>` for http(s)/mailto URLs (else `text (url)` as text),
 * autolinks `<https://…>`, ATX headings → `*heading*`, `-`/`*`/`+` bullets → `•`, `>` quotes (nested
 * markers folded into one), thematic breaks → `———`, backslash escapes of ``*_~`[]<>#&|-+!`` (the
 * backslash kept before ``*_~` `` so Slack does not format either); a lone run of three or more
 * backticks (no closing run on its line) is parted by zero-width spaces so it opens no code block. Everything else (ordered lists,
 * tables, indented code, HTML, bare URLs, setext underlines other than a rule) is left as written.
 */
export function mrkdwnFromMarkdown(markdown: string): string {
  const lines = markdown.split('\n');
  const out: string[] = [];
  let fence: { char: string; length: number } | null = null;
  for (const raw of lines) {
    const cr = raw.endsWith('\r') ? '\r' : '';
    const line = cr === '' ? raw : raw.slice(0, -1);
    if (fence !== null) {
      const close = /^[ \t]*(`{3,}|~{3,})[ \t]*$/.exec(line);
      if (close !== null && close[1]![0] === fence.char && close[1]!.length >= fence.length) {
        out.push(FENCE + cr);
        fence = null;
      } else {
        out.push(escapeMrkdwn(raw));
      }
      continue;
    }
    const open = /^[ \t]*(`{3,}|~{3,})(.*)$/.exec(line);
    if (open !== null && !(open[1]![0] === '`' && open[2]!.includes('`'))) {
      fence = { char: open[1]![0]!, length: open[1]!.length };
      out.push(FENCE + cr);
      continue;
    }
    out.push(blockLine(line) + cr);
  }
  let text = out.join('\n');
  if (fence !== null) text += (text.endsWith('\n') ? '' : '\n') + FENCE;
  return text;
}

const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}>(?:[ \t]*>)*( ?)/;
const BULLET = /^([ \t]*)[-*+]([ \t]+)/;

/** One line outside a code block: its block construct (heading, rule, quote, bullet), then its inline text. */
function blockLine(line: string): string {
  const heading = HEADING.exec(line);
  if (heading !== null) {
    const inner = inline((heading[2] ?? '').trim(), { links: true, bold: true });
    if (inner === '') return '';
    // A star inside would end Slack's bold early: then the heading stays plain.
    return inner.includes('*') ? inner : `*${inner}*`;
  }
  if (RULE.test(line)) return '———';
  const quote = QUOTE.exec(line);
  if (quote !== null) return `>${quote[1]}${blockLine(line.slice(quote[0].length))}`;
  const bullet = BULLET.exec(line);
  if (bullet !== null) return `${bullet[1]}•${bullet[2]}${inline(line.slice(bullet[0].length), { links: true, bold: false })}`;
  return inline(line, { links: true, bold: false });
}

interface InlineOptions {
  /** Whether links are read (not inside a link's text). */
  readonly links: boolean;
  /** Whether the text is already bold (a heading): bold markers then drop. */
  readonly bold: boolean;
}

/** A run of `*`, `_` or `~`: literal unless paired with another of the same character and length. */
interface Delim {
  readonly char: string;
  readonly length: number;
  readonly start: number;
  readonly end: number;
  readonly canOpen: boolean;
  readonly canClose: boolean;
  /** Index of its piece in the output list. */
  readonly slot: number;
  dead: boolean;
}

const ESCAPABLE = new Set('*_~`[]<>#&|-+!');
/** Escaped marks Slack itself would format with: the backslash stays so Slack does not. */
const KEEP_BACKSLASH = new Set('*_~`');

const isHigh = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

/** The code point ending just before `i`, or '' at the start. */
function charBefore(s: string, i: number): string {
  if (i <= 0) return '';
  if (i >= 2 && isLow(s.charCodeAt(i - 1)) && isHigh(s.charCodeAt(i - 2))) return s.slice(i - 2, i);
  return s[i - 1]!;
}

/** The code point starting at `i`, or '' at the end. */
function charAt(s: string, i: number): string {
  if (i >= s.length) return '';
  if (isHigh(s.charCodeAt(i)) && i + 1 < s.length && isLow(s.charCodeAt(i + 1))) return s.slice(i, i + 2);
  return s[i]!;
}

const isSpace = (c: string) => c === '' || /^\s$/u.test(c);
const isPunct = (c: string) => /^[\p{P}\p{S}]$/u.test(c);
const isAlnum = (c: string) => /^[\p{L}\p{N}]$/u.test(c);

/**
 * For each `[` (`(`) of `s`, the index of its matching `]` (`)`), else -1; backslash-escaped ones
 * neither open nor close.
 */
function matching(s: string, open: string, close: string): Int32Array {
  const match = new Int32Array(s.length).fill(-1);
  const stack: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\') i++;
    else if (c === open) stack.push(i);
    else if (c === close && stack.length > 0) match[stack.pop()!] = i;
  }
  return match;
}

/** For each index, the first index at or after it whose character is whitespace (s.length when none). */
function nextSpace(s: string): Int32Array {
  const next = new Int32Array(s.length + 1);
  next[s.length] = s.length;
  for (let i = s.length - 1; i >= 0; i--) next[i] = /\s/.test(s[i]!) ? i : next[i + 1]!;
  return next;
}

/** For each index, the first index at or after it holding `char` (s.length when none). */
function nextOf(s: string, char: string): Int32Array {
  const next = new Int32Array(s.length + 1);
  next[s.length] = s.length;
  for (let i = s.length - 1; i >= 0; i--) next[i] = s[i] === char ? i : next[i + 1]!;
  return next;
}

/** The starts of the maximal backtick runs of `s`, by run length, ascending. */
function backtickRuns(s: string): Map<number, number[]> {
  const runs = new Map<number, number[]>();
  for (let i = 0; i < s.length; ) {
    if (s[i] !== '`') {
      i++;
      continue;
    }
    let j = i;
    while (s[j] === '`') j++;
    const list = runs.get(j - i);
    if (list === undefined) runs.set(j - i, [i]);
    else list.push(i);
    i = j;
  }
  return runs;
}

/** The first value of a sorted list greater than `after`, else -1. */
function firstAfter(list: readonly number[] | undefined, after: number): number {
  if (list === undefined) return -1;
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid]! > after) hi = mid;
    else lo = mid + 1;
  }
  return lo < list.length ? list[lo]! : -1;
}

/** One line's inline Markdown (or a link's text) as mrkdwn: linear in its length. */
function inline(src: string, options: InlineOptions): string {
  const n = src.length;
  const pieces: string[] = [];
  const delims: Delim[] = [];
  let text = '';
  const flush = () => {
    if (text !== '') {
      pieces.push(escapeMrkdwn(text));
      text = '';
    }
  };
  let brackets: Int32Array | null = null;
  let parens: Int32Array | null = null;
  let spaces: Int32Array | null = null;
  let closers: Int32Array | null = null;
  let runs: Map<number, number[]> | null = null;

  /** A link `[label](dest)` (or an image with its `!`) starting at `at` with its `[` at `b`: its end, or -1. */
  const tryLink = (at: number, b: number): number => {
    brackets ??= matching(src, '[', ']');
    const e = brackets[b]!;
    if (e < 0 || src[e + 1] !== '(') return -1;
    parens ??= matching(src, '(', ')');
    const q = e + 1;
    const close = parens[q]!;
    if (close < 0) return -1;
    spaces ??= nextSpace(src);
    let destStart = q + 1;
    while (destStart < close && (src[destStart] === ' ' || src[destStart] === '\t')) destStart++;
    let dest: string;
    let after: number;
    if (src[destStart] === '<') {
      closers ??= nextOf(src, '>');
      const gt = closers[destStart + 1]!;
      if (gt > close) return -1;
      dest = src.slice(destStart + 1, gt);
      if (dest.includes('<') || dest.includes('\n')) return -1;
      after = gt + 1;
    } else {
      after = Math.min(spaces[destStart]!, close);
      dest = src.slice(destStart, after);
    }
    // After the destination: nothing, or a title in quotes, then spaces.
    let rest = after;
    while (rest < close && (src[rest] === ' ' || src[rest] === '\t')) rest++;
    if (rest < close) {
      if (rest === after) return -1;
      const quote = src[rest];
      if (quote !== '"' && quote !== "'") return -1;
      let last = close - 1;
      while (src[last] === ' ' || src[last] === '\t') last--;
      if (last <= rest || src[last] !== quote) return -1;
    }
    const label = inline(src.slice(b + 1, e), { links: false, bold: options.bold });
    flush();
    pieces.push(linkOut(dest, label));
    return close + 1;
  };

  let i = 0;
  while (i < n) {
    const c = src[i]!;
    if (c === '\\' && i + 1 < n) {
      const next = src[i + 1]!;
      if (next === '\\') {
        text += '\\\\';
        i += 2;
        continue;
      }
      if (ESCAPABLE.has(next)) {
        text += KEEP_BACKSLASH.has(next) ? `\\${next}` : next;
        i += 2;
        continue;
      }
    }
    if (c === '`') {
      let j = i;
      while (src[j] === '`') j++;
      const length = j - i;
      runs ??= backtickRuns(src);
      const closing = firstAfter(runs.get(length), i);
      if (closing >= j) {
        flush();
        const fence = src.slice(i, j);
        pieces.push(fence + escapeMrkdwn(src.slice(j, closing)) + fence);
        i = closing + length;
      } else {
        // A lone run of three or more would open a Slack code block: a zero-width space parts it.
        text += length >= 3 ? src.slice(i, j).split('').join('\u200b') : src.slice(i, j);
        i = j;
      }
      continue;
    }
    if (c === '<' && options.links) {
      const auto = /<((?:https?:\/\/|mailto:)[^\s<>]+)>/iy;
      auto.lastIndex = i;
      const match = auto.exec(src);
      if (match !== null) {
        flush();
        pieces.push(linkOut(match[1]!, ''));
        i = auto.lastIndex;
        continue;
      }
    }
    if (options.links && (c === '[' || (c === '!' && src[i + 1] === '['))) {
      const end = tryLink(i, c === '!' ? i + 1 : i);
      if (end >= 0) {
        i = end;
        continue;
      }
      text += c;
      i++;
      continue;
    }
    if (c === '*' || c === '_' || c === '~') {
      let j = i;
      while (src[j] === c) j++;
      const length = j - i;
      const before = charBefore(src, i);
      const after = charAt(src, j);
      const left = !isSpace(after) && (!isPunct(after) || isSpace(before) || isPunct(before));
      const right = !isSpace(before) && (!isPunct(before) || isSpace(after) || isPunct(after));
      const usable = c === '~' ? length === 2 : length <= 3;
      // Never inside a word (`a*b*c`, `my_var_name`), nor after a slash (`src/*.ts`).
      const canOpen = usable && left && !isAlnum(before) && before !== '/' && before !== '\\';
      const canClose = usable && right && !isAlnum(after);
      flush();
      if (canOpen || canClose) {
        delims.push({ char: c, length, start: i, end: j, canOpen, canClose, slot: pieces.length, dead: false });
      }
      pieces.push(src.slice(i, j));
      i = j;
      continue;
    }
    text += c;
    i++;
  }
  flush();
  pairDelims(src, delims, pieces, options);
  return pieces.join('');
}

/**
 * Pairs the delimiter runs, each closer with the nearest open run of its character and length; runs
 * left open between the two stay literal (spans never cross). Linear: each run is pushed and popped once.
 */
function pairDelims(src: string, delims: readonly Delim[], pieces: string[], options: InlineOptions): void {
  const stack: Delim[] = [];
  const byKey = new Map<string, Delim[]>();
  for (const d of delims) {
    const key = d.char + d.length;
    if (d.canClose) {
      const list = byKey.get(key);
      while (list !== undefined && list.length > 0 && list[list.length - 1]!.dead) list.pop();
      const opener = list !== undefined && list.length > 0 ? list[list.length - 1]! : null;
      if (opener !== null && !isDunder(src, opener, d)) {
        list!.pop();
        for (let top = stack.pop(); top !== opener && top !== undefined; top = stack.pop()) top.dead = true;
        opener.dead = true;
        const [open, close] = marks(d.char, d.length, options.bold);
        pieces[opener.slot] = open;
        pieces[d.slot] = close;
        continue;
      }
    }
    if (d.canOpen) {
      stack.push(d);
      const list = byKey.get(key);
      if (list === undefined) byKey.set(key, [d]);
      else list.push(d);
    }
  }
}

/** `__name__` (a Python dunder, not bold): left as written. */
function isDunder(src: string, opener: Delim, closer: Delim): boolean {
  if (opener.char !== '_' || opener.length !== 2) return false;
  const word = /[A-Za-z0-9]+/y;
  word.lastIndex = opener.end;
  return word.test(src) && word.lastIndex === closer.start;
}

/** The mrkdwn marks opening and closing a paired run. */
function marks(char: string, length: number, bold: boolean): [string, string] {
  if (char === '~') return ['~', '~'];
  if (length === 1) return ['_', '_'];
  if (length === 2) return bold ? ['', ''] : ['*', '*'];
  return bold ? ['_', '_'] : ['*_', '_*'];
}

const LINKABLE = /^(?:https?:\/\/[^\s/?#]|mailto:[^\s])/i;

/**
 * A link to `dest` with `label` (already mrkdwn, possibly empty): `<url|label>` when dest is an
 * http(s) or mailto URL and the whole fits LINK_LIMIT, else the label and the destination as text.
 */
function linkOut(dest: string, label: string): string {
  const plainDest = escapeMrkdwn(dest);
  const shown = label.trim() === '' ? '' : label;
  const asText = shown === '' ? plainDest : plainDest === '' ? shown : `${shown} (${plainDest})`;
  if (!LINKABLE.test(dest)) return asText;
  const url = encodeUrl(dest);
  const link = shown === '' ? `<${url}>` : `<${url}|${shown.replaceAll('|', '¦')}>`;
  return link.length <= LINK_LIMIT ? link : asText;
}

/**
 * A URL as it may stand inside `<…>`: `&` as `&amp;`; `<`, `>`, `|`, `"`, backticks, whitespace,
 * control and format characters percent-encoded (UTF-8); a lone surrogate as U+FFFD's encoding.
 */
function encodeUrl(url: string): string {
  let out = '';
  for (const ch of url) {
    const unit = ch.charCodeAt(0);
    if (ch.length === 1 && unit >= 0xd800 && unit <= 0xdfff) out += '%EF%BF%BD';
    else if (ch === '&') out += '&amp;';
    else if (ch === '<' || ch === '>' || ch === '|' || ch === '"' || ch === '`' || /^[\s\p{Cc}\p{Cf}]$/u.test(ch)) {
      out += encodeURIComponent(ch).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
    } else out += ch;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Chunks
// ---------------------------------------------------------------------------------------------

/**
 * What a cut must not split: a link `<…>` (no newline inside), a fence ``` (which toggles a code
 * block), an entity `&…;`. Matched left to right, so a fence inside a link is no fence.
 */
const ATOM = /<[^<>\n]*>|```|&#?[A-Za-z0-9]{1,8};/g;

/** An entity `&…;`, as ATOM matches one (no `<`, `>`, backtick or newline in it: it never straddles another atom). */
const ENTITY = /&#?[A-Za-z0-9]{1,8};/g;

/**
 * `mrkdwn` in pieces of at most `limit` UTF-16 code units (Slack counts characters; a code unit is
 * never fewer). Each piece is cut at the last line break (else space) of its second half when there
 * is one, never inside an `&…;` entity, a surrogate pair or a `<url|text>` link (a link longer than a
 * piece can hold is the one exception: it is cut, though still outside an entity, a surrogate pair
 * or a ``` of its text, with an even number of those ``` in each piece when there is a way). A cut inside a ``` code block closes it with ```
 * at the end of the piece and reopens it with ``` at the start of the next, those fences counted
 * within `limit`. Joined, minus the added fences, the pieces give `mrkdwn` back; an empty text has
 * no piece.
 */
export function mrkdwnChunks(mrkdwn: string, limit: number = SECTION_TEXT_LIMIT): string[] {
  if (!Number.isInteger(limit) || limit < MIN_CHUNK_LIMIT) throw new RangeError(`a piece holds at least ${MIN_CHUNK_LIMIT} characters`);
  const s = mrkdwn;
  const n = s.length;
  // For a cut position strictly inside an atom, the atom's start; else -1.
  const inside = new Int32Array(n + 1).fill(-1);
  // Whether the text before a position leaves a code block open.
  const code = new Uint8Array(n + 1);
  const fences: number[] = [];
  // The ``` of a link's text: no fence while the link is whole, but read as one in a piece holding
  // part of a link cut in two. Whether a position is strictly inside one, and how many end at or before it.
  const linkFence = new Uint8Array(n + 1);
  const linkFences = new Int32Array(n + 1);
  let open = 0;
  let from = 0;
  for (const match of s.matchAll(ATOM)) {
    const start = match.index;
    const end = start + match[0].length;
    code.fill(open, from, start + 1);
    for (let k = start + 1; k < end; k++) {
      inside[k] = start;
      code[k] = open;
    }
    if (match[0] === FENCE) {
      fences.push(start);
      open ^= 1;
    } else if (match[0][0] === '<') {
      for (const inner of match[0].matchAll(/```/g)) {
        const at = start + inner.index;
        linkFence.fill(1, at + 1, at + FENCE.length);
        linkFences[at + FENCE.length]! += 1;
      }
    }
    from = end;
  }
  code.fill(open, from, n + 1);
  for (let k = 1; k <= n; k++) linkFences[k]! += linkFences[k - 1]!;
  // For a cut position strictly inside an entity, the entity's start, else -1; entities inside a link
  // too (the atoms above see the link only), for when a link too long for a piece has to be cut.
  const entity = new Int32Array(n + 1).fill(-1);
  for (const match of s.matchAll(ENTITY)) entity.fill(match.index, match.index + 1, match.index + match[0].length);

  const safe = (c: number) => inside[c] === -1 && !(isHigh(s.charCodeAt(c - 1)) && isLow(s.charCodeAt(c)));

  /** Where to end a piece starting at `pos` holding at most `room` characters of the text. */
  const cutFor = (pos: number, room: number): number => {
    const end = pos + room;
    const half = pos + Math.floor(room / 2);
    for (let k = end - 1; k >= half; k--) if (s[k] === '\n') return k + 1;
    for (let k = end - 1; k >= half; k--) {
      if (s[k] !== ' ') continue;
      if (safe(k + 1)) return k + 1;
      const start = inside[k + 1]!;
      if (start >= 0) k = start;
    }
    let c = end;
    if (inside[c]! > pos) c = inside[c]!;
    else if (inside[c]! >= 0) {
      // c is inside a link that starts at pos (or before: a link cut already) and is too long for a
      // piece: it is cut, but not inside an entity, a surrogate pair or a ``` of its text, and with
      // an even number of those ``` in the piece (else the piece would leave a code block open).
      for (let k = c; k > pos; k--) {
        if (entity[k]! > pos || linkFence[k] === 1 || (isHigh(s.charCodeAt(k - 1)) && isLow(s.charCodeAt(k)))) continue;
        if ((linkFences[k]! - linkFences[pos]!) % 2 === 0) return k;
      }
      // None (an odd number of ``` in the link): at least not inside an entity.
      if (entity[c]! > pos) c = entity[c]!;
    }
    if (isHigh(s.charCodeAt(c - 1)) && isLow(s.charCodeAt(c))) c -= 1;
    return c;
  };

  const pieces: string[] = [];
  let pos = 0;
  while (pos < n) {
    const reopen = code[pos] === 1 ? FENCE : '';
    const room = limit - reopen.length;
    if (n - pos <= room) {
      pieces.push(reopen + s.slice(pos));
      break;
    }
    let cut = cutFor(pos, room);
    let close = '';
    if (code[cut] === 1) {
      cut = cutFor(pos, room - FENCE.length);
      if (code[cut] === 1) {
        close = FENCE;
        // A block opened in this piece with nothing yet in it moves whole to the next piece.
        const last = fences[lastBefore(fences, cut)];
        if (last !== undefined && last > pos && s.slice(last + FENCE.length, cut).trim() === '') {
          cut = last;
          close = '';
        }
      }
    }
    pieces.push(reopen + s.slice(pos, cut) + close);
    pos = cut;
  }
  return pieces;
}

/** The index of the last value of a sorted list below `limit`, else -1. */
function lastBefore(list: readonly number[], limit: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid]! < limit) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}
