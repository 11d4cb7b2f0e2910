import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DERIVED_TITLE_MAX, isValidTitle, titleFromDirective } from '../../domain/thread-title.ts';

const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const control = /[\u0000-\u001f\u007f-\u009f]/;
/** Words of letters and digits only: no Markdown mark among them. */
const plainWords = fc.array(fc.stringMatching(/^[A-Za-z0-9\u00e9\u00fc\u4e00-\u4e0f]{1,12}$/), { minLength: 1, maxLength: 20 });

describe('thread titles', () => {
  it('takes the first line, without its Markdown marks', () => {
    const cases: [string, string][] = [
      ['# Fix the build\nthen the tests', 'Fix the build'],
      ['## **Bold** and _em_ and *it* ##', 'Bold and em and it'],
      ['Run `npm test` please', 'Run npm test please'],
      ['See [the docs](https://example.com/a_b) now', 'See the docs now'],
      ['- [ ] a task item', 'a task item'],
      ['1. first step', 'first step'],
      ['> > quoted *words*', 'quoted words'],
      ['```ts\nconst a = 1;\n```', 'const a = 1;'],
      ['\n\n   \n---\nAfter the break', 'After the break'],
      ['rename my_var_name to snake_case', 'rename my_var_name to snake_case'],
      ['__strong__ ~~gone~~', 'strong gone'],
      ['tab\there', 'tab here'],
      ['', ''],
      ['  \n```\n', ''],
    ];
    for (const [text, title] of cases) assert.equal(titleFromDirective(text), title, JSON.stringify(text));
  });

  it('property: a title is at most 80 characters, one trimmed line, without control characters, storable when the text is', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 400 }), (text) => {
      const title = titleFromDirective(text);
      assert.ok(title.length <= DERIVED_TITLE_MAX, `${title.length}`);
      assert.equal(title, title.trim());
      assert.ok(!control.test(title), JSON.stringify(title));
      if (!lone.test(text)) assert.ok(!lone.test(title), 'a surrogate pair was cut');
      if (title !== '') assert.ok(isValidTitle(title));
    }));
  });

  it('property: plain words on the first line are the title as they are (to 80 characters)', () => {
    fc.assert(fc.property(plainWords, fc.string({ maxLength: 50 }), (words, rest) => {
      const line = words.join(' ');
      const title = titleFromDirective(`${line}\n${rest}`);
      assert.equal(title, line.slice(0, DERIVED_TITLE_MAX).trim());
    }));
  });

  it('property: heading, quote, list and emphasis marks around plain words leave the words', () => {
    const mark = fc.constantFrom((s: string) => `# ${s}`, (s: string) => `> ${s}`, (s: string) => `- ${s}`, (s: string) => `**${s}**`, (s: string) => `\`${s}\``, (s: string) => `[${s}](http://x.test/)`);
    fc.assert(fc.property(fc.array(fc.stringMatching(/^[A-Za-z0-9]{1,8}$/), { minLength: 1, maxLength: 6 }), mark, (words, wrap) => {
      const line = words.join(' ');
      assert.equal(titleFromDirective(wrap(line)), line);
    }));
  });

  it('accepts 1 to 200 characters without control characters as a rename', () => {
    assert.equal(isValidTitle('a'), true);
    assert.equal(isValidTitle('a'.repeat(200)), true);
    assert.equal(isValidTitle(''), false);
    assert.equal(isValidTitle('a'.repeat(201)), false);
    assert.equal(isValidTitle('line\nbreak'), false);
    assert.equal(isValidTitle('bell\u0007'), false);
    assert.equal(isValidTitle('c1\u0085'), false);
  });
});
