// The checkpoint a fork starts its worktree from (domain/worktree.ts checkpointAt), as properties over random histories.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { checkpointAt } from '../../domain/worktree.ts';

const id = (n: number) => `id-${String(n).padStart(4, '0')}`;

/** Runs at even ids (their prompts just before them), messages anywhere; some runs checkpointed. */
const history = fc.record({
  runs: fc.array(fc.boolean(), { minLength: 0, maxLength: 10 }),
  base: fc.boolean(),
  message: fc.nat({ max: 40 }),
});

describe('checkpointAt', () => {
  it("is the checkpoint of the message's run (the one it started, else the latest begun before it), or the nearest earlier one, else the base", () => {
    fc.assert(fc.property(history, ({ runs, base, message }) => {
      const listed = runs.map((_, i) => ({ id: id(4 * i + 2), message_id: id(4 * i + 1) }));
      const checkpoints = [...(base ? [{ run_id: null, commit: 'base' }] : []), ...runs.flatMap((kept, i) => (kept ? [{ run_id: id(4 * i + 2), commit: `after-${i}` }] : []))];
      const got = checkpointAt(listed, id(message), checkpoints);
      // The run the message belongs to: the one whose prompt it is, else the latest started before it.
      let owner = listed.findIndex((run) => run.message_id === id(message));
      if (owner < 0) owner = listed.reduce((found, run, i) => (run.id <= id(message) ? i : found), -1);
      let expected: string | null = base ? 'base' : null;
      for (let i = owner; i >= 0; i -= 1) {
        if (runs[i]) {
          expected = `after-${i}`;
          break;
        }
      }
      assert.equal(got, expected);
    }));
  });

  it("a prompt queued before the previous run ended still takes its own run's checkpoint", () => {
    const runs = [{ id: id(2), message_id: id(1) }, { id: id(6), message_id: id(3) }];
    const checkpoints = [{ run_id: id(2), commit: 'after-first' }, { run_id: id(6), commit: 'after-second' }];
    assert.equal(checkpointAt(runs, id(3), checkpoints), 'after-second');
    assert.equal(checkpointAt(runs, id(4), checkpoints), 'after-first', "a reply of the first run written after the queued prompt");
  });
});
