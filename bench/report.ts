import { readFileSync, writeFileSync } from 'node:fs';

const FILE = new URL('../docs/benchmarks.md', import.meta.url);

/** Replaces (or appends) the section between `<!-- bench:NAME -->` markers in docs/benchmarks.md. */
export function writeSection(name: string, markdown: string): void {
  let text: string;
  try {
    text = readFileSync(FILE, 'utf8');
  } catch {
    text = '# Benchmarks\n\nFigures written by `npm run bench`; each section says how it was measured.\n';
  }
  const begin = `<!-- bench:${name} -->`;
  const end = `<!-- /bench:${name} -->`;
  const section = `${begin}\n${markdown.trim()}\n${end}`;
  const from = text.indexOf(begin);
  const to = text.indexOf(end);
  text = from !== -1 && to > from ? text.slice(0, from) + section + text.slice(to + end.length) : `${text.trimEnd()}\n\n${section}\n`;
  writeFileSync(FILE, text);
}
