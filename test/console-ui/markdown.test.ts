// markdown.ts: an agent's Markdown drawn as HTML (code highlighted, tables, links) in which nothing the
// agent wrote can run: its tags stay text, `javascript:` links are not links, links open a new tab with
// no opener and no referrer, and images are not fetched.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderMarkdown } from '../../src/console-ui/markdown.ts';

describe('agent Markdown', () => {
  it('draws code blocks highlighted, tables and links', () => {
    const html = renderMarkdown('Try:\n\n```ts\nconst a: number = 1 < 2;\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nSee [the docs](https://example.com/docs).');
    assert.match(html, /<pre><code class="language-ts"><span class="hljs-keyword">const<\/span>/);
    assert.match(html, /&lt; <span class="hljs-number">2<\/span>/, 'the code is escaped');
    assert.match(html, /<table>[\s\S]*<th>a<\/th>[\s\S]*<td>2<\/td>/);
    assert.match(html, /<a href="https:\/\/example.com\/docs" target="_blank" rel="noopener noreferrer">the docs<\/a>/);
  });

  it('an unknown language is drawn as escaped code, not highlighted', () => {
    assert.equal(renderMarkdown('```brainfuck\n<b>+</b>\n```'), '<pre><code class="language-brainfuck">&lt;b&gt;+&lt;/b&gt;\n</code></pre>\n');
  });

  it('keeps what the agent wrote as HTML inert: tags are text, javascript: links are not links, images are not loaded', () => {
    const html = renderMarkdown([
      '<script>window.pwned = 1</script>',
      '<img src="x" onerror="window.pwned = 2">',
      '[click](javascript:window.pwned=3) [data](data:text/html,<script>1</script>) [vb](VBScript:msgbox)',
      '<a href="javascript:alert(1)">raw</a>',
      '![tracker](https://tracker.example/pixel.png)',
      '```html\n<script>alert(1)</script>\n```',
    ].join('\n\n'));
    assert.doesNotMatch(html, /<script/i);
    assert.doesNotMatch(html, /<img/i);
    assert.doesNotMatch(html, /<a [^>]*href="(javascript|data|vbscript):/i);
    assert.doesNotMatch(html, /<[a-z]+ [^>]*\bon[a-z]+=/i, 'no element carries an event handler');
    assert.match(html, /&lt;script&gt;window.pwned = 1&lt;\/script&gt;/);
    assert.match(html, /&lt;img src=&quot;x&quot; onerror=&quot;window.pwned = 2&quot;&gt;/);
  });
});
