import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { escapeMrkdwn, LINK_LIMIT, mrkdwnChunks, mrkdwnFromMarkdown, SECTION_TEXT_LIMIT } from '../../adapters/slack/mrkdwn.ts';

const RUNS = { numRuns: 300 };

/** Fragments that make Markdown, mentions, links and entities likely, among any characters. */
const fragment = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 4 }) },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      '<', '>', '!', '@', '#', '&', '|', '[', ']', '(', ')', '*', '_', '~', '`', '\\', '\n', ' ', '\t', '-', '+', '.', ':', '/',
      '**', '__', '~~', '```', '~~~', '```ts\n', '\n```\n', '# ', '## ', '- ', '* ', '> ', '1. ', '---\n',
      'http://a.example', 'https://b.example/p?q=1&r=2', 'mailto:x@y.example', 'javascript:alert(1)', 'ftp://f.example',
      '<!channel>', '<!here>', '<!everyone>', '<@U0ALICE>', '<#C0GENERAL>', '<!subteam^S1|team>', '<!date^1|x>',
      '&amp;', '&lt;', '&#60;', '](', '](https://c.example', '](<https://d.example a>)', '<https://e.example|https://good.example>',
      '\u0000', '\ud800', '\udc00', '😀', '\u202e', '\u200b', 'a', 'word', '2 * 3', 'snake_case_name',
    ),
  },
);
const markdownish = fc.array(fragment, { maxLength: 40 }).map((parts) => parts.join(''));

/** The links `<url>` / `<url|text>` of mrkdwn (as the converter writes them: no `<`, `>` or newline inside). */
const LINK = /<([^<>|\n]*)(?:\|([^<>\n]*))?>/g;

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether `input` holds the URL a link of the output points to (its percent-encodings standing for any character). */
function inputHolds(input: string, url: string): boolean {
  const pattern = url
    .replaceAll('&amp;', '&')
    .split(/%[0-9A-F]{2}/)
    .map(escapeRe)
    .join('(?:%[0-9A-Fa-f]{2}|[\\s\\S]{0,2})');
  return new RegExp(pattern).test(input);
}

/** Checks what the converter promises whatever its input; answers the output. */
function assertSafe(input: string): string {
  const out = mrkdwnFromMarkdown(input);
  for (const ping of ['<!', '<@', '<#']) assert.ok(!out.includes(ping), `${JSON.stringify(out)} holds ${ping}`);
  const written = (input.match(/\]\(\s*<?\s*(?:https?:\/\/|mailto:)|<(?:https?:\/\/|mailto:)/gi) ?? []).length;
  let links = 0;
  const held = new Set<string>();
  for (const match of out.matchAll(LINK)) {
    links++;
    const url = match[1]!;
    assert.match(url, /^(?:https?:\/\/|mailto:)/i, `a link to ${url}`);
    assert.doesNotMatch(url, /[\s|<>]/u, `no space, bar or angle bracket in ${url}`);
    assert.ok(match[0].length <= LINK_LIMIT);
    if (!held.has(url)) assert.ok(inputHolds(input, url), `${url} was written in ${JSON.stringify(input.slice(0, 500))}`);
    held.add(url);
    assert.ok(!(match[2] ?? '').includes('|'));
  }
  assert.ok(links <= written, `${links} links out of ${written} written: ${JSON.stringify(out)}`);
  const bare = out.replace(LINK, '');
  assert.ok(!bare.includes('<'), `every < opens a link: ${JSON.stringify(out)}`);
  assert.ok(!bare.replace(/(^|\n)>/g, '$1').includes('>'), `a raw > only closes a link or starts a quote line: ${JSON.stringify(out)}`);
  assert.ok(!out.replace(/&(?:amp|lt|gt);/g, '').includes('&'), `& only in the three entities: ${JSON.stringify(out)}`);
  return out;
}

/** The code-block toggles of mrkdwn as Slack (and the chunker) count them: each ``` not inside a link. */
function fenceCount(mrkdwn: string): number {
  let count = 0;
  for (const match of mrkdwn.matchAll(/<[^<>\n]*>|```|&#?[A-Za-z0-9]{1,8};/g)) if (match[0] === '```') count++;
  return count;
}

/**
 * The parts of `input` the pieces carry, once a reopening ``` at a piece's start and a closing ``` at
 * its end (where the chunker adds them) are taken off; null when no such reading gives `input` back.
 */
function originalParts(pieces: readonly string[], input: string): string[] | null {
  const failed = new Set<string>();
  const go = (i: number, offset: number): string[] | null => {
    if (i === pieces.length) return offset === input.length ? [] : null;
    const key = `${i}:${offset}`;
    if (failed.has(key)) return null;
    const piece = pieces[i]!;
    for (const open of piece.startsWith('```') ? [3, 0] : [0]) {
      for (const close of piece.length - open >= 3 && piece.endsWith('```') ? [3, 0] : [0]) {
        const part = piece.slice(open, piece.length - close);
        if (part === '' || !input.startsWith(part, offset)) continue;
        const rest = go(i + 1, offset + part.length);
        if (rest !== null) return [part, ...rest];
      }
    }
    failed.add(key);
    return null;
  };
  return go(0, 0);
}

/** Checks what mrkdwnChunks promises for `text` cut at `limit`; answers the pieces. */
function assertChunks(text: string, limit: number): string[] {
  const pieces = mrkdwnChunks(text, limit);
  if (text === '') assert.deepEqual(pieces, []);
  for (const piece of pieces) assert.ok(piece.length <= limit && piece.length > 0, `${piece.length} > ${limit}`);
  const parts = originalParts(pieces, text);
  assert.ok(parts !== null, `the pieces give the text back: ${JSON.stringify({ text, pieces })}`);
  assert.equal(parts.join(''), text);
  // For each position, whether a cut there would split an entity, or a link a piece could hold whole.
  const splits = new Uint8Array(text.length + 1);
  for (const m of text.matchAll(/&#?[A-Za-z0-9]{1,8};/g)) splits.fill(1, m.index + 1, m.index + m[0].length);
  for (const m of text.matchAll(/<[^<>\n]*>/g)) if (m[0].length <= limit - 6) splits.fill(2, m.index + 1, m.index + m[0].length);
  let cut = 0;
  for (const part of parts.slice(0, -1)) {
    cut += part.length;
    const high = text.charCodeAt(cut - 1);
    const low = text.charCodeAt(cut);
    assert.ok(!(high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff), `cut ${cut} splits a surrogate pair`);
    assert.equal(splits[cut], 0, `cut ${cut} inside an entity (1) or a link (2)`);
  }
  // Each piece opens no code block it does not close (the last one aside when the text leaves one open).
  const odd = fenceCount(text) % 2 === 1;
  pieces.forEach((piece, i) => {
    if (i < pieces.length - 1 || !odd) assert.equal(fenceCount(piece) % 2, 0, `piece ${i} leaves a code block open: ${JSON.stringify(piece)}`);
  });
  return pieces;
}

describe('escapeMrkdwn', () => {
  it("escapes Slack's three control characters and nothing else", () => {
    assert.equal(escapeMrkdwn('a & b < c > d *e* _f_ "g" \'h\' &amp;'), 'a &amp; b &lt; c &gt; d *e* _f_ "g" \'h\' &amp;amp;');
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const out = escapeMrkdwn(s);
        assert.equal(out.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&'), s);
        assert.ok(!/[<>]/.test(out));
      }),
      RUNS,
    );
  });
});

describe('mrkdwnFromMarkdown', () => {
  it('converts a typical agent answer', () => {
    const markdown = [
      '## Summary',
      '',
      'I fixed the **login** bug in `auth.ts`:',
      '',
      '- Escaped the `<div>` tag',
      '- Added *tests* for ~~old~~ new paths',
      '  - nested item, see [the docs](https://example.com/docs?a=1&b=2)',
      '',
      '```ts',
      "const html = '<div>**not bold**</div>';",
      'if (a && b) {}',
      '```',
      '',
      '> Note: run `npm test` first.',
      '',
      '---',
      '1. keep `my_var_name` and 2 * 3 * 4',
      '2. __init__ and a*b*c stay',
    ].join('\n');
    const expected = [
      '*Summary*',
      '',
      'I fixed the *login* bug in `auth.ts`:',
      '',
      '• Escaped the `&lt;div&gt;` tag',
      '• Added _tests_ for ~old~ new paths',
      '  • nested item, see <https://example.com/docs?a=1&amp;b=2|the docs>',
      '',
      '```',
      "const html = '&lt;div&gt;**not bold**&lt;/div&gt;';",
      'if (a &amp;&amp; b) {}',
      '```',
      '',
      '> Note: run `npm test` first.',
      '',
      '———',
      '1. keep `my_var_name` and 2 * 3 * 4',
      '2. __init__ and a*b*c stay',
    ].join('\n');
    assert.equal(mrkdwnFromMarkdown(markdown), expected);
  });

  it('converts each construct, and leaves what is ambiguous as written', () => {
    const cases: [string, string][] = [
      ['**bold** and __strong text__', '*bold* and *strong text*'],
      ['*italic* and _italic_', '_italic_ and _italic_'],
      ['***both***', '*_both_*'],
      ['~~struck~~ and ~single~', '~struck~ and ~single~'],
      ['**bold with *italic* inside**', '*bold with _italic_ inside*'],
      ['**[docs](https://a.example)**', '*<https://a.example|docs>*'],
      ['a*b*c, 2 * 3 * 4, 2*3*4, x**2', 'a*b*c, 2 * 3 * 4, 2*3*4, x**2'],
      ['my_var_name, _private, __init__.py, __dunder__', 'my_var_name, _private, __init__.py, __dunder__'],
      ['src/*.ts and lib/*.js, *.md', 'src/*.ts and lib/*.js, *.md'],
      ['`code with **stars** and <tags> & amps`', '`code with **stars** and &lt;tags&gt; &amp; amps`'],
      ['``code with ` inside``', '``code with ` inside``'],
      ['an unclosed `tick', 'an unclosed `tick'],
      ['a lone ``` run', 'a lone `\u200b`\u200b` run'],
      ['# Title', '*Title*'],
      ['### Title with **bold** ###', '*Title with bold*'],
      ['#hashtag and #123', '#hashtag and #123'],
      ['####### seven', '####### seven'],
      ['- a\n* b\n+ c\n    - deep', '• a\n• b\n• c\n    • deep'],
      ['-1 and +2 and *emph*', '-1 and +2 and _emph_'],
      ['> quoted **text**', '> quoted *text*'],
      ['>> nested', '> nested'],
      ['> # quoted heading', '> *quoted heading*'],
      ['---\n***\n___\n- - -', '———\n———\n———\n———'],
      ['[text](https://example.com/a_b*c)', '<https://example.com/a_b*c|text>'],
      ['[mail me](mailto:someone@example.com)', '<mailto:someone@example.com|mail me>'],
      ['[wiki](https://en.wikipedia.org/wiki/Foo_(bar) "title")', '<https://en.wikipedia.org/wiki/Foo_(bar)|wiki>'],
      ['[spaced](<https://a.example/a b>)', '<https://a.example/a%20b|spaced>'],
      ['![diagram](https://a.example/d.png)', '<https://a.example/d.png|diagram>'],
      ['[](https://a.example)', '<https://a.example>'],
      ['[a|b](https://a.example)', '<https://a.example|a¦b>'],
      ['[click](javascript:alert(1))', 'click (javascript:alert(1))'],
      ['[file](./README.md) and [x]()', 'file (./README.md) and x'],
      ['[x](https://a.example|evil)', '<https://a.example%7Cevil|x>'],
      ['<https://evil.example|https://good.example>', '<https://evil.example%7Chttps://good.example>'],
      ['<https://a.example/?q=1&r=2>', '<https://a.example/?q=1&amp;r=2>'],
      ['<someone@example.com> <div> <ftp://x>', '&lt;someone@example.com&gt; &lt;div&gt; &lt;ftp://x&gt;'],
      ['[not a link] [x] (y) [a]b', '[not a link] [x] (y) [a]b'],
      ['\\*not italic\\* \\[x\\](y) \\# \\<b\\> \\\\', '\\*not italic\\* [x](y) # &lt;b&gt; \\\\'],
      ['A & B <!channel> <@U0ALICE> <#C1> <!subteam^S1>', 'A &amp; B &lt;!channel&gt; &lt;@U0ALICE&gt; &lt;#C1&gt; &lt;!subteam^S1&gt;'],
      ['| a | b |\n|---|---|\n| 1 | 2 |', '| a | b |\n|---|---|\n| 1 | 2 |'],
      ['line\r\n# crlf\r\n', 'line\r\n*crlf*\r\n'],
    ];
    for (const [markdown, expected] of cases) assert.equal(mrkdwnFromMarkdown(markdown), expected, JSON.stringify(markdown));
  });

  it('keeps fenced code blocks as ``` fences, content escaped only, an unclosed one closed at the end', () => {
    assert.equal(mrkdwnFromMarkdown('~~~python\n# not a heading\n- not a bullet\n~~~'), '```\n# not a heading\n- not a bullet\n```');
    assert.equal(mrkdwnFromMarkdown('````md\n```\ninside\n```\n````'), '```\n```\ninside\n```\n```');
    assert.equal(mrkdwnFromMarkdown('before\n```\n<b> & *x*'), 'before\n```\n&lt;b&gt; &amp; *x*\n```');
    assert.equal(mrkdwnFromMarkdown('```\nend\n'), '```\nend\n```');
    assert.equal(mrkdwnFromMarkdown('  ```js\n  indented();\n  ```'), '```\n  indented();\n```');
  });

  it('answers text with no Markdown construct exactly as it came', () => {
    const plain = fc.string({
      unit: fc.oneof(
        fc.constantFrom(' ', '  ', '\n', '\n\n', '\t', '\r\n', '    ', '\\', '.', '1', '2.', '(', ')', '"', "'", ':', '/', '%', '=', '@', '$', '😀', 'é'),
        fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
      ),
      maxLength: 60,
    }).filter((s) => !/[*_~`[\]<>#&|\-+!]/.test(s) && !/(^|\n)[ \t]*\d+\./.test(s));
    fc.assert(fc.property(plain, (s) => assert.equal(mrkdwnFromMarkdown(s), s)), { numRuns: 500 });
  });

  it('never pings, links only what was written as a link to http(s) or mailto, uses & only in entities', () => {
    fc.assert(fc.property(markdownish, (s) => void assertSafe(s)), { numRuns: 1_000 });
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (s) => void assertSafe(s)), RUNS);
  });

  it('answers the content of a fenced code block byte for byte, escaped only', () => {
    const codeLine = fc
      .string({ unit: fc.oneof(fc.constantFrom('*', '_', '~', '`', '<', '>', '&', '#', '-', '[', ']', '(', ')', ' ', '!', '|'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })), maxLength: 30 })
      .filter((line) => !line.includes('\n') && !line.includes('\r') && !/^[ \t]*(`{3,}|~{3,})/.test(line));
    const info = fc.string({ maxLength: 8 }).filter((s) => !/[`\n\r]/.test(s) && !s.startsWith('~'));
    fc.assert(
      fc.property(fc.array(codeLine, { maxLength: 8 }), info, fc.constantFrom('```', '~~~', '````'), markdownish, (lines, lang, fence, before) => {
        const content = lines.join('\n');
        const prefix = before.includes('```') || before.includes('~~~') ? '' : `${before}\n`;
        const out = mrkdwnFromMarkdown(`${prefix}${fence}${lang}\n${content}\n${fence}\nafter`);
        assert.ok(out.endsWith(`\`\`\`\n${escapeMrkdwn(content)}\n\`\`\`\nafter`), JSON.stringify(out));
      }),
      RUNS,
    );
  });

  it('takes hostile text apart: mentions, scripts, bars, NUL, lone surrogates, long runs', () => {
    const hostile = [
      '<!channel> please',
      '<@U0ALICE> approve',
      '[click](javascript:alert(1))',
      '[x](https://a.example|evil)',
      '<https://evil.example|https://good.example>',
      '[<!here>](https://a.example/<!everyone>)',
      '[x](https://a.example/\u0000\u202e)',
      'nul \u0000 here',
      'lone \ud800 surrogate \udfff',
      '*'.repeat(40_000),
      '_'.repeat(40_000),
      '[' .repeat(20_000) + ']('.repeat(10_000),
    ];
    for (const text of hostile) assertSafe(text);
    assert.equal(mrkdwnFromMarkdown('[<!here>](https://a.example/<!everyone>)'), '<https://a.example/%3C!everyone%3E|&lt;!here&gt;>');
    assert.equal(mrkdwnFromMarkdown('[x](https://a.example/\u0000\u202e)'), '<https://a.example/%00%E2%80%AE|x>');
    assert.equal(mrkdwnFromMarkdown('nul \u0000 lone \ud800'), 'nul \u0000 lone \ud800');
    assert.equal(mrkdwnFromMarkdown('*'.repeat(40_000)), '———', 'a thematic break');
    assert.equal(mrkdwnFromMarkdown(`a ${'*'.repeat(40_000)}`), `a ${'*'.repeat(40_000)}`);
  });

  it('takes 200 KB inputs of many shapes in linear time (each once)', () => {
    const shapes = [
      '[a]('.repeat(50_000),
      '[a]('.repeat(25_000) + ')'.repeat(25_000),
      '[a](<x) '.repeat(25_000),
      '_a'.repeat(100_000),
      '*a '.repeat(70_000),
      '**a _b '.repeat(30_000),
      '`'.repeat(1) + ' `` '.repeat(50_000),
      '<https://a.example/'.repeat(10_000),
      '<'.repeat(200_000),
      '\\'.repeat(200_000),
      '![x](https://a.example/ "t" x)'.repeat(7_000),
      ('word '.repeat(30) + '**bold** [l](https://a.example) `c`\n').repeat(1_000),
      '- a\n> b\n# c\n```\nd\n'.repeat(10_000),
    ];
    for (const shape of shapes) {
      const out = assertSafe(shape);
      assertChunks(out, SECTION_TEXT_LIMIT);
    }
  });
});

describe('mrkdwnChunks', () => {
  it('answers a short text whole, and nothing for an empty one', () => {
    assert.deepEqual(mrkdwnChunks('hello'), ['hello']);
    assert.deepEqual(mrkdwnChunks(''), []);
    assert.throws(() => mrkdwnChunks('x', 10), RangeError);
  });

  it('cuts at the last line break of the second half, else a space, never in an entity or a link', () => {
    assert.deepEqual(mrkdwnChunks('aaaaaaaaaa\nbbbbbbbbbb\ncccc', 24), ['aaaaaaaaaa\nbbbbbbbbbb\n', 'cccc']);
    assert.deepEqual(mrkdwnChunks('aaaaaaaaaa bbbbbbbbbb cccc', 24), ['aaaaaaaaaa bbbbbbbbbb ', 'cccc']);
    // A break in the first half is no cut: the piece is filled instead.
    assert.deepEqual(mrkdwnChunks('a\nbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', 20), ['a\nbbbbbbbbbbbbbbbbbb', 'bbbbbbbbbbbb']);
    assert.deepEqual(mrkdwnChunks('abcdefghijklmnop&amp;qrstuvwxyz', 20), ['abcdefghijklmnop', '&amp;qrstuvwxyz']);
    // The spaces inside the link are no cut: the piece ends before the link instead.
    assert.deepEqual(mrkdwnChunks(`${'a'.repeat(15)} <https://a.example|a b c> ${'b'.repeat(19)}`, 40), [
      `${'a'.repeat(15)} `,
      '<https://a.example|a b c> ',
      'b'.repeat(19),
    ]);
    // Nor between the two halves of a surrogate pair.
    assert.deepEqual(mrkdwnChunks(`${'a'.repeat(15)}😀😀`, 16), [`${'a'.repeat(15)}`, '😀😀']);
  });

  it('closes a code block cut in two and reopens it in the next piece', () => {
    const text = `intro\n\`\`\`\n${'const x = 1;\n'.repeat(6)}\`\`\`\nafter`;
    const pieces = assertChunks(text, 40);
    assert.ok(pieces.length > 2);
    for (const piece of pieces) assert.equal(fenceCount(piece) % 2, 0, JSON.stringify(piece));
    assert.ok(pieces.slice(1, -1).every((piece) => piece.startsWith('```')), JSON.stringify(pieces));
  });

  it('cuts a link too long for a piece outside the entities and surrogate pairs of its text', () => {
    // A counterexample once found (seed -1134141588): the link `<https://d.example%20a|\u0000&amp;&lt;>`
    // was cut inside its `&lt;`.
    const converted = mrkdwnFromMarkdown('[\u0000&<](<https://d.example a>)');
    assert.equal(converted, '<https://d.example%20a|\u0000&amp;&lt;>');
    assert.deepEqual(assertChunks(converted, 16), ['<https://d.examp', 'le%20a|\u0000&amp;', '&lt;>']);
    assertChunks('[\u0000&<](<https://d.example a>)', 16);
    assertChunks(`x <https://a.example/${'&amp;'.repeat(8)}> y`, 16);
    assertChunks(`<https://a.example/${'😀'.repeat(11)}>`, 17);
    // Nor so that a piece holds an odd number of the ``` of its text (it would open a code block).
    assert.deepEqual(assertChunks('<https://a.example/```b```c d long link text here>', 16), ['<https://a.examp', 'le/```b```c d lo', 'ng link text her', 'e>']);
    assertChunks('x <https://a.example/|``` ```x```y``` lots of text here> ```code\nmore code here```', 16);
  });

  it('answers pieces within the limit that give the text back, on converted and on raw text', () => {
    fc.assert(fc.property(markdownish, fc.integer({ min: 16, max: 120 }), (s, limit) => void assertChunks(mrkdwnFromMarkdown(s), limit)), { numRuns: 1_000 });
    fc.assert(fc.property(markdownish, fc.integer({ min: 16, max: 120 }), (s, limit) => void assertChunks(s, limit)), RUNS);
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('`', '```', '\n', ' ', 'a', '&amp;', '😀', '<https://a.example|x y>'), maxLength: 200 }), fc.integer({ min: 16, max: 60 }), (s, limit) => void assertChunks(s, limit)),
      RUNS,
    );
  });

  it('cuts a 40 KB answer into sections of at most 3,000 characters', () => {
    const answer = mrkdwnFromMarkdown(('## Step\n\nSome **text** with [a link](https://a.example/x) and `code`.\n\n```ts\nconst a = "<b>";\n```\n').repeat(450));
    assert.ok(answer.length > 40_000);
    const pieces = assertChunks(answer, SECTION_TEXT_LIMIT);
    assert.ok(pieces.length >= 14);
  });
});
