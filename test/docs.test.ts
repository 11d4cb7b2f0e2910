import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
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

  it('keeps the line the measured test timings go on', () => {
    assert.match(text, /^`npm test` — the fast tier \(about .+\n<!-- timings -->$/m);
  });
});
