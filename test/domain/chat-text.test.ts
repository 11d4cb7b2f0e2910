import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { answerFromChat, askText, chatParts, isStopRequest } from '../../domain/chat-text.ts';

const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const options = [{ id: 'allow', name: 'Allow', kind: null }, { id: 'reject', name: 'Reject once', kind: null }];

describe('chat text', () => {
  it('property: parts join to the text, each fits, and no surrogate pair is cut', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 2_000 }), fc.integer({ min: 2, max: 300 }), (text, limit) => {
      const parts = chatParts(text, limit);
      assert.equal(parts.join(''), text);
      for (const part of parts) {
        assert.ok(part.length > 0 && part.length <= limit, `${part.length} > ${limit}`);
        // A part of storable text stays storable: a pair is never split across two parts.
        if (!lone.test(text)) assert.ok(!lone.test(part), 'a surrogate pair was cut');
      }
    }));
  });

  it('cuts a long reply at a line break or a space when there is one', () => {
    const text = `${'a'.repeat(3_000)}\n${'b'.repeat(3_000)}`;
    assert.deepEqual(chatParts(text).map((p) => p.length), [3_001, 3_000]);
    assert.deepEqual(chatParts('short'), ['short']);
    assert.deepEqual(chatParts(''), []);
  });

  it('numbers an ask\'s options from 1', () => {
    const text = askText({ kind: 'approval', title: 'Edit notes.md?', options });
    assert.equal(text, 'Approval needed: Edit notes.md?\n1. Allow\n2. Reject once\nReply with a number or an option\'s name.');
    assert.match(askText({ kind: 'question', title: 'Which branch?', options: [] }), /^Question: Which branch\?\nReply with your answer\.$/);
  });

  it('reads a number or an option\'s name as the answer, free text only for a question', () => {
    const approval = { id: 'p1', kind: 'approval' as const, options };
    assert.deepEqual(answerFromChat(approval, ' 2 '), { id: 'p1', option: 'reject' });
    assert.deepEqual(answerFromChat(approval, 'allow'), { id: 'p1', option: 'allow' });
    assert.deepEqual(answerFromChat(approval, 'REJECT ONCE'), { id: 'p1', option: 'reject' });
    assert.equal(answerFromChat(approval, '3'), null);
    assert.equal(answerFromChat(approval, 'please do'), null);
    assert.deepEqual(answerFromChat({ id: 'q', kind: 'question', options: [] }, ' main '), { id: 'q', answer: 'main' });
    assert.equal(answerFromChat({ id: 'q', kind: 'question', options: [] }, '   '), null);
  });

  it('property: any option\'s number picks that option', () => {
    fc.assert(fc.property(fc.array(fc.string({ minLength: 1, maxLength: 20 }), { minLength: 1, maxLength: 9 }), fc.nat(), (names, pick) => {
      const opts = names.map((name, i) => ({ id: `o${i}`, name, kind: null }));
      const index = pick % opts.length;
      assert.deepEqual(answerFromChat({ id: 'p', kind: 'approval', options: opts }, String(index + 1)), { id: 'p', option: `o${index}` });
    }));
  });

  it('takes "stop" alone as a stop, nothing longer', () => {
    for (const text of ['stop', ' Stop ', 'STOP!', 'stop.']) assert.ok(isStopRequest(text), text);
    for (const text of ['stop it now', 'please stop', 'stopwatch', '']) assert.ok(!isStopRequest(text), text);
  });
});
