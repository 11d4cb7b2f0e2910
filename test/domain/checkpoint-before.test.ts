// The checkpoint a rewind goes back to (domain/worktree.ts checkpointBefore), as properties over random histories.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { checkpointBefore } from '../../domain/worktree.ts';

/** A history: runs oldest first, each maybe rewound and maybe checkpointed, and maybe a checkpoint before the first. */
const history = fc.record({
  runs: fc.array(fc.record({ rewound: fc.boolean(), checkpointed: fc.boolean() }), { minLength: 1, maxLength: 12 }),
  base: fc.boolean(),
}).chain((h) => fc.record({ h: fc.constant(h), at: fc.nat({ max: h.runs.length - 1 }) }));

const build = ({ runs, base }: { runs: { rewound: boolean; checkpointed: boolean }[]; base: boolean }) => {
  const listed = runs.map((run, i) => ({ id: `run-${String(i).padStart(2, '0')}`, rewound: run.rewound }));
  const checkpoints = [
    ...(base ? [{ run_id: null, commit: 'base' }] : []),
    ...runs.flatMap((run, i) => (run.checkpointed ? [{ run_id: `run-${String(i).padStart(2, '0')}`, commit: `after-${i}` }] : [])),
  ];
  return { listed, checkpoints };
};

describe('checkpointBefore', () => {
  it('is the checkpoint of the latest earlier run kept that has one, else the base, else null', () => {
    fc.assert(fc.property(history, ({ h, at }) => {
      const { listed, checkpoints } = build(h);
      const got = checkpointBefore(listed, listed[at]!.id, checkpoints);
      let expected: string | null = h.base ? 'base' : null;
      for (let i = 0; i < at; i += 1) if (!h.runs[i]!.rewound && h.runs[i]!.checkpointed) expected = `after-${i}`;
      assert.equal(got, expected);
    }));
  });

  it("never answers a rewound run's checkpoint, nor one of the run itself or a later one", () => {
    fc.assert(fc.property(history, ({ h, at }) => {
      const { listed, checkpoints } = build(h);
      const got = checkpointBefore(listed, listed[at]!.id, checkpoints);
      if (got === null || got === 'base') return;
      const i = Number(got.slice('after-'.length));
      assert.ok(i < at && !h.runs[i]!.rewound);
    }));
  });

  it('answers null for a run that is not listed', () => {
    assert.equal(checkpointBefore([{ id: 'a', rewound: false }], 'b', [{ run_id: null, commit: 'base' }]), null);
  });
});
