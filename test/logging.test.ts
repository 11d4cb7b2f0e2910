import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Writable } from 'node:stream';
import pino from 'pino';
import { StorageUnavailableError } from '../ports/storage.ts';
import { createLogger, REDACTED, redactUrls, requestLine, safeError } from '../src/logging.ts';

describe('error logging', () => {
  it("keeps a database error's reason and drops its statement, where the driver inlined the values", () => {
    const error = Object.assign(
      new Error(`insert into "installations" ("headers") values ('{"Authorization":"Bearer provider-secret"}') - duplicate key value violates unique constraint`),
      { code: '23505' },
    );
    const logged = JSON.stringify(safeError(error));
    assert.ok(!logged.includes('provider-secret'));
    assert.match(logged, /duplicate key value/);
    assert.match(logged, /23505/);
  });

  /** A driver error as MikroORM throws it: the statement with its values, the reason, the detail line, and pg's fields. */
  const driverError = (statement: string, reason: string, detail: string, fields: Record<string, string> = {}) => Object.assign(
    new Error(`${statement} - ${reason}\n - detail: ${detail}`),
    { code: '23502', sqlState: '23502', severity: 'ERROR', routine: 'ExecConstraints', detail, ...fields },
  );

  it("a database error in an error's cause keeps its type, code and reason, never the statement or the detail", () => {
    const cause = driverError(`insert into "users" ("id", "name") values ('u1', 'cause-secret')`,
      'null value in column "name" of relation "users" violates not-null constraint', 'Failing row contains (u1, detail-secret).', { column: 'name', table: 'users' });
    const wrapped = new StorageUnavailableError({ cause });
    const logged = safeError(wrapped) as { type: string; message: string; stack: string; cause: unknown };
    const text = JSON.stringify(logged);
    assert.ok(!text.includes('cause-secret') && !text.includes('detail-secret') && !text.includes('insert into'), text);
    assert.equal(logged.type, 'StorageUnavailableError');
    assert.match(logged.stack, /logging.test/);
    assert.deepEqual(logged.cause, { type: 'Error', code: '23502', message: 'null value in column "name" of relation "users" violates not-null constraint' });
  });

  it('walks the whole chain of causes and the errors of an AggregateError', () => {
    const deep = driverError(`update "runs" set "error" = 'deep-secret'`, 'value too long for type character varying(20)', 'none');
    const chain = new Error('outer', { cause: new Error('middle', { cause: new AggregateError([deep, new Error('plain')], 'both', { cause: deep }) }) });
    const text = JSON.stringify(safeError(chain));
    assert.ok(!text.includes('deep-secret'), text);
    assert.match(text, /outer.*middle.*both/);
    assert.equal(text.match(/value too long for type character varying\(20\)/g)?.length, 2, 'the aggregate and its cause');
    assert.match(text, /"message":"plain"/);
  });

  it('cuts circular and very long chains', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    Object.assign(a, { cause: b });
    assert.match(JSON.stringify(safeError(a)), /\[circular\]/);
    let long: Error = driverError(`insert into t values ('far-secret')`, 'boom', 'x');
    for (let i = 0; i < 50; i++) long = new Error(`level ${i}`, { cause: long });
    const text = JSON.stringify(safeError(long));
    assert.match(text, /\[causes cut\]/);
    assert.ok(!text.includes('far-secret'));
  });

  it("keeps the reason's object names and replaces the values it quotes; a ' - ' inside a value is not the reason's start", () => {
    const value = driverError(`select 'uuid-secret - x'::uuid`, 'invalid input syntax for type uuid: "uuid-secret - x"', 'none');
    assert.equal((safeError(value) as { message: string }).message, 'invalid input syntax for type uuid: "[value]"');
    const quoted = driverError(`insert into "users" ("name") values ('it''s - "q-secret" - yes')`,
      'duplicate key value violates unique constraint "users_pkey"', 'Key (name)=(q-secret) already exists.', { constraint: 'users_pkey' });
    assert.equal((safeError(quoted) as { message: string }).message, 'duplicate key value violates unique constraint "users_pkey"');
    // pg's own error, no statement in front: its message is the reason.
    const bare = Object.assign(new Error('invalid input value for enum run_status: "bare-secret"'), { code: '22P02', severity: 'ERROR', routine: 'enum_in' });
    assert.deepEqual(safeError(bare), { type: 'Error', code: '22P02', message: 'invalid input value for enum run_status: "[value]"' });
  });

  it('is pure: a frozen error is read, never written', () => {
    const error = Object.freeze(new StorageUnavailableError({ cause: Object.freeze(new Error('inner')) }));
    const logged = safeError(error) as { cause: { message: string } };
    assert.equal(logged.cause.message, 'inner');
    assert.deepEqual(Object.getOwnPropertySymbols(error), []);
  });

  it('logs other errors in full, with their stack', () => {
    const logged = safeError(new Error('a bug')) as { message: string; stack: string };
    assert.equal(logged.message, 'a bug');
    assert.match(logged.stack, /logging.test/);
  });
});

describe('credentials in URLs are redacted from every log line', () => {
  it('redacts the password of user:password@ and the values of credential query parameters', () => {
    assert.equal(redactUrls('postgres://console:s3cret@db.internal:5432/console'), `postgres://console:${REDACTED}@db.internal:5432/console`);
    assert.equal(redactUrls('postgresql://u:p%40ss@h/db?sslmode=require&password=x'), `postgresql://u:${REDACTED}@h/db?sslmode=require&password=${REDACTED}`);
    assert.equal(redactUrls('a raw @ in it: postgres://u:p@ss@h/db'), `a raw @ in it: postgres://u:${REDACTED}@h/db`);
    for (const name of ['token', 'access_token', 'key', 'api_key', 'apiKey', 'password', 'secret', 'client_secret', 'auth', 'Authorization',
      'X-Amz-Signature', 'sig', 'code', 'session_id', 'passwd', 'pwd', 'credential', 'api%5Fkey']) {
      const line = redactUrls(`GET https://mcp.example/x?city=Paris&${name}=hunter2#top failed`);
      assert.ok(!line.includes('hunter2'), `${name}: ${line}`);
      assert.ok(line.includes('city=Paris') && line.includes(`${name}=${REDACTED}`), line);
    }
  });

  it('keeps what is not a credential: other parameters, a user alone, text without URLs', () => {
    for (const text of ['/api/console/live?thread=abc&after=3', '/api/console/threads?limit=50&before=x', 'ssh://git@example.com/repo',
      'a = b, c@d', 'http://127.0.0.1:8080/mcp', 'mode=plan effort=high']) {
      assert.equal(redactUrls(text), text);
    }
  });

  it('redacts a field named as a password whole, wherever it is, and keeps password_env (a variable name)', () => {
    const lines: string[] = [];
    const log = createLogger('debug', new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString('utf8')), done()) }));
    log.child({ options: { password: 'bind-pw-1' } }).info({ xmpp: { jid: 'console@localhost', password: 'xmpp-pw-1', password_env: 'XMPP_PASSWORD' }, botPassword: 'bot-pw-1', passwd: 'pw-2' }, 'connecting');
    const text = lines.join('');
    for (const secret of ['bind-pw-1', 'xmpp-pw-1', 'bot-pw-1', 'pw-2']) assert.ok(!text.includes(secret), `${secret} was logged: ${text}`);
    const line = JSON.parse(lines[0]!);
    assert.equal(line.xmpp.password, REDACTED);
    assert.equal(line.xmpp.password_env, 'XMPP_PASSWORD');
    assert.equal(line.xmpp.jid, 'console@localhost');
  });

  it('a captured logger never writes them: message, fields, nested values, URL objects, errors, bindings', () => {
    const lines: string[] = [];
    const log = createLogger('debug', new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString('utf8')), done()) }));
    const child = log.child({ target: '/cb?code=oauth-code-1' });
    child.info({ url: 'postgres://app:db-pass-1@db/app', nested: { list: ['https://h/mcp?api_key=key-1'] }, object: new URL('https://u:url-pass-1@h/x?token=tok-1') },
      'calling https://h/x?access_token=tok-2 now');
    child.warn({ err: Object.assign(new Error('connect ECONNREFUSED postgres://app:db-pass-2@db/app'), { url: 'http://h/?secret=sec-1' }) }, 'failed');
    child.error(new Error('fetch https://u:url-pass-2@h/mcp?password=pw-1 failed', { cause: new Error('see https://h/?key=key-2') }));
    const text = lines.join('');
    for (const secret of ['oauth-code-1', 'db-pass-1', 'key-1', 'url-pass-1', 'tok-1', 'tok-2', 'db-pass-2', 'sec-1', 'url-pass-2', 'pw-1', 'key-2']) {
      assert.ok(!text.includes(secret), `${secret} was logged: ${text}`);
    }
    assert.equal(lines.length, 3);
    assert.match(text, /postgres:\/\/app:\[redacted\]@db\/app/);
    assert.match(text, /calling https:\/\/h\/x\?access_token=\[redacted\] now/);
    // The database-error rule still holds underneath.
    const sql = JSON.stringify(JSON.parse(lines[1]!).err);
    assert.match(sql, /ECONNREFUSED/);
  });
});

describe('the access line (requestLine)', () => {
  /** A logger on a captured stream, and the lines it wrote. */
  const captured = (level = 'info') => {
    const lines: string[] = [];
    const log = createLogger(level, new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString('utf8')), done()) }));
    return { log, lines };
  };
  const withoutTime = (line: string) => line.replace(/,"time":\d+,/, ',"time":0,');

  it("writes the very bytes pino's generic path writes for the same fields, but the time", () => {
    const cases: [string, string, string, number, number, boolean][] = [
      ['0192f1d2-3c4d-4e5f-8a9b-0c1d2e3f4a5b', 'GET', '/artifacts/sandbox.js', 200, 0.3, false],
      ['trace-1', 'POST', '/api/console/threads/x/directives', 201, 12, false],
      ['trace.2_x', 'HEAD', '/a "quoted" \\ path/é\u0001', 404, 1.5, true],
      // A path a client chose, with what looks like a credential in it: redacted as every line is.
      ['trace-3', 'GET', '/cb;token=tok-secret-1/x@y', 421, 0, false],
      ['trace-4', 'DELETE', `/${'long/'.repeat(40)}`, 500, 1234.5, true],
    ];
    for (const [reqId, method, path, status, ms, aborted] of cases) {
      const fast = captured();
      requestLine(fast.log)(reqId, method, path, status, ms, aborted);
      const generic = captured();
      generic.log.info({ reqId, method, path, status, ms, aborted: aborted || undefined }, 'request');
      assert.equal(fast.lines.length, 1);
      assert.equal(withoutTime(fast.lines[0]!), withoutTime(generic.lines[0]!));
      const parsed = JSON.parse(fast.lines[0]!);
      assert.equal(parsed.msg, 'request');
      assert.equal(parsed.level, 30);
      assert.equal(typeof parsed.time, 'number');
      assert.equal(parsed.pid, process.pid);
      assert.deepEqual([parsed.reqId, parsed.method, parsed.status, parsed.ms, parsed.aborted], [reqId, method, status, ms, aborted || undefined]);
      assert.ok(!fast.lines[0]!.includes('tok-secret-1'));
    }
  });

  it('writes nothing below its level, and follows a level changed later', () => {
    const { log, lines } = captured('warn');
    const line = requestLine(log);
    line('id-1', 'GET', '/x', 200, 1, false);
    assert.equal(lines.length, 0);
    log.level = 'info';
    line('id-2', 'GET', '/x', 200, 1, false);
    assert.equal(lines.length, 1);
  });

  it("falls back to pino's own path for a logger it cannot write for (a mixin), with the same fields", () => {
    const lines: string[] = [];
    const log = pino({ mixin: () => ({ extra: 1 }) }, new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString('utf8')), done()) }));
    requestLine(log)('id-3', 'GET', '/y', 200, 2, false);
    const parsed = JSON.parse(lines[0]!);
    assert.deepEqual([parsed.reqId, parsed.path, parsed.status, parsed.extra, parsed.msg], ['id-3', '/y', 200, 1, 'request']);
  });
});
