// The chat-inbound protocol (core/channels/chat-protocol.ts) every chat adapter calls, on the memory chat inbox
// and delivery outbox with a clock of the test's: a message claimed once across listeners, an unlinked sender
// told once, a reply posted once by its derived id (a retry too), each message marked done; direct messages'
// `link <code>` with its limit and the help text. Runtime-free like the rest of test/core.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { memoryChatInbox } from '../../adapters/memory/chat-inbox.ts';
import { memoryDeliveryOutbox } from '../../adapters/memory/delivery-outbox.ts';
import { emptyState } from '../../adapters/memory/state.ts';
import { CHAT_CLAIM_MS, chatProtocol, DIRECT_HELP, HELP_EVERY_MS, TOO_MANY_LINK_ATTEMPTS } from '../../core/channels/chat-protocol.ts';
import { HOW_TO_LINK, type ChatOutcome } from '../../core/channels/inbound.ts';
import type { ChatChoice, ChatMessage, ChoiceHandled } from '../../ports/chat-inbound.ts';
import type { ChatInbox } from '../../ports/chat-inbox.ts';

/** The protocol over one memory state: what the app was handed, what went to the outbox, and the clock. */
function world(
  answer: (message: ChatMessage) => ChatOutcome | Promise<ChatOutcome>,
  options: { inbox?: (inbox: ChatInbox) => ChatInbox; attempts?: number; choose?: (choice: ChatChoice) => ChoiceHandled } = {},
) {
  const clock = { now: 1_000_000 };
  const state = emptyState();
  const inbox = memoryChatInbox(state.chatInbox, () => clock.now);
  const outbox = memoryDeliveryOutbox(state.deliveries, () => clock.now);
  const handed: ChatMessage[] = [];
  const chosen: ChatChoice[] = [];
  const redeemed: { channel: string; address: string; code: string }[] = [];
  let attempts = 0;
  let ids = 0;
  const protocol = chatProtocol({
    receive: async (message) => {
      handed.push(message);
      return answer(message);
    },
    choose: async (choice) => {
      chosen.push(choice);
      return options.choose?.(choice) ?? { kind: 'refused', reply: 'not here' };
    },
    redeemLinkCode: async (channel, address, code) => {
      redeemed.push({ channel, address, code });
      return { kind: 'linked', reply: `linked ${address}` };
    },
    post: (delivery) => outbox.add(delivery),
    inbox: options.inbox?.(inbox) ?? inbox,
    linkAttempt: () => ++attempts <= (options.attempts ?? 5),
    newId: () => `holder-${++ids}`,
    derivedId: (seed) => `derived:${seed}`,
    now: () => clock.now,
  });
  const posted = () => [...state.deliveries.values()].map((entry) => entry.delivery);
  return { protocol, inbox, handed, chosen, redeemed, posted, clock };
}

const said = (fields: Partial<ChatMessage> = {}): ChatMessage => ({
  channel: 'team-chat', address: { channel: 'team-chat', id: 'general/t1' }, opens: null, sender: 'alice@chat.example', text: 'hello', id: 'm1', ...fields,
});
const directive: ChatOutcome = { kind: 'directive', thread_id: 't', answer: { thread_id: 't', key: null, conversation_id: 'c', run_id: 'r' } };

describe('the chat-inbound protocol', () => {
  it('claims a message once: a second listener is told it is held while the first works, then that it was seen; the app has it once, and it is done', async () => {
    let release!: () => void;
    const working = new Promise<void>((resolve) => (release = resolve));
    const w = world(async () => {
      await working;
      return directive;
    });
    const first = w.protocol.session();
    const second = w.protocol.session();
    const placing = { place: 'general', replyAt: 'general/t1' };
    const handling = first.message(said(), placing);
    assert.deepEqual(await second.message(said(), placing), { kind: 'held' });
    release();
    assert.deepEqual(await handling, { kind: 'handled', outcome: 'directive' });
    assert.deepEqual(await second.message(said(), placing), { kind: 'seen' });
    assert.deepEqual(await first.message(said(), placing), { kind: 'seen' }, 'the same listener does not handle it again either');
    assert.equal(w.handed.length, 1, 'handed to the app once');
    assert.equal(await w.inbox.isDone('team-chat', 'general/m1'), true, 'claimed as <place>/<id>, and done');
    assert.deepEqual(w.posted(), [], 'a directive posts nothing');
  });

  it('tells an unlinked sender how to link once per channel, in the thread the message would open; nothing more', async () => {
    const w = world(() => ({ kind: 'unlinked', reply: HOW_TO_LINK }));
    const chat = w.protocol.session();
    const inRoom = { channel: 'team-chat', id: 'general' };
    const first = await chat.message(said({ address: inRoom, sender: 'carol@x', id: 'm1' }), { place: 'general', replyAt: 'general/m1' });
    const again = await chat.message(said({ address: inRoom, sender: 'carol@x', id: 'm2' }), { place: 'general', replyAt: 'general/m2' });
    assert.deepEqual([first, again], [{ kind: 'handled', outcome: 'unlinked' }, { kind: 'handled', outcome: 'unlinked' }]);
    assert.deepEqual(w.posted(), [{
      id: 'derived:team-chat\u0000general/m1\u0000reply', channel: 'team-chat', place: 'general/m1', new_thread: false,
      address: { channel: 'team-chat', id: 'general/m1' }, title: '', text: HOW_TO_LINK, ask: null, to: 'carol@x', attempts: 0, handed_before: false,
    }], 'for the sender alone where the platform can');
    assert.equal(await w.inbox.isDone('team-chat', 'told/carol@x'), true, 'remembered in the inbox, for every instance');
    assert.equal(await w.inbox.isDone('team-chat', 'general/m2'), true);
    // Another listener (another instance) does not tell them again; another channel does, once.
    await w.protocol.session().message(said({ sender: 'carol@x', id: 'm3' }), { place: 'general', replyAt: 'general/t1' });
    await chat.message(said({ channel: 'other-chat', sender: 'carol@x', id: 'm1' }), { place: 'general', replyAt: 'general/t1' });
    assert.deepEqual(w.posted().map((d) => [d.channel, d.place]), [['team-chat', 'general/m1'], ['other-chat', 'general/t1']]);
  });

  it('posts a refusal once: a retry after the first listener died before marking it done posts under the same id', async () => {
    let failDone = true;
    const w = world(() => ({ kind: 'refused', reply: 'You are not a member of this thread.' }), {
      inbox: (inbox) => ({
        ...inbox,
        async done(channel, key) {
          if (failDone) throw new Error('storage went away');
          return inbox.done(channel, key);
        },
      }),
    });
    const placing = { place: 'general', replyAt: 'general/t1' };
    await assert.rejects(w.protocol.session().message(said(), placing), /storage went away/);
    assert.equal(w.posted().length, 1, 'the reply is in the outbox');
    failDone = false;
    const retry = w.protocol.session();
    assert.deepEqual(await retry.message(said(), placing), { kind: 'held' }, 'not done: held while its claim runs');
    w.clock.now += CHAT_CLAIM_MS;
    assert.deepEqual(await retry.message(said(), placing), { kind: 'handled', outcome: 'refused' }, 'taken once the claim lapsed');
    assert.equal(w.handed.length, 2, 'the app answers a repeat (its directive is keyed by the message id)');
    assert.deepEqual(w.posted().map((d) => [d.id, d.text, d.to]), [['derived:team-chat\u0000general/m1\u0000reply', 'You are not a member of this thread.', 'alice@chat.example']], 'one post, to the sender');
    assert.equal(await w.inbox.isDone('team-chat', 'general/m1'), true);
    assert.deepEqual(await retry.message(said(), placing), { kind: 'seen' });
  });

  it('claims a click by its id: the app answers it once, a second one (a redelivery, another listener) is seen, and it is done', async () => {
    const answered: ChoiceHandled = { kind: 'answered', thread_id: 't', option: 'Allow' };
    const w = world(() => directive, { choose: (choice) => (choice.id === 'click-1' ? answered : { kind: 'refused', reply: 'not here' }) });
    const click: ChatChoice = {
      channel: 'team-chat', address: { channel: 'team-chat', id: 'general/t1' }, sender: 'alice@chat.example', pending_id: 'p1', option_id: 'allow', id: 'click-1',
    };
    assert.deepEqual(await w.protocol.session().choose(click), answered, "the app's answer");
    assert.deepEqual(await w.protocol.session().choose(click), { kind: 'seen' });
    assert.deepEqual(w.chosen, [click], 'handed to the app once');
    assert.equal(await w.inbox.isDone('team-chat', 'choice/click-1'), true, 'claimed as choice/<id>, and done');
    assert.deepEqual(await w.protocol.session().choose({ ...click, id: 'click-2' }), { kind: 'refused', reply: 'not here' }, 'another click is its own');
    assert.equal(w.chosen.length, 2);
    assert.deepEqual(w.posted(), [], 'a click posts nothing: the adapter shows the answer');
  });

  it('holds a claim as long as the listener says (claimMs), then another listener may take the message', async () => {
    let failDone = true;
    const w = world(() => directive, {
      inbox: (inbox) => ({ ...inbox, done: async (channel, key) => (failDone ? Promise.reject(new Error('away')) : inbox.done(channel, key)) }),
    });
    const placing = { place: 'general', replyAt: 'general/t1' };
    await assert.rejects(w.protocol.session({ claimMs: 5 }).message(said(), placing), /away/);
    failDone = false;
    const other = w.protocol.session();
    assert.deepEqual(await other.message(said(), placing), { kind: 'held' });
    w.clock.now += 5;
    assert.deepEqual(await other.message(said(), placing), { kind: 'handled', outcome: 'directive' }, 'lapsed after 5 ms');
  });

  it('redeems `link <code>` in a direct message within its limit, answers anything else with the help text once in ten minutes, and claims a message once', async () => {
    const w = world(() => directive, { attempts: 1 });
    const chat = w.protocol.session();
    const answers: string[] = [];
    const answer = async (reply: string) => void answers.push(reply);
    const dm = (text: string, id: string | null) => ({ channel: 'team-chat', sender: 'bob@x', text, id });
    assert.equal(await chat.direct(dm('link ab12-cd34', 'd1'), answer), 'link');
    assert.equal(await w.protocol.session().direct(dm('link ab12-cd34', 'd1'), answer), 'seen', 'one id, one answer across listeners');
    assert.equal(await chat.direct(dm('LINK  zz', 'd2'), answer), 'link');
    assert.deepEqual(w.redeemed, [{ channel: 'team-chat', address: 'bob@x', code: 'ab12-cd34' }]);
    assert.equal(await chat.direct(dm('hi', 'd3'), answer), 'help');
    assert.equal(await chat.direct(dm('hi again', null), answer), 'quiet');
    w.clock.now += HELP_EVERY_MS;
    assert.equal(await chat.direct(dm('still there?', null), answer), 'help');
    assert.deepEqual(answers, ['linked bob@x', TOO_MANY_LINK_ATTEMPTS, DIRECT_HELP, DIRECT_HELP]);
    assert.equal(await w.inbox.isDone('team-chat', 'dm/bob@x/d1'), true);
    const own = w.protocol.session({ help: 'Mention me to start.' });
    await own.direct({ ...dm('?', null), sender: 'eve@x' }, answer);
    assert.equal(answers.at(-1), 'Mention me to start.', 'an adapter may give its own help text');
  });
});
