import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Channel, ChannelPlace } from '../../domain/model.ts';
import { busyReason, isThreadPlace, movedReason, NEW_CONSOLE_THREAD, placesInside, threadOperations, type OperationsInput } from '../../domain/moves.ts';
import type { OfferedAgent } from '../../domain/vocabulary.ts';

const AGENTS = ['claude', 'codex', 'gemini'];
const USERS = ['alice', 'bob'];

const agentArb: fc.Arbitrary<OfferedAgent[]> = fc.constant(
  AGENTS.map((id, i) => ({ id, models: i === 1 ? [] : ['m1', 'm2'], efforts: [], permission_modes: ['default'], default_permission_mode: 'default', steering: false })),
);
const placeArb = (prefix: string): fc.Arbitrary<ChannelPlace[]> =>
  fc.array(
    fc.record({ shared: fc.boolean(), openable: fc.boolean(), barred: fc.option(fc.constant('Not here'), { nil: null }) }),
    { maxLength: 3 },
  ).map((places) => places.map((p, i) => ({
    id: `${prefix}/${i}`, name: `#${prefix}${i}`, shared: p.shared, inside: p.openable ? `${prefix}-${i}` : null, barred: p.barred,
    children: p.openable ? [{ id: `${prefix}/${i}/t`, name: 'thread', shared: p.shared, inside: null, barred: null, children: [] }] : [],
  })));
const channelArb = (id: string): fc.Arbitrary<Channel> =>
  fc.record({
    agents: fc.subarray(AGENTS),
    linked_users: fc.subarray(USERS),
    shared: fc.boolean(),
    browsable: fc.boolean(),
    addresses: id === 'console' ? fc.constant([]) : placeArb(id),
  }).map((c) => ({ id, kind: id === 'console' ? 'console' : 'chat', name: id, defaults: null, ...c }));

const inputArb: fc.Arbitrary<OperationsInput> = fc
  .record({
    channels: fc.tuple(channelArb('console'), channelArb('chat-a'), channelArb('chat-b')),
    agents: agentArb,
    user: fc.constantFrom(...USERS),
    threadChannel: fc.constantFrom('console', 'chat-a', 'chat-b'),
    agent: fc.option(fc.constantFrom(...AGENTS), { nil: null }),
    busy: fc.record({ turnRunning: fc.boolean(), approvals: fc.nat(2), questions: fc.nat(2), queued: fc.nat(2) }),
    moved: fc.option(fc.constantFrom('chat-a', 'console'), { nil: null }),
  })
  .map((r) => ({
    userId: r.user,
    thread: { id: 'thread-1', channel: r.threadChannel, title: 'T' },
    conversation: r.agent === null ? null : {
      agent: r.agent,
      address: null,
      moved_to: r.moved === null ? null : { thread_id: 'thread-2', conversation_id: 'conversation-2', address: { channel: r.moved, id: 'place' } },
    },
    channels: r.channels,
    agents: r.agents,
    busy: r.busy,
  }));

describe('teleport and summon availability', () => {
  it('property: a conversation that moved away offers neither move, and names where it went; else a busy thread says why', () => {
    fc.assert(fc.property(inputArb, (input) => {
      const ops = threadOperations(input);
      const moved = input.conversation?.moved_to ?? null;
      const expected = moved !== null ? movedReason(moved) : busyReason(input.busy);
      assert.equal(ops.teleport.reason, expected);
      assert.equal(ops.summon.reason, expected);
      if (moved !== null) assert.match(ops.teleport.reason!, new RegExp(`thread ${moved.thread_id}`));
    }));
  });

  it('property: only a place inside another place is a thread (new_thread: false lands there)', () => {
    fc.assert(fc.property(placeArb('chat-a'), (places) => {
      for (const place of places) {
        assert.equal(isThreadPlace(places, place.id), false, 'a top-level place is a room');
        for (const child of place.children) assert.equal(isThreadPlace(places, child.id), true);
      }
      assert.equal(isThreadPlace(places, 'nowhere'), false);
    }));
  });

  it('property: barred channels are never offered; their reasons name why', () => {
    fc.assert(fc.property(inputArb, (input) => {
      const ops = threadOperations(input);
      for (const channel of input.channels) {
        const expected = !channel.linked_users.includes(input.userId) || channel.agents.length === 0;
        assert.equal(channel.id in ops.barred, expected, channel.id);
      }
      for (const id of Object.keys(ops.barred)) {
        assert.ok(!(id in ops.teleport.routes) && !(id in ops.summon.routes), `${id} is barred but routed`);
        assert.ok(!ops.teleport.destinations.some((d) => d.channel === id), `${id} is barred but suggested`);
      }
    }));
  });

  it("property: teleport keeps the conversation's agent; every suggested destination has a route", () => {
    fc.assert(fc.property(inputArb, (input) => {
      const ops = threadOperations(input);
      for (const routes of Object.values(ops.teleport.routes)) for (const r of routes) assert.equal(r.agent, input.conversation?.agent);
      for (const d of ops.teleport.destinations) {
        assert.ok((ops.teleport.routes[d.channel] ?? []).length > 0, `${d.channel} suggested without a route`);
        assert.ok(d.metadata.barred === undefined, 'a barred place is never suggested');
      }
      assert.equal(ops.teleport.here, null);
      const suggestsConsole = ops.teleport.destinations.some((d) => d.channel === 'console');
      if (suggestsConsole) assert.notEqual(input.thread.channel, 'console');
      if (suggestsConsole) assert.deepEqual(ops.teleport.destinations.find((d) => d.channel === 'console'), NEW_CONSOLE_THREAD);
    }));
  });

  it('property: summon offers every other agent on the conversation own channel, here where it is', () => {
    fc.assert(fc.property(inputArb, (input) => {
      const ops = threadOperations(input);
      assert.deepEqual(ops.summon.here, ops.source);
      assert.deepEqual(ops.summon.destinations, []);
      const channels = Object.keys(ops.summon.routes);
      assert.ok(channels.length <= 1);
      if (channels.length === 1) {
        assert.equal(channels[0], input.thread.channel);
        const own = input.channels.find((c) => c.id === input.thread.channel)!;
        const agents = new Set(ops.summon.routes[channels[0]!]!.map((r) => r.agent));
        assert.ok(!agents.has(input.conversation!.agent));
        assert.deepEqual([...agents].sort(), own.agents.filter((a) => a !== input.conversation!.agent).sort());
      }
    }));
  });

  it('property: a reason exactly when the conversation moved away, a turn runs, or approvals or questions wait, on both operations', () => {
    fc.assert(fc.property(inputArb, (input) => {
      const ops = threadOperations(input);
      const busy = input.busy.turnRunning || input.busy.approvals > 0 || input.busy.questions > 0 || input.busy.queued > 0;
      assert.equal(ops.teleport.reason !== null, busy || input.conversation?.moved_to != null);
      assert.equal(ops.summon.reason, ops.teleport.reason);
    }));
  });

  it('opens one level of places by their inside value', () => {
    const channel: Channel = {
      id: 'c', kind: 'chat', name: 'c', shared: true, browsable: true, agents: ['claude'], defaults: null, linked_users: ['alice'],
      addresses: [{ id: 'g', name: '#g', shared: true, inside: 'g', barred: null, children: [{ id: 'g/1', name: 't', shared: true, inside: null, barred: null, children: [] }] }],
    };
    assert.deepEqual(placesInside(channel, null)!.map((p) => p.id), ['g']);
    assert.deepEqual(placesInside(channel, 'g')!.map((p) => p.id), ['g/1']);
    assert.equal(placesInside(channel, 'nope'), null);
  });
});
