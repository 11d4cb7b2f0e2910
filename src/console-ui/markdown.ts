/**
 * Agent text as HTML: agents answer in Markdown (code blocks, tables, links). markdown-it with `html: false`
 * escapes every tag the agent writes, so its `<script>` or `<img onerror>` arrive as text; its own link check
 * (`validateLink`) drops `javascript:`, `vbscript:`, `file:` and non-image `data:` targets, and links open in
 * a new tab without the page as opener or referrer. Images are off: an agent's image would be a request to a
 * host it chose (and the page's CSP allows none), so `![alt](url)` stays text. Fenced code is highlighted by
 * highlight.js core with the few languages registered here (its output escapes the code). Pure: tested in
 * Node. Browser code.
 */
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import python from 'highlight.js/lib/languages/python';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import MarkdownIt from 'markdown-it';

const LANGUAGES = { bash, css, diff, javascript, json, python, sql, typescript, xml, yaml };
for (const [name, language] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, language);

const md = new MarkdownIt({
  html: false,
  linkify: true,
  breaks: true,
  highlight: (code, lang) => {
    const language = lang.trim().toLowerCase();
    if (language === '' || hljs.getLanguage(language) === undefined) return '';
    // markdown-it wraps the result in <pre><code class="language-…">; an empty string makes it escape the code itself.
    return hljs.highlight(code, { language, ignoreIllegals: true }).value;
  },
});
md.disable('image');

const renderLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  const token = tokens[idx]!;
  token.attrSet('target', '_blank');
  token.attrSet('rel', 'noopener noreferrer');
  return renderLinkOpen(tokens, idx, options, env, self);
};

/** The HTML of `text` (an agent's Markdown): safe to set as an element's inner HTML. */
export function renderMarkdown(text: string): string {
  return md.render(text);
}
