import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isInLedger, ledgerSegments, type ForkLink } from '../../domain/ledger-visibility.ts';
import { canAccessThread } from '../../domain/thread-access.ts';
import { channelRoutes, routeId, uuid7Time } from '../../domain/vocabulary.ts';
import { testId } from '../support/ids.ts';

interface Tree {
  links: ForkLink[];
  messages: { thread_id: string; id: string }[];
}

/** A random fork forest: each thread may fork an earlier one at one of that thread's visible messages. */
const treeArb: fc.Arbitrary<Tree> = fc
  .array(fc.record({ count: fc.integer({ min: 0, max: 5 }), parent: fc.nat(), cut: fc.nat(), fork: fc.boolean() }), { minLength: 1, maxLength: 6 })
  .map((shape) => {
    let clock = 0;
    const links: ForkLink[] = [];
    const messages: Tree['messages'] = [];
    shape.forEach((spec, index) => {
      const id = testId(clock++);
      const parent = index > 0 && spec.fork ? links[spec.parent % index]! : null;
      const visible = parent === null ? [] : model({ links, messages }, parent.id);
      const cutoff = visible.length === 0 ? null : visible[spec.cut % visible.length]!;
      links.push({ id, fork_of: parent?.id ?? null, fork_cutoff: parent === null ? null : cutoff });
      for (let i = 0; i < spec.count; i++) messages.push({ thread_id: id, id: testId(clock++) });
    });
    return { links, messages };
  });

/** The rule as the contract states it, recursively: own messages, plus the parent's visible ones up to the cutoff. */
function model(tree: Tree, threadId: string): string[] {
  const link = tree.links.find((l) => l.id === threadId)!;
  const own = tree.messages.filter((m) => m.thread_id === threadId).map((m) => m.id);
  const inherited = link.fork_of === null || link.fork_cutoff === null ? [] : model(tree, link.fork_of).filter((id) => id <= link.fork_cutoff!);
  return [...own, ...inherited].sort();
}

/** The chain of a thread as a store answers it: the thread, then its ancestors. */
const chainOf = (tree: Tree, threadId: string): ForkLink[] => {
  const chain: ForkLink[] = [];
  for (let l = tree.links.find((x) => x.id === threadId); l; l = l.fork_of === null ? undefined : tree.links.find((x) => x.id === l!.fork_of)) chain.push(l);
  return chain;
};

describe('ledger visibility across forks', () => {
  it('property: the segments select exactly what the recursive rule shows, for chains of forks too', () => {
    fc.assert(
      fc.property(treeArb, (tree) => {
        for (const link of tree.links) {
          const segments = ledgerSegments(chainOf(tree, link.id));
          const visible = tree.messages.filter((m) => isInLedger(segments, m)).map((m) => m.id).sort();
          assert.deepEqual(visible, model(tree, link.id));
        }
      }),
    );
  });

  it('a fork of a fork sees the grandparent only up to the tighter cutoff', () => {
    const [a, b, c] = [testId(1), testId(2), testId(3)];
    const segments = ledgerSegments([
      { id: c, fork_of: b, fork_cutoff: testId(50) },
      { id: b, fork_of: a, fork_cutoff: testId(20) },
      { id: a, fork_of: null, fork_cutoff: null },
    ]);
    assert.deepEqual(segments, [{ thread_id: c, upTo: null }, { thread_id: b, upTo: testId(50) }, { thread_id: a, upTo: testId(20) }]);
  });

  it('a cycle or a missing parent ends the chain; a fork without a cutoff inherits nothing', () => {
    const [a, b] = [testId(1), testId(2)];
    assert.equal(ledgerSegments([{ id: a, fork_of: b, fork_cutoff: testId(9) }, { id: b, fork_of: a, fork_cutoff: testId(9) }]).length, 2);
    assert.equal(ledgerSegments([{ id: a, fork_of: b, fork_cutoff: testId(9) }]).length, 1);
    assert.equal(ledgerSegments([{ id: a, fork_of: b, fork_cutoff: null }, { id: b, fork_of: null, fork_cutoff: null }]).length, 1);
    assert.deepEqual(ledgerSegments([]), []);
  });
});

describe('thread access', () => {
  it('property: exactly the owner and the members', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.array(fc.string()), (user, owner, members) => {
        assert.equal(canAccessThread(user, { owner }, members), user === owner || members.includes(user));
      }),
    );
  });
});

describe('vocabularies', () => {
  it('routes are agent:model per model, or the agent alone', () => {
    const agents = [
      { id: 'claude', models: ['opus'], efforts: [], permission_modes: ['default'], default_permission_mode: 'default', steering: false, command: null },
      { id: 'codex', models: [], efforts: [], permission_modes: ['auto'], default_permission_mode: 'auto', steering: false, command: null },
    ];
    const channel = { id: 'console', kind: 'console', name: 'C', shared: false, browsable: false, agents: ['codex', 'claude', 'ghost'], defaults: null, linked_users: [], addresses: [] };
    assert.deepEqual(channelRoutes(channel, agents), [
      { id: 'codex', agent: 'codex', model: null },
      { id: 'claude:opus', agent: 'claude', model: 'opus' },
    ]);
    assert.equal(routeId('a', 'b'), 'a:b');
  });

  it('property: a UUIDv7 carries its creation time', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), (n) => {
        assert.equal(uuid7Time(testId(n)), new Date(Date.UTC(2026, 0, 1) + n).toISOString());
      }),
    );
  });
});
