/** An agent's message, its Markdown drawn (markdown.ts says why that HTML holds nothing the agent can run). Browser code. */
import { useMemo } from 'preact/hooks';
import { renderMarkdown } from './markdown.ts';

export function AgentText({ text }: { text: string }) {
  const html = useMemo(() => renderMarkdown(text), [text]);
  return <div class="markdown" dangerouslySetInnerHTML={{ __html: html }} />;
}
