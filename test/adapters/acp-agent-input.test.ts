import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as acp from '@agentclientprotocol/sdk';
import fc from 'fast-check';
import pino from 'pino';
import { agentInput, MAX_HOLD_MS, type Limit } from '../../adapters/acp/agent-input.ts';
import { type AgentProcess, startAgentProcess } from '../../adapters/acp/agent-process.ts';
import { agentTurn } from '../../adapters/acp/agent-turn.ts';
import { unredacted } from '../../adapters/acp/agent-diagnostics.ts';
import type { Agent } from '../../domain/model.ts';
import type { TurnRequest, TurnUpdate } from '../../ports/agent-runner.ts';
import { waitFor } from '../support/wait-for.ts';

/** Lets every pending macrotask and its microtasks run, `turns` times over. */
const settle = async (turns = 10) => {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** A promise and its resolver and rejecter. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((done, fail) => {
    resolve = done;
    reject = fail;
  });
  return { promise, resolve, reject };
}

/** A time limit the test ends itself, with what was asked of it. */
function manualLimits() {
  const asked: { ms: number; cancelled: boolean; end: () => void }[] = [];
  const limit = (ms: number): Limit => {
    const ended = deferred();
    const entry = { ms, cancelled: false, end: () => ended.resolve() };
    asked.push(entry);
    return { done: ended.promise, cancel: () => void (entry.cancelled = true) };
  };
  return { asked, limit };
}

const text = (pieces: readonly Uint8Array[]) => Buffer.concat(pieces).toString('utf8');

describe("an agent's output as the SDK reads it (adapters/acp/agent-input.ts)", () => {
  /** Everything a reader gets until the end, piece by piece. */
  const readAll = async (reader: ReadableStreamDefaultReader<Uint8Array>) => {
    const pieces: Uint8Array[] = [];
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return pieces;
      pieces.push(value);
    }
  };

  /** An armed input given `lines` in one write, its first line read: the moment a turn's first update would hold it. */
  const armedAfterFirst = async (lines: string, limit?: (ms: number) => Limit) => {
    const stdout = new PassThrough();
    const input = agentInput(stdout, limit);
    const disarm = input.arm();
    const reader = input.readable.getReader();
    stdout.write(lines);
    await reader.read();
    return { stdout, input, reader, disarm };
  };

  /** The reader's next read, started now: null until it has come. */
  const nextRead = (reader: ReadableStreamDefaultReader<Uint8Array>) => {
    let next: string | null = null;
    void reader.read().then(({ value }) => (next = text([value!])));
    return () => next;
  };

  it('hands on every byte in order, whatever the chunks: armed, a line (or what has come of one) per read', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.string({ unit: fc.constantFrom('a', 'é', '\n', '{', '"') }), { maxLength: 12 }), fc.boolean(), async (chunks, arm) => {
        const stdout = new PassThrough();
        const input = agentInput(stdout);
        if (arm) input.arm();
        const reader = input.readable.getReader();
        for (const chunk of chunks) stdout.write(chunk);
        // Read before the end (at the end, what is left goes on at once): armed pieces are cut at line ends.
        const bytes = Buffer.byteLength(chunks.join(''));
        const pieces: Uint8Array[] = [];
        for (let got = 0; got < bytes; got += pieces.at(-1)!.length) pieces.push((await reader.read()).value!);
        stdout.end();
        assert.equal((await reader.read()).done, true);
        assert.equal(text(pieces), chunks.join(''));
        if (arm) for (const piece of pieces) assert.ok(!Buffer.from(piece).subarray(0, -1).includes(0x0a), 'armed: one line per read');
      }),
      { numRuns: 200 },
    );
  });

  it('not armed, all that has arrived goes in one read (the rate of a fast stream is not one line per event-loop turn)', async () => {
    const stdout = new PassThrough();
    const reader = agentInput(stdout).readable.getReader();
    stdout.write('a\nb\nc\n');
    await settle(2);
    assert.equal(text([(await reader.read()).value!]), 'a\nb\nc\n');
  });

  it('a hold keeps the next line back until what it waits for settles; the lines after it then go on', async () => {
    const { input, reader, disarm } = await armedAfterFirst('{"n":1}\n{"n":2}\n{"n":3}\n{"n":4}\n');
    const stored = deferred();
    input.hold(stored.promise);
    disarm();
    const next = nextRead(reader);
    await settle();
    assert.equal(next(), null, 'nothing read while the first line is delivered');
    stored.resolve();
    await settle();
    assert.equal(next(), '{"n":2}\n{"n":3}\n{"n":4}\n', 'then, disarmed, the rest at once');
  });

  it('holds that overlap: reading goes on once none is left, and a failed delivery ends its hold too', async () => {
    const { input, reader } = await armedAfterFirst('a\nb\n');
    const one = deferred();
    const two = deferred();
    // The delivery's own failure is its caller's to handle: here it only ends the hold.
    two.promise.catch(() => {});
    input.hold(one.promise);
    input.hold(two.promise);
    const next = nextRead(reader);
    one.resolve();
    await settle();
    assert.equal(next(), null, 'the second hold still stands');
    two.reject(new Error('the store failed'));
    await settle();
    assert.equal(next(), 'b\n');
  });

  it(`a hold ends after ${MAX_HOLD_MS} ms whatever it waits for, and its limit is let go once what it waits for settles`, async () => {
    const { asked, limit } = manualLimits();
    const { input, reader } = await armedAfterFirst('a\nb\nc\n', limit);
    input.hold(new Promise(() => {}));
    const next = nextRead(reader);
    await settle();
    assert.equal(next(), null);
    assert.deepEqual(asked.map((a) => a.ms), [MAX_HOLD_MS]);
    asked[0]!.end();
    await settle();
    assert.equal(next(), 'b\n', 'read on once the limit has passed');
    const stored = deferred();
    input.hold(stored.promise);
    stored.resolve();
    await settle();
    assert.equal(asked[1]!.cancelled, true, 'a settled hold lets its timer go');
    assert.equal(text([(await reader.read()).value!]), 'c\n');
  });

  it('once the output has ended, what is left goes on at once, a hold or not; then the stream ends and is drained', async () => {
    const { stdout, input, reader } = await armedAfterFirst('a\nb\nc\n');
    input.hold(new Promise(() => {}));
    let drained = false;
    void input.drained.then(() => (drained = true));
    stdout.end('d');
    assert.equal(text(await readAll(reader)), 'b\nc\nd');
    await settle(1);
    assert.equal(drained, true);
  });

  it('a pipe closed without an end (its process killed) ends the stream', async () => {
    const stdout = new PassThrough();
    const input = agentInput(stdout);
    const reader = input.readable.getReader();
    stdout.write('a\n');
    stdout.destroy();
    assert.equal(text(await readAll(reader)), 'a\n');
    await input.drained;
  });

  it('stops reading the pipe while more than a MiB waits unread, reads it again once it is taken, every byte in order', async () => {
    const stdout = new PassThrough({ highWaterMark: 1 << 21 });
    const input = agentInput(stdout);
    input.arm();
    const reader = input.readable.getReader();
    const lines = Array.from({ length: 1100 }, (_, i) => `${String(i).padStart(1023, 'x')}\n`);
    stdout.write(lines.join(''));
    await settle(2);
    assert.equal(stdout.isPaused(), true, 'the pipe is not read past the cap');
    const pieces: Uint8Array[] = [];
    while (stdout.isPaused()) pieces.push((await reader.read()).value!);
    assert.ok(pieces.length >= 1100 - 1024 && pieces.length <= 1100, `read again once under the cap (after ${pieces.length} lines)`);
    stdout.end();
    pieces.push(...(await readAll(reader)));
    assert.equal(text(pieces), lines.join(''));
  });

  it('an error reaches the reader after what came before it', async () => {
    const failing = new PassThrough();
    const reader = agentInput(failing).readable.getReader();
    failing.write('x\n');
    await settle(2);
    failing.destroy(new Error('EPIPE'));
    assert.equal(text([(await reader.read()).value!]), 'x\n');
    await assert.rejects(reader.read(), /EPIPE/);
  });

  it('a reader that gives up lets the pipe go, as Readable.toWeb does', async () => {
    const stdout = new PassThrough();
    const input = agentInput(stdout);
    await input.readable.getReader().cancel();
    assert.equal(stdout.destroyed, true);
    await input.drained;
  });
});

describe("a turn holds its agent's output while its first update is delivered (a real process, the SDK between)", () => {
  const BURST = fileURLToPath(new URL('../support/burst-acp-agent.mjs', import.meta.url));
  const agent = { id: 'burst' } as Agent;
  const silent = pino({ level: 'silent' });

  /** A turn's request whose first text update is delivered only once `firstStored` resolves, and the others once `restStored` does. */
  function request(prompt: string, firstStored: Promise<void>, delivered: string[], restStored: Promise<void> = Promise.resolve()): TurnRequest {
    return {
      agent, sessionId: null, cwd: tmpdir(), prompt, mode: null, model: null, effort: null,
      onSession: () => {},
      onUpdate: async (update: TurnUpdate) => {
        if (update.kind !== 'text') return;
        await (delivered.length === 0 ? firstStored : restStored);
        delivered.push(update.text);
      },
      onPermission: async () => ({ outcome: 'cancelled' }) as never,
    };
  }

  /** What the SDK has parsed of each session's updates (handed to the session's route), delivered yet or not. */
  function parsedBy(proc: AgentProcess): string[] {
    const parsed: string[] = [];
    const get = proc.routes.get.bind(proc.routes);
    proc.routes.get = (sessionId) => {
      const route = get(sessionId);
      return route && {
        update: (update: acp.SessionUpdate) => {
          if (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text') parsed.push(update.content.text);
          route.update(update);
        },
        permission: (asked: acp.RequestPermissionRequest) => route.permission(asked),
      };
    };
    return parsed;
  }

  it("the agent's next lines are not parsed until the first is stored and published; then all come, in order", { timeout: 20_000 }, async () => {
    const proc = await startAgentProcess([process.execPath, BURST], silent, { env: {} });
    try {
      const parsed = parsedBy(proc);
      const firstStored = deferred();
      const delivered: string[] = [];
      const turn = agentTurn({ proc, redact: unredacted }, request('go', firstStored.promise, delivered), { log: silent });
      await waitFor(() => parsed.length > 0, { what: 'the first chunk parsed' });
      await settle(20);
      assert.deepEqual(parsed, ['go one'], 'the lines after the first wait, unparsed, while it is delivered');
      firstStored.resolve();
      assert.equal((await turn).stopReason, 'end_turn');
      assert.deepEqual(parsed, ['go one', 'go two', 'go three']);
      assert.deepEqual(delivered, ['go one', 'go two', 'go three']);
    } finally {
      await proc.stop();
    }
  });

  it('an agent that answers and exits at once: its answer and every update are read, though the first was still being stored', { timeout: 20_000 }, async () => {
    const proc = await startAgentProcess([process.execPath, BURST, 'exit'], silent, { env: {} });
    const firstStored = deferred();
    const delivered: string[] = [];
    const turn = agentTurn({ proc, redact: unredacted }, request('bye', firstStored.promise, delivered), { log: silent });
    await proc.exited;
    firstStored.resolve();
    assert.equal((await turn).stopReason, 'end_turn', 'answered, not "the agent process exited"');
    assert.deepEqual(delivered, ['bye one', 'bye two', 'bye three']);
  });

  it('beside another turn on the same process, a turn holds nothing: the hold is only for a process\'s one turn', { timeout: 20_000 }, async () => {
    const proc = await startAgentProcess([process.execPath, BURST], silent, { env: {} });
    try {
      let holds = 0;
      const hold = proc.holdInput;
      (proc as { holdInput: AgentProcess['holdInput'] }).holdInput = (until) => {
        holds++;
        hold(until);
      };
      // The first turn runs on (its later updates not yet stored) while the second starts, runs and ends.
      const aRest = deferred();
      const aDelivered: string[] = [];
      const a = agentTurn({ proc, redact: unredacted }, request('a', Promise.resolve(), aDelivered, aRest.promise), { log: silent });
      await waitFor(() => aDelivered.length === 1, { what: "the first turn's first update" });
      assert.equal(holds, 1, 'the first turn, alone, held');
      const bDelivered: string[] = [];
      await agentTurn({ proc, redact: unredacted }, request('b', Promise.resolve(), bDelivered), { log: silent });
      aRest.resolve();
      await a;
      assert.equal(holds, 1, 'the second turn, beside the first, did not hold');
      assert.deepEqual(aDelivered, ['a one', 'a two', 'a three']);
      assert.deepEqual(bDelivered, ['b one', 'b two', 'b three']);
    } finally {
      await proc.stop();
    }
  });
});
