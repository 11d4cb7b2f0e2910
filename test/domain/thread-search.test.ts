import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { matchesEveryWord, searchWords } from '../../domain/thread-search.ts';

describe('thread search words (domain)', () => {
  it('splits on everything but letters and digits, in lower case, each word once', () => {
    assert.deepEqual(searchWords(`"Deploy" & stag|ing!: *deploy* o'Brien src/app.ts Ärger 42`), ['deploy', 'stag', 'ing', 'o', 'brien', 'src', 'app', 'ts', 'ärger', '42']);
    assert.deepEqual(searchWords('&|!:*()<->\'"'), []);
  });

  it('holds no character a query language reads as an operator, whatever the text', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (text) => {
      for (const word of searchWords(text)) assert.match(word, /^[\p{L}\p{N}]+$/u);
    }));
  });

  it('matches when every word begins a word of one of the texts; no words match everything', () => {
    const texts = ['Deploy the staging cluster', 'rollback plan ready'];
    assert.equal(matchesEveryWord(searchWords('DEPL stag roll'), texts), true);
    assert.equal(matchesEveryWord(searchWords('ploy'), texts), false, 'never inside a word');
    assert.equal(matchesEveryWord(searchWords('deploy nowhere'), texts), false, 'every word');
    assert.equal(matchesEveryWord([], []), true);
  });
});
