// The chat-inbound protocol (core/channels/chat-protocol.ts) every chat adapter calls, on the memory chat inbox
// and delivery outbox with a clock of the test's: a message claimed once across listeners, an unlinked sender
// told once, a reply posted once by its derived id (a retry too), each message marked done; direct messages'
// `link <code>` with its limit and the help text. Runtime-free like the rest of test/core.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { memoryChatInbox } from '../../adapters/memory/chat-inbox.ts';
import { memoryDeliveryOutbox } from '../../adapters/memory/delivery-outbox.ts';
import { emptyState } from '../../adapters/memory/state.ts';
import { CHAT_CLAIM_MS, chatProtocol, DIRECT_HELP, HELP_EVERY_MS, TOO_MANY_LINK_ATTEMPTS, TOO_MANY_PLACES } from '../../core/channels/chat-protocol.ts';
import { HOW_TO_LINK, HOW_TO_REACH, type ChatOutcome } from '../../core/channels/inbound.ts';
import type { ChatChoice, ChatMessage, ChoiceHandled } from '../../ports/chat-inbound.ts';
import { SERVED_PLACES_MAX, type ChatInbox } from '../../ports/chat-inbox.ts';
import { manualClock, type ManualClock } from '../support/manual-clock.ts';

/** The protocol over one memory state: what the app was handed, what went to the outbox, and the clock. */
function world(
  answer: (message: ChatMessage) => ChatOutcome | Promise<ChatOutcome>,
  options: { inbox?: (inbox: ChatInbox) => ChatInbox; attempts?: number; choose?: (choice: ChatChoice) => ChoiceHandled; manual?: ManualClock } = {},
) {
  const clock = { now: 1_000_000 };
  const { manual } = options;
  const state = emptyState();
  const inbox = memoryChatInbox(state.chatInbox, manual === undefined ? () => clock.now : () => manual.now());
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
    userAt: async (_channel, sender) => (sender.startsWith('alice@') ? 'alice' : null),
    linkAttempt: () => ++attempts <= (options.attempts ?? 5),
    newId: () => `holder-${++ids}`,
    derivedId: (seed) => `derived:${seed}`,
    ...(manual === undefined ? { now: () => clock.now } : { clock: manual }),
  });
  const posted = () => [...state.deliveries.values()].map((entry) => entry.delivery);
  return { protocol, inbox, handed, chosen, redeemed, posted, clock };
}

const said = (fields: Partial<ChatMessage> = {}): ChatMessage => ({
  channel: 'team-chat', address: { channel: 'team-chat', id: 'general/t1' }, opens: null, sender: 'alice@chat.example', text: 'hello', id: 'm1', ...fields,
});
const directive: ChatOutcome = { kind: 'directive', thread_id: 't', answer: { thread_id: 't', key: null, conversation_id: 'c', run_id: 'r' } };

describe('the chat-inbound protocol', () => {
  it('tells a sender how to reach a conversation once per place (the adapter\'s text where it gives one), for every listener', async () => {
    const w = world(() => ({ kind: 'hint', reply: HOW_TO_REACH }));
    const ambiguous = (id: string, sender = 'alice@x') => said({ address: { channel: 'team-chat', id: 'general' }, reached: 'ambiguous', id, sender });
    const chat = w.protocol.session({ hint: 'reply to my posts' });
    assert.deepEqual(await chat.message(ambiguous('m1'), { place: 'general', replyAt: 'general/m1' }), { kind: 'handled', outcome: 'hint' });
    await chat.message(ambiguous('m2'), { place: 'general', replyAt: 'general/m2' });
    await w.protocol.session().message(ambiguous('m3'), { place: 'general', replyAt: 'general/m3' });
    await chat.message(ambiguous('m4', 'bob@x'), { place: 'general', replyAt: 'general/m4' });
    await chat.message(ambiguous('m5'), { place: 'ops', replyAt: 'ops/m5' });
    assert.deepEqual(w.posted().map((d) => [d.place, d.to, d.text]), [
      ['general/m1', 'alice@x', 'reply to my posts'], ['general/m4', 'bob@x', 'reply to my posts'], ['ops/m5', 'alice@x', 'reply to my posts'],
    ]);
  });

  it('takes an invitation from a linked sender once (served, accepted), tells anyone else how to link at most once in ten minutes', async () => {
    const w = world(() => directive);
    const chat = w.protocol.session();
    const done: string[] = [];
    const answer = { accept: async (fresh: boolean) => void done.push(fresh ? 'accept' : 'accept again'), decline: async (reply: string) => void done.push(reply) };
    const invitation = { channel: 'team-chat', place: 'ops@muc', sender: 'alice@x', id: 'i1' };
    assert.equal(await chat.invited(invitation, answer), 'accepted');
    assert.equal(await w.protocol.session().invited(invitation, answer), 'seen', 'the same invitation, on another listener');
    assert.deepEqual(await w.inbox.served('team-chat'), ['ops@muc']);
    const carol = { channel: 'team-chat', place: 'lab@muc', sender: 'carol@x', id: 'i2' };
    assert.equal(await chat.invited(carol, answer), 'unlinked');
    assert.equal(await chat.invited({ ...carol, id: 'i3' }, answer), 'unlinked');
    w.clock.now += HELP_EVERY_MS;
    assert.equal(await chat.invited({ ...carol, id: 'i4' }, answer), 'unlinked');
    assert.equal(await chat.invited({ ...invitation, id: null }, answer), 'accepted', 'an invitation without an id, to a place served already');
    assert.deepEqual(done, ['accept', HOW_TO_LINK, HOW_TO_LINK, 'accept again'], 'said in the place once');
    assert.deepEqual(await w.inbox.served('team-chat'), ['ops@muc'], 'nothing served for an unlinked sender');
  });

  it(`declines an invitation once the channel serves ${SERVED_PLACES_MAX} places`, async () => {
    const w = world(() => directive);
    for (let i = 0; i < SERVED_PLACES_MAX; i++) await w.inbox.serve('team-chat', `r${i}@muc`);
    const told: string[] = [];
    const handled = await w.protocol.session().invited({ channel: 'team-chat', place: 'one-more@muc', sender: 'alice@x', id: 'i1' },
      { accept: async () => void told.push('accept'), decline: async (reply) => void told.push(reply) });
    assert.equal(handled, 'full');
    assert.deepEqual(told, [TOO_MANY_PLACES]);
  });

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

  // Issue 41, "a chat claim held by a dead instance blocks its room until the claim lapses (up to 60 s)": a claim
  // is short and renewed by its listener while it handles the message, as a turn's lease is.
  describe('claims renewed while their message is handled (issue 41)', () => {
    const placing = { place: 'general', replyAt: 'general/t1' };

    it('a listener that died holding a message (it renews no more) gives it up within CHAT_CLAIM_MS, 10 s', async () => {
      const clock = manualClock();
      const w = world(() => directive, { manual: clock });
      // What a killed instance leaves: a claim, never renewed, never done.
      assert.equal(await w.inbox.claim('team-chat', 'general/m1', 'chat-dead-instance', CHAT_CLAIM_MS), true);
      const other = w.protocol.session();
      assert.deepEqual(await other.message(said(), placing), { kind: 'held' });
      await clock.advance(10_000);
      assert.deepEqual(await other.message(said(), placing), { kind: 'handled', outcome: 'directive' }, 'taken 10 s after the death');
      assert.equal(w.handed.length, 1);
    });

    it('a living listener keeps its message however long the handling takes; renewal stops once it is done', async () => {
      const clock = manualClock();
      let release!: () => void;
      const working = new Promise<void>((resolve) => (release = resolve));
      const w = world(async () => {
        await working;
        return directive;
      }, { manual: clock });
      const first = w.protocol.session();
      const handling = first.message(said(), placing);
      await clock.advance(0);
      const other = w.protocol.session();
      for (let passed = 0; passed < 6 * CHAT_CLAIM_MS; passed += CHAT_CLAIM_MS / 2) {
        await clock.advance(CHAT_CLAIM_MS / 2);
        assert.deepEqual(await other.message(said(), placing), { kind: 'held' }, `still held after ${passed + CHAT_CLAIM_MS / 2} ms`);
      }
      release();
      assert.deepEqual(await handling, { kind: 'handled', outcome: 'directive' });
      assert.equal(clock.scheduled, 0, 'no renewal scheduled once nothing is held');
      assert.deepEqual(await other.message(said(), placing), { kind: 'seen' });
      assert.equal(w.handed.length, 1, 'handed to the app once');
    });

    it('a direct message claimed by a listener that died is `held` (read it again), then answered once its claim lapsed', async () => {
      const clock = manualClock();
      const w = world(() => directive, { manual: clock });
      const dm = { channel: 'team-chat', sender: 'bob@chat.example', text: 'link ABCDEFGH', id: 's1' };
      assert.equal(await w.inbox.claim('team-chat', 'dm/bob@chat.example/s1', 'chat-dead-instance', CHAT_CLAIM_MS), true);
      const answers: string[] = [];
      const chat = w.protocol.session();
      assert.equal(await chat.direct(dm, async (reply) => void answers.push(reply)), 'held', 'not `seen`: before, it was dropped here');
      await clock.advance(CHAT_CLAIM_MS);
      assert.equal(await chat.direct(dm, async (reply) => void answers.push(reply)), 'link');
      assert.equal(await chat.direct(dm, async (reply) => void answers.push(reply)), 'seen');
      assert.deepEqual(answers, ['linked bob@chat.example']);
    });

    it('a handling that failed lets its claim lapse: another listener takes the message after CHAT_CLAIM_MS', async () => {
      const clock = manualClock();
      let fail = true;
      const w = world(() => {
        if (fail) throw new Error('storage went away');
        return directive;
      }, { manual: clock });
      await assert.rejects(w.protocol.session().message(said(), placing), /storage went away/);
      fail = false;
      const other = w.protocol.session();
      await clock.advance(CHAT_CLAIM_MS - 1);
      assert.deepEqual(await other.message(said(), placing), { kind: 'held' }, 'not renewed, but not lapsed yet');
      await clock.advance(1);
      assert.deepEqual(await other.message(said(), placing), { kind: 'handled', outcome: 'directive' });
    });
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
