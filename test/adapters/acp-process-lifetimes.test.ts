import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import type { AgentProcess } from '../../adapters/acp/agent-process.ts';
import { processLifetimes } from '../../adapters/acp/process-lifetimes.ts';

// Sandboxed agents have a process per working directory: idle ones end, and their count is bounded,
// but a process in use (a turn, or a session still opening) is never ended for either.

const log = pino({ level: 'silent' });

/** A process that records its own end and resolves `stopped` then. */
function fakeProcess(): { proc: AgentProcess; stopped: Promise<void>; ended: () => boolean } {
  let ended = false;
  let done!: () => void;
  const stopped = new Promise<void>((resolve) => (done = resolve));
  const proc = { alive: () => !ended, stop: async () => { ended = true; done(); } } as unknown as AgentProcess;
  return { proc, stopped, ended: () => ended };
}

describe('sandboxed process lifetimes', () => {
  it('ends a process nothing used for idleMs, and tells it was on purpose; never one in use', async () => {
    const told: string[] = [];
    const lifetimes = processLifetimes({ log, idleMs: 20, bound: 8, ended: (key) => told.push(key) });
    // The idle timers are unreferenced (they must not keep a server up): this keeps the test's loop up.
    const awake = setInterval(() => {}, 1_000);
    const busy = fakeProcess();
    const quiet = fakeProcess();
    let release!: () => void;
    const using = lifetimes.inUse('busy', () => new Promise<void>((resolve) => (release = resolve)));
    lifetimes.up('busy', busy.proc);
    lifetimes.up('quiet', quiet.proc);
    await quiet.stopped;
    assert.deepEqual(told, ['quiet']);
    assert.equal(busy.ended(), false, 'in use: not ended');
    release();
    await using;
    await busy.stopped;
    assert.deepEqual(told, ['quiet', 'busy']);
    clearInterval(awake);
    lifetimes.close();
  });

  it('at the bound, ends the least recently used process nothing uses; with all in use, none', async () => {
    const lifetimes = processLifetimes({ log, idleMs: 60_000, bound: 2, ended: () => {} });
    const a = fakeProcess();
    const b = fakeProcess();
    lifetimes.up('a', a.proc);
    lifetimes.up('b', b.proc);
    await lifetimes.inUse('a', async () => {});
    lifetimes.makeRoom(1);
    assert.equal(a.ended() || b.ended(), false, 'below the bound: nothing ends');
    lifetimes.makeRoom(2);
    assert.equal(b.ended(), true, 'b was used least recently');
    assert.equal(a.ended(), false);
    let release!: () => void;
    const using = lifetimes.inUse('a', () => new Promise<void>((resolve) => (release = resolve)));
    lifetimes.makeRoom(2);
    assert.equal(a.ended(), false, 'in use: kept, one more starts past the bound');
    release();
    await using;
    lifetimes.close();
  });
});
