import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { boundedLogStream, dropNotices, forReader } from '../src/log-stream.ts';
import { createLogger } from '../src/logging.ts';

/** A stream whose reader stalls until `resume()`: every write waits for it. */
function stalledStream() {
  const held: (() => void)[] = [];
  let stalled = true;
  const taken: string[] = [];
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      taken.push(chunk.toString('utf8'));
      if (stalled) held.push(done);
      else done();
    },
  });
  return { out, taken, resume: () => { stalled = false; for (const done of held.splice(0)) done(); } };
}

const LINE = `${JSON.stringify({ level: 30, msg: 'x'.repeat(90) })}\n`;

describe('the bounded log stream', () => {
  it('a stalled reader: lines past the bound are dropped whole and counted, the queue stays bounded, a drain gives up', async () => {
    const { out, resume, taken } = stalledStream();
    const stream = boundedLogStream(out, 10 * LINE.length);
    for (let i = 0; i < 100; i++) stream.write(LINE);
    assert.ok(out.writableLength <= 10 * LINE.length, `queued ${out.writableLength}`);
    assert.equal(stream.dropped(), 90);
    await stream.drain(20); // gives up: the reader still stalls
    resume();
    await stream.drain(5_000);
    assert.equal(out.writableLength, 0);
    assert.ok(taken.every((chunk) => chunk === LINE), 'only whole lines');
    stream.write(LINE);
    assert.equal(stream.dropped(), 90, 'a reader that reads again takes lines again');
  });

  it('a reader that went away (EPIPE) crashes nothing: its lines are dropped', () => {
    const out = new Writable({ write: (_chunk, _encoding, done) => done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })) });
    const stream = boundedLogStream(out);
    stream.write(LINE);
    return new Promise<void>((resolve) => setImmediate(() => {
      stream.write(LINE);
      assert.equal(stream.dropped(), 1);
      resolve();
    }));
  });

  it('says once per notice that lines were dropped, and how many, only when some were', () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({ write(chunk: Buffer, _encoding, done) { lines.push(JSON.parse(chunk.toString('utf8'))); done(); } });
    let dropped = 0;
    const notice = dropNotices({ dropped: () => dropped }, createLogger('info', sink));
    notice();
    dropped = 7;
    notice();
    notice();
    dropped = 9;
    notice();
    assert.deepEqual(lines.map((line) => [line.dropped, line.droppedTotal, line.level]), [[7, 7, 40], [2, 9, 40]]);
  });
});

describe('the log for its reader (docs/operations.md, "Log lines")', () => {
  const collect = () => {
    const lines: string[] = [];
    return { lines, stream: { write: (line: string) => void lines.push(line), dropped: () => 0, drain: async () => {} } };
  };

  it('on a terminal, a line for a person: the level and the message, not JSON, the fields kept', async () => {
    const { lines, stream } = collect();
    createLogger('info', await forReader(stream, true)).info({ url: 'http://localhost:8080' }, 'console service listening');
    assert.equal(lines.length, 1);
    assert.throws(() => JSON.parse(lines[0]!));
    const plain = lines[0]!.replace(/\x1b\[[0-9;]*m/g, '');
    assert.match(plain, /INFO.*console service listening/);
    assert.match(plain, /url: "http:\/\/localhost:8080"/);
  });

  it('anywhere else, JSON lines as pino writes them: every line parses', async () => {
    const { lines, stream } = collect();
    const log = createLogger('info', await forReader(stream, false));
    log.info({ url: 'http://localhost:8080' }, 'console service listening');
    log.warn('second');
    assert.deepEqual(lines.map((line) => JSON.parse(line).msg), ['console service listening', 'second']);
  });
});
