import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ActionsBlock, Button, ContextBlock, KnownBlock, SectionBlock } from '@slack/types';
import fc from 'fast-check';
import { answeredBlocks, askBlocks, parseAnswerValue, textBlocks, type SlackAsk } from '../../adapters/slack/blocks.ts';
import { mrkdwnFromMarkdown } from '../../adapters/slack/mrkdwn.ts';

const PENDING = '0193b7c2-5d1e-7a4b-9c3d-2e1f0a9b8c7d';
const RUNS = { numRuns: 200 };

const sectionText = (block: KnownBlock) => {
  assert.equal(block.type, 'section');
  const text = (block as SectionBlock).text;
  assert.ok(text !== undefined && text.type === 'mrkdwn');
  return text.text;
};
const buttonOf = (block: KnownBlock): Button => {
  assert.equal(block.type, 'actions');
  const elements = (block as ActionsBlock).elements;
  assert.equal(elements.length, 1, 'one button per actions block');
  assert.equal(elements[0]!.type, 'button');
  return elements[0] as Button;
};
const contextText = (block: KnownBlock) => {
  assert.equal(block.type, 'context');
  const element = (block as ContextBlock).elements[0]!;
  assert.equal(element.type, 'mrkdwn');
  return (element as { text: string }).text;
};

/** What no block of a message may break, and no ping in any text. */
function assertWithinLimits(blocks: readonly KnownBlock[]) {
  assert.ok(blocks.length >= 1 && blocks.length <= 50, `${blocks.length} blocks`);
  const ids = new Set<string>();
  for (const block of blocks) {
    if (block.block_id !== undefined) {
      assert.ok(!ids.has(block.block_id), `block_id ${block.block_id} twice`);
      ids.add(block.block_id);
    }
    if (block.type === 'section') {
      const text = sectionText(block);
      assert.ok(text.length >= 1 && text.length <= 3_000, `section text of ${text.length}`);
      assert.ok(text.trim() !== '');
    }
    if (block.type === 'actions') {
      const button = buttonOf(block);
      assert.equal(button.action_id, 'console_answer');
      assert.ok(button.text.text.length >= 1 && button.text.text.length <= 75, `button text of ${button.text.text.length}`);
      assert.equal(button.text.emoji, false);
      assert.ok(button.value !== undefined && button.value.length <= 2_000);
    }
  }
}

const unpinged = (text: string) => !text.includes('<!') && !text.includes('<@') && !text.includes('<#');

describe('textBlocks', () => {
  it('answers one section block per piece, in messages of at most 50 blocks', () => {
    assert.deepEqual(textBlocks('*hello*'), [[{ type: 'section', text: { type: 'mrkdwn', text: '*hello*' } }]]);
    assert.deepEqual(textBlocks(''), []);
    const answer = mrkdwnFromMarkdown(('A paragraph of **words** with <!channel> and [a link](https://a.example/).\n'.repeat(40) + '\n').repeat(60));
    assert.ok(answer.length > 150_000);
    const messages = textBlocks(answer);
    assert.ok(messages.length >= 2, `${messages.length} messages`);
    for (const message of messages) assertWithinLimits(message);
    assert.equal(messages.flat().map(sectionText).join(''), answer);
    assert.ok(messages.flat().every((block) => unpinged(sectionText(block))));
  });

  it('leaves out a piece of only whitespace (Slack refuses it)', () => {
    const text = `${'a'.repeat(2_999)}\n${' \n'.repeat(10)}b`;
    const blocks = textBlocks(text).flat().map(sectionText);
    assert.ok(blocks.every((piece) => piece.trim() !== ''));
  });

  it('keeps every block within the limits, whatever the answer', () => {
    const text = fc.string({ unit: fc.oneof(fc.constantFrom('```\n', '\n', ' ', '*', '<!here>', '[x](https://a.example)', '😀', '&'), fc.string({ unit: 'binary', maxLength: 3 })), maxLength: 400 });
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 200 }), (s, times) => {
        const messages = textBlocks(mrkdwnFromMarkdown(s.repeat(times)));
        for (const message of messages) {
          assertWithinLimits(message);
          for (const block of message) assert.ok(unpinged(sectionText(block)));
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe('askBlocks', () => {
  it('answers an approval as a section and one actions block per option', () => {
    const ask: SlackAsk = {
      pending_id: PENDING,
      kind: 'approval',
      title: 'Run `rm -rf build` <!channel>',
      options: [
        { id: 'allow_once', name: 'Allow once' },
        { id: 'reject', name: 'Reject' },
      ],
    };
    assert.deepEqual(askBlocks(ask, 'Approval needed: Run rm -rf build <!channel>'), {
      blocks: [
        { type: 'section', text: { type: 'mrkdwn', text: '*Approval needed:* Run `rm -rf build` &lt;!channel&gt;' } },
        {
          type: 'actions',
          block_id: 'console_answer_0',
          elements: [{ type: 'button', action_id: 'console_answer', value: `${PENDING}:allow_once`, text: { type: 'plain_text', text: 'Allow once', emoji: false } }],
        },
        {
          type: 'actions',
          block_id: 'console_answer_1',
          elements: [{ type: 'button', action_id: 'console_answer', value: `${PENDING}:reject`, text: { type: 'plain_text', text: 'Reject', emoji: false } }],
        },
      ],
      text: 'Approval needed: Run rm -rf build &lt;!channel&gt;',
    });
  });

  it('answers a question without options as a section and a context line', () => {
    assert.deepEqual(askBlocks({ pending_id: PENDING, kind: 'question', title: 'Which <@U0BOB> port?', options: [] }, 'Question: which port?'), {
      blocks: [
        { type: 'section', text: { type: 'mrkdwn', text: '*Question:* Which &lt;@U0BOB&gt; port?' } },
        { type: 'context', block_id: 'console_reply_hint', elements: [{ type: 'mrkdwn', text: 'Reply in this thread with your answer.' }] },
      ],
      text: 'Question: which port?',
    });
  });

  it('gives 49 options buttons and names the rest, and any whose value is too long, in the text', () => {
    const options = Array.from({ length: 60 }, (_, i) => ({ id: i === 3 ? 'x'.repeat(2_000) : `o${i}`, name: `Option <${i}>` }));
    const { blocks } = askBlocks({ pending_id: PENDING, kind: 'question', title: 'Pick one', options }, 'Pick one');
    assertWithinLimits(blocks);
    assert.equal(blocks.length, 50);
    const values = blocks.slice(1).map((block) => buttonOf(block).value);
    assert.ok(!values.includes(`${PENDING}:${'x'.repeat(2_000)}`));
    assert.equal(values[3], `${PENDING}:o4`);
    assert.equal(blocks[4]!.block_id, 'console_answer_4');
    const text = sectionText(blocks[0]!);
    assert.ok(text.startsWith("*Question:* Pick one\n\nReply with a number or an option's name:\n4. Option &lt;3&gt;\n51. Option &lt;50&gt;\n"), text);
    assert.ok(text.endsWith('60. Option &lt;59&gt;'), text);
  });

  it('cuts a long button text to 75 characters with …, and a long title and fallback to fit 3,000', () => {
    const { blocks, text } = askBlocks(
      { pending_id: PENDING, kind: 'approval', title: '<'.repeat(5_000), options: [{ id: 'a', name: `${'n'.repeat(74)}😀 and more` }, { id: 'b', name: '  ' }] },
      '&'.repeat(5_000),
    );
    assertWithinLimits(blocks);
    assert.equal(buttonOf(blocks[1]!).text.text, `${'n'.repeat(74)}…`);
    assert.equal(buttonOf(blocks[2]!).text.text, '2', 'an empty name shows its number');
    const section = sectionText(blocks[0]!);
    assert.ok(section.endsWith('&lt;…'), 'cut between entities, never inside one');
    assert.ok(text.length <= 3_000 && text.endsWith('&amp;…'));
  });

  it('refuses a pending id that is no UUID', () => {
    assert.throws(() => askBlocks({ pending_id: 'p:1', kind: 'question', title: 't', options: [] }, 't'), TypeError);
  });

  it('keeps within the limits and round-trips every value, whatever the ask', () => {
    const name = fc.string({ unit: fc.oneof(fc.constantFrom('<!channel>', '<@U1>', ':', '😀', ' ', '\n', '&'), fc.string({ unit: 'binary', maxLength: 2 })), maxLength: 120 });
    const option = fc.record({ id: fc.oneof(fc.string({ maxLength: 10 }), fc.string({ minLength: 1_950, maxLength: 2_050 })), name });
    const ask = fc.record({
      pending_id: fc.uuid(),
      kind: fc.constantFrom('approval' as const, 'question' as const),
      title: fc.oneof(name, fc.string({ unit: fc.constantFrom('<', '&', 'a', '😀'), maxLength: 5_000 })),
      options: fc.array(option, { maxLength: 70 }),
    });
    fc.assert(
      fc.property(ask, name, (a, fallback) => {
        const { blocks, text } = askBlocks(a, fallback);
        assertWithinLimits(blocks);
        assert.ok(text.length <= 3_000 && unpinged(text) && !text.includes('<'));
        const section = sectionText(blocks[0]!);
        assert.ok(!section.includes('<'), 'title and names escaped');
        const buttons = blocks.filter((block) => block.type === 'actions').map(buttonOf);
        assert.ok(buttons.length <= 49);
        if (a.options.length === 0) assert.equal(contextText(blocks[blocks.length - 1]!), 'Reply in this thread with your answer.');
        for (const button of buttons) {
          const parsed = parseAnswerValue(button.value!);
          assert.ok(parsed !== null && parsed.pending_id === a.pending_id);
          assert.ok(a.options.some((o) => o.id === parsed.option_id));
        }
        const answered = answeredBlocks(blocks, 'U0ALICE', a.options[0]?.name ?? 'x');
        assertWithinLimits(answered);
        assert.ok(answered.every((block) => block.type !== 'actions'));
      }),
      RUNS,
    );
  });
});

describe('answeredBlocks', () => {
  const ask = askBlocks(
    { pending_id: PENDING, kind: 'approval', title: 'Edit file', options: [{ id: 'allow', name: 'Allow' }, { id: 'reject', name: 'Reject' }] },
    'Approval needed: Edit file',
  );

  it('keeps the section and puts one line saying who chose what in place of the buttons', () => {
    assert.deepEqual(answeredBlocks(ask.blocks, 'U0ALICE', 'Allow'), [
      ask.blocks[0],
      { type: 'context', block_id: 'console_answered', elements: [{ type: 'mrkdwn', text: '<@U0ALICE> chose *Allow*' }] },
    ]);
    const question = askBlocks({ pending_id: PENDING, kind: 'question', title: 'Port?', options: [] }, 'Port?');
    assert.deepEqual(answeredBlocks(question.blocks, 'W0BOB', '8080'), [
      question.blocks[0],
      { type: 'context', block_id: 'console_answered', elements: [{ type: 'mrkdwn', text: '<@W0BOB> chose *8080*' }] },
    ]);
  });

  it('escapes the choice and cuts it to 200 characters', () => {
    const [, line] = answeredBlocks(ask.blocks, 'U0ALICE', `<!channel> ${'x'.repeat(300)}`);
    const text = contextText(line!);
    assert.ok(text.startsWith('<@U0ALICE> chose *&lt;!channel&gt; x'), text);
    assert.equal(text.length, '<@U0ALICE> chose **'.length + 200);
  });

  it('refuses anyone but a Slack user id', () => {
    for (const who of ['<!channel>', 'u0alice', 'B0BOT', 'U0ALICE>', '', 'U', '!here', 'U0 ALICE']) {
      assert.throws(() => answeredBlocks(ask.blocks, who, 'Allow'), TypeError, who);
    }
  });
});

describe('parseAnswerValue', () => {
  it('splits at the first colon: the pending id (a UUID), then the option id', () => {
    assert.deepEqual(parseAnswerValue(`${PENDING}:allow`), { pending_id: PENDING, option_id: 'allow' });
    assert.deepEqual(parseAnswerValue(`${PENDING}:a:b:c`), { pending_id: PENDING, option_id: 'a:b:c' });
    assert.equal(parseAnswerValue(PENDING), null);
    assert.equal(parseAnswerValue('not-a-uuid:allow'), null);
    assert.equal(parseAnswerValue(''), null);
    assert.equal(parseAnswerValue(`x${PENDING}:allow`), null);
  });

  it('reads back every value a button carries', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.string({ unit: fc.oneof(fc.constant(':'), fc.string({ unit: 'binary', maxLength: 1 })) }), (pending_id, option_id) => {
        assert.deepEqual(parseAnswerValue(`${pending_id}:${option_id}`), { pending_id, option_id });
      }),
      RUNS,
    );
  });
});
