import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as acp from '@agentclientprotocol/sdk';
import fc from 'fast-check';
import pino from 'pino';
import { agentInput, MAX_HOLD_MS, type Limit } from '../../adapters/acp/agent-input.ts';
import { startAgentProcess } from '../../adapters/acp/agent-process.ts';
import { openTurnRoute } from '../../adapters/acp/turn-route.ts';
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
  it('hands on every byte in order, a line (or what has come of one) per read, whatever the chunks', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.string({ unit: fc.constantFrom('a', 'é', '\n', '{', '"') }), { maxLength: 12 }), async (chunks) => {
        const stdout = new PassThrough();
        const reader = agentInput(stdout).readable.getReader();
        for (const chunk of chunks) stdout.write(chunk);
        stdout.end();
        const pieces: Uint8Array[] = [];
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          pieces.push(value);
        }
        assert.equal(text(pieces), chunks.join(''));
        // No piece holds a line end but at its end: each line goes on alone.
        for (const piece of pieces) assert.ok(!Buffer.from(piece).subarray(0, -1).includes(0x0a));
      }),
      { numRuns: 200 },
    );
  });

  it('a hold keeps the next line back until what it waits for settles; the lines after it then go on', async () => {
    const stdout = new PassThrough();
    const input = agentInput(stdout);
    const reader = input.readable.getReader();
    stdout.write('{"n":1}\n{"n":2}\n{"n":3}\n');
    assert.equal(text([(await reader.read()).value!]), '{"n":1}\n');
    const stored = deferred();
    input.hold(stored.promise);
    let second: string | null = null;
    void reader.read().then(({ value }) => (second = text([value!])));
    await settle();
    assert.equal(second, null, 'nothing read while the first line is delivered');
    stored.resolve();
    await settle();
    assert.equal(second, '{"n":2}\n');
    assert.equal(text([(await reader.read()).value!]), '{"n":3}\n');
  });

  it('holds that overlap: reading goes on once none is left, and a failed delivery ends its hold too', async () => {
    const stdout = new PassThrough();
    const input = agentInput(stdout);
    const reader = input.readable.getReader();
    stdout.write('a\nb\n');
    await reader.read();
    const one = deferred();
    const two = deferred();
    // The delivery's own failure is its caller's to handle: here it only ends the hold.
    two.promise.catch(() => {});
    input.hold(one.promise);
    input.hold(two.promise);
    let next: string | null = null;
    void reader.read().then(({ value }) => (next = text([value!])));
    one.resolve();
    await settle();
    assert.equal(next, null, 'the second hold still stands');
    two.reject(new Error('the store failed'));
    await settle();
    assert.equal(next, 'b\n');
  });

  it(`a hold ends after ${MAX_HOLD_MS} ms whatever it waits for, and its limit is let go once what it waits for settles`, async () => {
    const stdout = new PassThrough();
    const { asked, limit } = manualLimits();
    const input = agentInput(stdout, limit);
    const reader = input.readable.getReader();
    stdout.write('a\nb\nc\n');
    await reader.read();
    input.hold(new Promise(() => {}));
    let next: string | null = null;
    void reader.read().then(({ value }) => (next = text([value!])));
    await settle();
    assert.equal(next, null);
    assert.deepEqual(asked.map((a) => a.ms), [MAX_HOLD_MS]);
    asked[0]!.end();
    await settle();
    assert.equal(next, 'b\n', 'read on once the limit has passed');
    const stored = deferred();
    input.hold(stored.promise);
    stored.resolve();
    await settle();
    assert.equal(asked[1]!.cancelled, true, 'a settled hold lets its timer go');
    assert.equal(text([(await reader.read()).value!]), 'c\n');
  });

  it('stops reading the pipe while more than a MiB waits unread, and reads it again once it is taken', async () => {
    const stdout = new PassThrough({ highWaterMark: 1 << 21 });
    const reader = agentInput(stdout).readable.getReader();
    const line = `${'x'.repeat(1023)}\n`;
    stdout.write(line.repeat(1100));
    await settle(2);
    assert.equal(stdout.isPaused(), true, 'the pipe is not read past the cap');
    let read = 0;
    while (stdout.isPaused()) {
      await reader.read();
      read++;
    }
    assert.ok(read >= 1100 - 1024 && read <= 1100, `read again once under the cap (after ${read} lines)`);
  });

  it('ends when the output ends, after the last piece; an error reaches the reader after what came before it', async () => {
    const ending = new PassThrough();
    const endingReader = agentInput(ending).readable.getReader();
    ending.end('last line without an end');
    assert.equal(text([(await endingReader.read()).value!]), 'last line without an end');
    assert.equal((await endingReader.read()).done, true);

    const failing = new PassThrough();
    const failingReader = agentInput(failing).readable.getReader();
    failing.write('x\n');
    failing.destroy(new Error('EPIPE'));
    assert.equal(text([(await failingReader.read()).value!]), 'x\n');
    await assert.rejects(failingReader.read(), /EPIPE/);
  });

  it('a reader that gives up lets the pipe go, as Readable.toWeb does', async () => {
    const stdout = new PassThrough();
    const reader = agentInput(stdout).readable.getReader();
    await reader.cancel();
    assert.equal(stdout.destroyed, true);
  });
});

describe('a turn holds its agent\'s output while its first update is delivered (a real process, the SDK between)', () => {
  const BURST = fileURLToPath(new URL('../support/burst-acp-agent.mjs', import.meta.url));

  it('the agent\'s next lines are not parsed until the first is stored and published; then all come, in order', { timeout: 20_000 }, async () => {
    const proc = await startAgentProcess([process.execPath, BURST], pino({ level: 'silent' }), { env: {} });
    try {
      const { sessionId } = await proc.agent.request(acp.methods.agent.session.new, { cwd: tmpdir(), mcpServers: [] });
      const firstStored = deferred();
      const delivered: string[] = [];
      const route = openTurnRoute(
        {
          onUpdate: async (update) => {
            if (update.kind !== 'text') return;
            if (delivered.length === 0) await firstStored.promise;
            delivered.push(update.text);
          },
          onPermission: async () => ({ outcome: 'cancelled' }) as never,
        },
        pino({ level: 'silent' }),
        undefined,
        proc.holdInput,
      );
      // What the SDK has parsed and handed on, whether delivered yet or not.
      const parsed: string[] = [];
      proc.routes.set(sessionId, {
        update: (update) => {
          if (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text') parsed.push(update.content.text);
          route.update(update);
        },
        permission: (request) => route.permission(request),
      });
      const answered = proc.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'go' }] });
      await waitFor(() => parsed.length > 0, { what: 'the first chunk parsed' });
      await settle(20);
      assert.deepEqual(parsed, ['one'], 'the lines after the first wait, unparsed, while it is delivered');
      assert.deepEqual(delivered, []);
      firstStored.resolve();
      assert.equal((await answered).stopReason, 'end_turn');
      await route.settle();
      assert.deepEqual(parsed, ['one', 'two', 'three']);
      assert.deepEqual(delivered, ['one', 'two', 'three']);
    } finally {
      await proc.stop();
    }
  });
});
