import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { boundedRecord, boundedText } from '../../domain/bounds.ts';
import { isStorableText } from '../../domain/text.ts';

describe('bounds on stored agent output', () => {
  it('property: a bounded text is the text itself when short, else a prefix of it plus a marker of what was cut', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 300 }), fc.integer({ min: 1, max: 200 }), (text, max) => {
      const out = boundedText(text, max);
      if (text.length <= max) return out === text;
      const match = /^([\s\S]*)… \[(\d+) characters cut\]$/.exec(out);
      assert.ok(match);
      assert.ok(text.startsWith(match[1]!));
      assert.ok(match[1]!.length <= max && match[1]!.length >= max - 1);
      assert.equal(match[1]!.length + Number(match[2]), text.length);
      // A well-formed text stays well formed: a surrogate pair is never split.
      if (isStorableText(text)) assert.ok(isStorableText(out));
      return true;
    }));
  });

  it('property: a bounded record fits its total once its bulky fields are dropped, and says so', () => {
    fc.assert(fc.property(fc.string({ maxLength: 20 }), fc.array(fc.string({ maxLength: 400 }), { maxLength: 20 }), fc.string({ maxLength: 400 }), (id, content, raw) => {
      const out = boundedRecord({ id, content, rawOutput: raw }, ['rawOutput', 'content'], 600, 100);
      assert.equal(out.id, boundedText(id, 100));
      if (out.truncated === true) assert.ok(!('rawOutput' in out) || !('content' in out));
      else assert.ok(JSON.stringify(out).length <= 600);
      return true;
    }));
  });
});
