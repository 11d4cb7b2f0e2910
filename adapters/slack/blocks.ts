import type { ActionsBlock, Button, ContextBlock, KnownBlock, SectionBlock } from '@slack/types';
import { escapeMrkdwn, mrkdwnChunks, SECTION_TEXT_LIMIT } from './mrkdwn.ts';

/**
 * Block Kit messages of the Slack channel (contract section 10): an answer's mrkdwn as section
 * blocks, an approval or question with one button per option, and the same ask once answered.
 * Pure functions. Limits kept: section text 3,000 characters, button text 75, button value 2,000,
 * 50 blocks per message.
 */

export const BLOCKS_PER_MESSAGE = 50;
export const BUTTON_TEXT_LIMIT = 75;
export const BUTTON_VALUE_LIMIT = 2_000;
/** The most characters of the choice an answered ask names. */
export const CHOICE_LIMIT = 200;
/** The `action_id` of every answer button. */
export const ANSWER_ACTION_ID = 'console_answer';
/** The `block_id` of the context line a question without buttons ends with. */
export const REPLY_HINT_BLOCK_ID = 'console_reply_hint';
/** The `block_id` of the line an answered ask ends with. */
export const ANSWERED_BLOCK_ID = 'console_answered';

/** An approval or question as the Slack channel posts it. */
export interface SlackAsk {
  readonly pending_id: string;
  readonly kind: 'approval' | 'question';
  readonly title: string;
  readonly options: readonly { readonly id: string; readonly name: string }[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SLACK_USER = /^[UW][A-Z0-9]+$/;

const isHigh = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;

/**
 * `text` in at most `max` UTF-16 code units: as it is when it fits, else cut and ended with `…`,
 * never inside a surrogate pair nor (with `entities`) inside an `&…;` entity.
 */
export function cutText(text: string, max: number, entities = false): string {
  if (text.length <= max) return text;
  let cut = Math.max(0, max - 1);
  if (cut > 0 && isHigh(text.charCodeAt(cut - 1))) cut -= 1;
  if (entities) {
    const amp = text.lastIndexOf('&', cut - 1);
    if (amp >= 0 && cut - amp < 10 && !text.slice(amp, cut).includes(';') && /^&#?[A-Za-z0-9]{1,8};/.test(text.slice(amp))) cut = amp;
  }
  return `${text.slice(0, cut)}…`;
}

/**
 * An answer's mrkdwn as section blocks, one per piece of mrkdwnChunks (a piece of only whitespace,
 * which Slack refuses, is left out), grouped into messages of at most 50 blocks. No text, no message.
 */
export function textBlocks(mrkdwn: string): KnownBlock[][] {
  const sections: SectionBlock[] = mrkdwnChunks(mrkdwn, SECTION_TEXT_LIMIT)
    .filter((piece) => piece.trim() !== '')
    .map((piece) => ({ type: 'section', text: { type: 'mrkdwn', text: piece } }));
  const messages: KnownBlock[][] = [];
  for (let i = 0; i < sections.length; i += BLOCKS_PER_MESSAGE) messages.push(sections.slice(i, i + BLOCKS_PER_MESSAGE));
  return messages;
}

/** A button's text: the option's name on one line, cut to 75 characters; never empty. */
function buttonText(name: string, number: number): string {
  const flat = name.replace(/\s+/g, ' ').trim();
  return flat === '' ? String(number) : cutText(flat, BUTTON_TEXT_LIMIT);
}

/**
 * An approval or question as a Block Kit message: a section `*Approval needed:* <title>` or
 * `*Question:* <title>`, then one actions block per option (`block_id` `console_answer_<index>`)
 * holding one button (`action_id` `console_answer`, `value` `<pending id>:<option id>`). At most 49
 * options get a button, and none whose value passes 2,000 characters: those the section names,
 * numbered as in a chat reply ("Reply with a number…"). Without any button: a context line "Reply in
 * this thread with your answer." `text` is the plain fallback: `fallback` escaped, cut to 3,000.
 * Throws when the pending id is no UUID (the click's value could not be read back).
 */
export function askBlocks(ask: SlackAsk, fallback: string): { blocks: KnownBlock[]; text: string } {
  if (!UUID.test(ask.pending_id)) throw new TypeError('the pending id of an ask is a UUID');
  const head = ask.kind === 'approval' ? '*Approval needed:* ' : '*Question:* ';
  const buttons: ActionsBlock[] = [];
  const named: string[] = [];
  ask.options.forEach((option, index) => {
    const value = `${ask.pending_id}:${option.id}`;
    if (buttons.length < BLOCKS_PER_MESSAGE - 1 && value.length <= BUTTON_VALUE_LIMIT) {
      const button: Button = {
        type: 'button',
        action_id: ANSWER_ACTION_ID,
        value,
        text: { type: 'plain_text', text: buttonText(option.name, index + 1), emoji: false },
      };
      buttons.push({ type: 'actions', block_id: `console_answer_${index}`, elements: [button] });
    } else {
      named.push(`${index + 1}. ${escapeMrkdwn(option.name.replace(/\s+/g, ' ').trim())}`);
    }
  });

  // The title gets what the listing of unbuttoned options leaves, and at least 1,000 characters.
  const title = escapeMrkdwn(ask.title);
  let listing = '';
  if (named.length > 0) {
    const intro = "Reply with a number or an option's name:";
    const room = SECTION_TEXT_LIMIT - head.length - Math.min(title.length, 1_000) - 2;
    const lines = [intro];
    let used = intro.length;
    for (const [k, line] of named.entries()) {
      const more = `…and ${named.length - k} more`;
      const entry = cutText(line, 200, true);
      // Room is kept for the "…and N more" line while more entries follow.
      const reserve = k < named.length - 1 ? 1 + more.length : 0;
      if (used + 1 + entry.length + reserve > room) {
        lines.push(more);
        break;
      }
      lines.push(entry);
      used += 1 + entry.length;
    }
    listing = `\n\n${lines.join('\n')}`;
  }
  const section: SectionBlock = {
    type: 'section',
    text: { type: 'mrkdwn', text: head + cutText(title, SECTION_TEXT_LIMIT - head.length - listing.length, true) + listing },
  };
  const blocks: KnownBlock[] = [section, ...buttons];
  if (buttons.length === 0) {
    const hint: ContextBlock = {
      type: 'context',
      block_id: REPLY_HINT_BLOCK_ID,
      elements: [{ type: 'mrkdwn', text: 'Reply in this thread with your answer.' }],
    };
    blocks.push(hint);
  }
  return { blocks, text: cutText(escapeMrkdwn(fallback), SECTION_TEXT_LIMIT, true) };
}

/**
 * The message of an ask once answered: its blocks but the answer buttons (and the reply hint), with
 * a context line `<@who> chose *choice*` where the first buttons were (else at the end). `who` is a
 * Slack user id (`U…` or `W…`): anything else throws. The choice is escaped and cut to 200 characters.
 */
export function answeredBlocks(blocks: readonly KnownBlock[], who: string, choice: string): KnownBlock[] {
  if (!SLACK_USER.test(who)) throw new TypeError('who answered is a Slack user id');
  const shown = cutText(escapeMrkdwn(choice.replace(/\s+/g, ' ').trim()), CHOICE_LIMIT, true);
  const line: ContextBlock = {
    type: 'context',
    block_id: ANSWERED_BLOCK_ID,
    elements: [{ type: 'mrkdwn', text: shown === '' ? `<@${who}> answered` : `<@${who}> chose *${shown}*` }],
  };
  const out: KnownBlock[] = [];
  let placed = false;
  for (const block of blocks) {
    const answerRow = block.type === 'actions' && (block.elements.some((element) => 'action_id' in element && element.action_id === ANSWER_ACTION_ID) || block.block_id?.startsWith('console_answer_') === true);
    const hint = block.type === 'context' && (block.block_id === REPLY_HINT_BLOCK_ID || block.block_id === ANSWERED_BLOCK_ID);
    if (answerRow || hint) {
      if (!placed) out.push(line);
      placed = true;
      continue;
    }
    out.push(block);
  }
  if (!placed) out.push(line);
  return out;
}

/**
 * A button's value read back: the pending id before the first `:` (a UUID) and the option id after
 * it (which may hold `:` itself); null when it is not such a value.
 */
export function parseAnswerValue(value: string): { pending_id: string; option_id: string } | null {
  const colon = value.indexOf(':');
  if (colon < 0) return null;
  const pending_id = value.slice(0, colon);
  if (!UUID.test(pending_id)) return null;
  return { pending_id, option_id: value.slice(colon + 1) };
}
