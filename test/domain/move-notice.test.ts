import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { HISTORY_HEADER } from '../../domain/history-brief.ts';
import { lastExchange, MOVE_NOTICE_LIMITS, moveNotice, plainLine } from '../../domain/move-notice.ts';

const messageArb = fc.record({ role: fc.constantFrom('user', 'assistant', 'system'), text: fc.string({ unit: 'grapheme', maxLength: 3_000 }) });
const base = { mover: 'Alice', title: 'Fix the build', agent: 'claude', from: 'Console', titled: false };

describe('the teleport notice people read', () => {
  it('names the title once, who moved it and from where, then the last exchange, oldest first', () => {
    const newestFirst = [
      { role: 'system', text: 'Handed over to codex' },
      { role: 'assistant', text: 'Done: the **build** passes.\n\nSee `ci.yml`.' },
      { role: 'user', text: '# Fix it\nplease' },
      { role: 'assistant', text: 'An older answer' },
    ];
    assert.equal(moveNotice({ ...base, newestFirst }),
      'Alice moved the conversation "Fix the build" here from Console.\nLast exchange:\nAsked: Fix it please\nclaude answered: Done: the build passes. See ci.yml.');
    assert.equal(moveNotice({ ...base, titled: true, newestFirst: [] }), 'Alice moved the conversation here from Console.', 'a post the platform heads with the title');
  });

  it('the last exchange: an unanswered message alone; the service lines left out; nothing without people or agent', () => {
    assert.deepEqual(lastExchange([{ role: 'user', text: 'new' }, { role: 'assistant', text: 'old answer' }]), [{ role: 'user', text: 'new' }]);
    assert.deepEqual(lastExchange([{ role: 'assistant', text: 'a' }, { role: 'system', text: 's' }, { role: 'user', text: 'q' }]), [{ role: 'user', text: 'q' }, { role: 'assistant', text: 'a' }]);
    assert.deepEqual(lastExchange([{ role: 'system', text: 'Moved here' }]), []);
  });

  it('property: bounded, plain lines, never the agent brief nor a split surrogate pair', () => {
    fc.assert(fc.property(fc.array(messageArb, { maxLength: 30 }), fc.string({ maxLength: 300 }), fc.boolean(), (newestFirst, title, titled) => {
      const notice = moveNotice({ ...base, title, titled, newestFirst });
      assert.ok(notice.length <= MOVE_NOTICE_LIMITS.characters, `${notice.length} characters`);
      assert.ok(!notice.includes(HISTORY_HEADER));
      assert.ok(notice.split('\n').length <= 4, 'the head, "Last exchange:" and two messages');
      assert.ok(!/[\ud800-\udbff](?![\udc00-\udfff])/.test(notice), 'no surrogate pair cut in half');
      for (const line of notice.split('\n').slice(2)) assert.ok(line.length <= MOVE_NOTICE_LIMITS.perMessage + 'claude answered: '.length);
    }));
  });

  it('a plain line is cut to its bound with an ellipsis', () => {
    assert.equal(plainLine('a'.repeat(10), 5), 'aaaa…');
    assert.equal(plainLine('ab\u{1F600}c', 4), 'ab…');
  });
});
