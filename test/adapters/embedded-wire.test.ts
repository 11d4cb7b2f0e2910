import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { MEMORY_DATA_DIR, startEmbeddedPostgres, type EmbeddedPostgres } from '../../adapters/embedded/pglite-server.ts';
// @ts-expect-error: plain JavaScript, run in the database's thread; its JSDoc types its exports.
import { endsIdle, isBegin, takeMessages } from '../../adapters/embedded/pglite-wire.mjs';

// The embedded database's socket (adapters/embedded/pglite-wire.mjs): one PGlite session served to
// several connections, each batch of a connection's messages in one database call, the session held
// for one connection until its answer ends idle.

/** A protocol message: its type byte, its length, its body. */
function message(type: string, ...parts: (Buffer | string | number)[]): Buffer {
  const body = Buffer.concat(parts.map((part) => {
    if (typeof part === 'string') return Buffer.from(`${part}\0`);
    if (typeof part === 'number') {
      const b = Buffer.alloc(2);
      b.writeInt16BE(part);
      return b;
    }
    return part;
  }));
  const head = Buffer.alloc(5);
  head.write(type, 0);
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}
const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
function startup(): Buffer {
  const body = Buffer.concat([int32(196608), Buffer.from('user\0postgres\0database\0postgres\0\0')]);
  return Buffer.concat([int32(body.length + 4), body]);
}
const parse = (sql: string) => message('P', '', sql, 0);
const bind = (value: string) => message('B', '', '', 0, 1, int32(Buffer.byteLength(value)), Buffer.from(value), 0);
const execute = () => message('E', '', int32(0));
const sync = () => message('S');

/** A raw connection to the socket, reading whole messages. */
class Raw {
  private received = Buffer.alloc(0);
  private waiters: (() => void)[] = [];
  private constructor(readonly socket: Socket) {
    socket.on('data', (data: Buffer) => {
      this.received = Buffer.concat([this.received, data]);
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  static async open(db: EmbeddedPostgres): Promise<Raw> {
    const url = new URL(db.url);
    const socket = connect(join(decodeURIComponent(url.hostname), `.s.PGSQL.${url.port}`));
    await once(socket, 'connect');
    return new Raw(socket);
  }

  /** Waits until the messages received hold one of `type`; answers them (up to it), taken off. */
  async until(type: string): Promise<{ type: string; body: Buffer }[]> {
    for (;;) {
      const messages: { type: string; body: Buffer }[] = [];
      let at = 0;
      while (this.received.length - at >= 5 && this.received.length - at >= 1 + this.received.readInt32BE(at + 1)) {
        const length = this.received.readInt32BE(at + 1);
        messages.push({ type: String.fromCharCode(this.received[at]!), body: this.received.subarray(at + 5, at + 1 + length) });
        at += 1 + length;
        if (messages.at(-1)!.type === type) {
          this.received = this.received.subarray(at);
          return messages;
        }
      }
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }
}

/** The text of a DataRow's first column. */
const firstColumn = (row: Buffer) => row.subarray(6, 6 + row.readInt32BE(2)).toString();

describe('the embedded database socket', () => {
  let db: EmbeddedPostgres;
  before(async () => {
    db = await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR, maxConnections: 8 });
    const client = new pg.Client(db.url);
    await client.connect();
    await client.query('create table wire_rows (id int primary key)');
    await client.end();
  });
  after(() => db.close());

  const client = async () => {
    const c = new pg.Client(db.url);
    await c.connect();
    return c;
  };

  it('a statement begun by one connection is finished before another connection is served (the unnamed statement is its own)', { timeout: 30_000 }, async () => {
    const other = await client();
    const raw = await Raw.open(db);
    try {
      raw.socket.write(startup());
      await raw.until('Z');
      // Half an extended exchange: the Parse is in the session, its Bind and Execute not yet. Longer than the
      // statements the socket keeps plans for (statement-cache.mjs), so it is the session's own unnamed statement.
      const long = `select $1::int + 1 as n -- ${'x'.repeat(9000)}`;
      raw.socket.write(Buffer.concat([parse(long), message('H')])); // Flush: its ParseComplete comes back
      await raw.until('1');
      // The other connection's statement (unnamed too, and also too long to keep) would replace it if it were served now.
      const answered = other.query(`select $1::int * 10 as n -- ${'y'.repeat(9000)}`, [7]);
      let otherDone = false;
      void answered.then(() => (otherDone = true));
      // The other connection waits: the session is held until this one's exchange ends idle. (A real interval: what is
      // asserted is that nothing happens in it.)
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(otherDone, false, 'the other connection is not served mid-exchange');
      raw.socket.write(Buffer.concat([bind('41'), execute(), sync()]));
      const row = (await raw.until('Z')).find((m) => m.type === 'D');
      assert.equal(firstColumn(row!.body), '42', 'its own statement, not the other connection\'s');
      assert.equal((await answered).rows[0]!.n, 70);
      await other.end();
    } finally {
      raw.socket.destroy();
    }
  });

  it('a transaction on one connection keeps the others waiting until it commits', { timeout: 30_000 }, async () => {
    const a = await client();
    const b = await client();
    try {
      await a.query('begin');
      await a.query('insert into wire_rows values (1)');
      let seenAt: number | undefined;
      const counted = b.query('select count(*)::int as n from wire_rows').then((r) => {
        seenAt = Date.now();
        return r.rows[0]!.n as number;
      });
      await a.query('insert into wire_rows values (2)');
      assert.equal(seenAt, undefined, 'the other connection is not served inside the transaction');
      await a.query('commit');
      assert.equal(await counted, 2);
    } finally {
      await a.query('delete from wire_rows');
      await a.end();
      await b.end();
    }
  });

  it('a connection that goes away inside a transaction, or halfway through a failed exchange, leaves the session clean', { timeout: 30_000 }, async () => {
    const a = await client();
    a.on('error', () => {}); // its socket is cut below
    await a.query('begin');
    await a.query('insert into wire_rows values (3)');
    (a as unknown as { connection: { stream: Socket } }).connection.stream.destroy();
    const raw = await Raw.open(db);
    raw.socket.write(startup());
    await raw.until('Z');
    // An error in an extended exchange: the session skips what follows until a Sync, which never comes.
    raw.socket.write(Buffer.concat([parse('select nonsense from nowhere'), message('H')]));
    await raw.until('E');
    raw.socket.destroy();
    const b = await client();
    try {
      assert.equal((await b.query('select count(*)::int as n from wire_rows')).rows[0]!.n, 0, 'rolled back');
      assert.equal((await b.query('select $1::int + 1 as n', [1])).rows[0]!.n, 2, 'served, not skipped');
    } finally {
      await b.end();
    }
  });

  it('answers an SSL request "N" and a connection over the cap a clear error (53300)', { timeout: 30_000 }, async () => {
    const small = await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR, maxConnections: 2 });
    const held: InstanceType<typeof pg.Client>[] = [];
    try {
      const raw = await Raw.open(small);
      raw.socket.write(Buffer.concat([int32(8), int32(80877103)]));
      const [first] = await once(raw.socket, 'data') as [Buffer];
      assert.equal(first.toString(), 'N');
      for (let i = 0; i < 1; i++) {
        const c = new pg.Client(small.url);
        await c.connect();
        held.push(c);
      }
      const over = new pg.Client(small.url);
      await assert.rejects(over.connect(), (error: { code?: string; message: string }) => error.code === '53300' && /too many connections/.test(error.message));
      // Refused as PostgreSQL refuses: nothing is said before the client's startup packet (answered at once, the
      // error met a driver still writing its startup, which then saw EPIPE, not why), an SSL request is answered
      // "N", and the error follows the startup packet, then the end.
      const url = new URL(small.url);
      const late = connect(join(decodeURIComponent(url.hostname), `.s.PGSQL.${url.port}`));
      await once(late, 'connect');
      const heard: Buffer[] = [];
      late.on('data', (data: Buffer) => heard.push(data));
      const ended = once(late, 'close');
      late.write(Buffer.concat([int32(8), int32(80877103)]));
      while (heard.length === 0) await once(late, 'data');
      assert.equal(Buffer.concat(heard).toString('latin1'), 'N', 'an SSL request is answered first, the error only after the startup packet');
      late.write(startup());
      await ended;
      const refusal = Buffer.concat(heard).subarray(1);
      assert.equal(String.fromCharCode(refusal[0]!), 'E');
      assert.match(refusal.toString('latin1'), /C53300\0Mtoo many connections/);
      raw.socket.destroy();
    } finally {
      await Promise.all(held.map((c) => c.end()));
      await small.close();
    }
  });

  it('a begin answered at once still opens the transaction its statements run in: rolled back, nothing stays; committed, all of it', { timeout: 30_000 }, async () => {
    const a = await client();
    try {
      await a.query('begin');
      await a.query('insert into wire_rows values (10)');
      await a.query('rollback');
      assert.equal((await a.query('select count(*)::int as n from wire_rows')).rows[0]!.n, 0);
      await a.query('begin');
      await a.query('insert into wire_rows values (11)');
      await a.query('insert into wire_rows values (12)');
      await a.query('commit');
      assert.equal((await a.query('select count(*)::int as n from wire_rows')).rows[0]!.n, 2);
      await a.query('begin');
      await a.query('commit');
      // Left idle: another connection is served.
      const b = await client();
      assert.equal((await b.query('select 1 as n')).rows[0]!.n, 1);
      await b.end();
    } finally {
      await a.query('delete from wire_rows');
      await a.end();
    }
  });

  it('a statement of several megabytes, sent in many chunks, arrives whole', { timeout: 60_000 }, async () => {
    const c = await client();
    try {
      const big = 'x'.repeat(5 * 1024 * 1024) + 'end';
      const { rows } = await c.query('select length($1::text) as n, right($1::text, 3) as tail', [big]);
      assert.equal(rows[0]!.n, big.length);
      assert.equal(rows[0]!.tail, 'end');
      assert.equal((await c.query('select 1 as n')).rows[0]!.n, 1, 'and the next statement after it');
    } finally {
      await c.end();
    }
  });

  it('many statements from several connections at once each get their own answer', { timeout: 60_000 }, async () => {
    const clients = await Promise.all([client(), client(), client()]);
    try {
      const wrong: string[] = [];
      await Promise.all(clients.map(async (c, k) => {
        for (let i = 0; i < 100; i++) {
          const { rows } = await c.query(`select $1::int + ${k} as n`, [i]);
          if (rows[0]!.n !== i + k) wrong.push(`${k}:${i}`);
        }
      }));
      assert.deepEqual(wrong, []);
    } finally {
      await Promise.all(clients.map((c) => c.end()));
    }
  });
});

describe('the socket\'s framing', () => {
  it('takes every complete message at the front in one slice, and keeps the rest', () => {
    const two = Buffer.concat([parse('select 1'), sync()]);
    const partial = parse('select 2').subarray(0, 6);
    const taken = takeMessages(Buffer.concat([two, partial]), true);
    assert.equal(taken.kind, 'messages');
    assert.deepEqual(taken.bytes, two);
    assert.deepEqual(taken.rest, partial);
    assert.equal(taken.terminate, false);
  });

  it('reads the startup packet alone, an SSL request apart, and stops at Terminate', () => {
    // The startup packet alone (PGlite reads only it from a call); what follows it is left for the next batch.
    const withQuery = takeMessages(Buffer.concat([startup(), message('Q', 'select 1')]), false);
    assert.equal(withQuery.kind, 'messages');
    assert.equal(withQuery.started, true);
    assert.deepEqual(withQuery.bytes, startup());
    assert.deepEqual(withQuery.rest, message('Q', 'select 1'));
    assert.equal(takeMessages(Buffer.concat([int32(8), int32(80877103)]), false).kind, 'negotiate');
    const ended = takeMessages(Buffer.concat([sync(), message('X'), sync()]), true);
    assert.equal(ended.terminate, true);
    assert.deepEqual(ended.bytes, sync());
    assert.throws(() => takeMessages(Buffer.concat([int32(8), int32(1234)]), false), /startup/);
  });

  it('tells a begin alone (answered at once, sent with the next batch) from anything else', () => {
    assert.equal(isBegin(message('Q', 'begin')), true);
    assert.equal(isBegin(message('Q', 'BEGIN;')), true);
    assert.equal(isBegin(message('Q', 'begin isolation level serializable')), false);
    assert.equal(isBegin(Buffer.concat([message('Q', 'begin'), sync()])), false);
    assert.equal(isBegin(message('Q', 'commit')), false);
  });

  it('knows an answer that leaves the session idle from one inside a transaction', () => {
    const ready = (status: string) => Buffer.concat([Buffer.from('Z'), int32(5), Buffer.from(status)]);
    assert.equal(endsIdle(Buffer.concat([message('C', 'SELECT 1'), ready('I')])), true);
    assert.equal(endsIdle(ready('T')), false);
    assert.equal(endsIdle(ready('E')), false);
    assert.equal(endsIdle(message('1')), false);
  });
});
