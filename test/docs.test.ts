import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ERROR_DETAILS, type ErrorCode } from '../domain/errors.ts';
import { ERROR_STATUS } from '../src/http/error-status.ts';

describe('docs/errors.md', () => {
  const text = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
  const rows = new Map<string, { status: number; detail: string }>();
  for (const match of text.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \| (.+?) \|$/gm)) {
    rows.set(match[1]!, { status: Number(match[2]), detail: match[3]! });
  }

  it('lists every code of the catalog with its status and detail, and nothing else', () => {
    assert.deepEqual([...rows.keys()].sort(), Object.keys(ERROR_DETAILS).sort());
    for (const code of Object.keys(ERROR_DETAILS) as ErrorCode[]) {
      assert.deepEqual(rows.get(code), { status: ERROR_STATUS[code], detail: ERROR_DETAILS[code] }, code);
    }
  });
});

describe('README.md', () => {
  const text = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

  it("stays a newcomer's page: at most 80 lines, the rest in docs/ (docs/operations.md has the configuration)", () => {
    assert.ok(text.split('\n').length <= 81, `README.md has ${text.split('\n').length - 1} lines`);
    assert.doesNotMatch(text, /^\| variable \|/m);
  });

  it('says how long `npm test` takes, and what `npm run test:full` adds', () => {
    assert.match(text, /`npm test` runs the fast tier in about \d+ minutes/);
    assert.match(text, /`npm run test:full` \(about \d+ minutes\) adds the storage matrix/);
  });
});

describe('the commands the docs name', () => {
  const root = new URL('..', import.meta.url);
  // And npm's own: `npm run env` prints the scripts' environment in any package (the second-start bench times it).
  const scripts = [...Object.keys((JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { scripts: Record<string, string> }).scripts), 'env'];
  const docs = ['README.md', ...readdirSync(new URL('docs/', root)).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

  /** Every `npm run X` a text names. */
  const named = (text: string): string[] => [...text.matchAll(/npm run ([a-z][\w:-]*)/g)].map((match) => match[1]!);

  it('are scripts of package.json', () => {
    const missing: string[] = [];
    for (const doc of docs) for (const name of named(readFileSync(new URL(doc, root), 'utf8'))) if (!scripts.includes(name)) missing.push(`${doc}: npm run ${name}`);
    assert.deepEqual(missing, []);
  });

  it('the checker finds them', () => {
    assert.deepEqual(named('`npm run test:full` and npm run bench, not npm test'), ['test:full', 'bench']);
  });
});
